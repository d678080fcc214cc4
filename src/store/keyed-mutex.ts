/**
 * One task at a time per key, in arrival order, within this process. For writes that the
 * database serialises per key anyway (an account's revision counter is a row lock on
 * PostgreSQL): queueing them here, before they take a pooled connection, keeps a burst of one
 * account's writes from holding every connection of the pool while they wait for each other —
 * other accounts' calls would otherwise wait for a connection behind them and time out.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Run `task` once every earlier task of `key` has settled; its result. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    try {
      await previous;
      return await task();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
