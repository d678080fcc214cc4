/**
 * Group commit: a write starts a flush at once (at the end of the current microtask queue) when
 * none is running; writes requested while a flush runs are flushed together after it (one
 * transaction, multi-row statements). Each caller's promise settles only after its batch is
 * committed, so durability is unchanged while the per-write cost is shared under load, and a
 * lone write does not wait for the next turn of the event loop.
 */
import { outsideCalls } from './commit-hook';

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
        // A batch serves many calls: it runs none's commit hook (store/commit-hook.ts).
        outsideCalls(() => queueMicrotask(() => void this.run()));
      }
    });
  }

  private async run(): Promise<void> {
    // `scheduled` stays set until the queue is empty: writes that arrive meanwhile join the next batch of this loop.
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.flush(batch.map((b) => b.item));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.scheduled = false;
  }
}
