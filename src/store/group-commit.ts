/**
 * Group commit: writes requested during the same turn of the event loop are flushed together
 * (one transaction, multi-row statements), and each caller's promise settles only after its
 * batch is committed, so durability is unchanged while the per-write cost is shared.
 */
export class GroupCommit<T> {
  private queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private scheduled = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    /** Most items per flush (a larger queue is flushed in several batches). */
    private readonly maxBatch = 500,
  ) {}

  /** Queue `item`; resolves once it is committed. */
  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.run());
      }
    });
  }

  private async run(): Promise<void> {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.flush(batch.map((b) => b.item));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
  }
}
