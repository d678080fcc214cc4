/**
 * How many of something are in progress per key, in this process (a webhook account's attempts in
 * flight, an account's open bulk streams): what per-key concurrency limits read. A key back at 0
 * is dropped, so the map holds only keys with work in progress.
 */
export class InFlight {
  private readonly counts = new Map<string, number>();

  /** In progress for `key`. */
  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** What the keys in progress could still start under a limit of `n` each: Σ max(0, n − count). */
  spare(n: number): number {
    let sum = 0;
    for (const c of this.counts.values()) sum += Math.max(0, n - c);
    return sum;
  }

  /** The keys with at least `n` in progress. */
  atLeast(n: number): string[] {
    return [...this.counts].filter(([, c]) => c >= n).map(([key]) => key);
  }

  /** Count one more for `key`; returns what counts it off again (once, however often called). */
  enter(key: string): () => void {
    this.counts.set(key, this.count(key) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const c = this.count(key) - 1;
      if (c > 0) this.counts.set(key, c);
      else this.counts.delete(key);
    };
  }
}
