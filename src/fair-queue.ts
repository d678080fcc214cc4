/**
 * Work waiting for a thread, served one owner (an account) at a time in turn: the next item is
 * the oldest of the owner served longest ago. Why: one account's depth query queues a fit per
 * entity (up to a thousand); first come, first served made another account's one fit wait for
 * all of them (measured in the fourteenth session's note). Items are objects, each queued once, and can be
 * taken back (a caller that went away) in constant time.
 */
export class FairQueue<T extends object> {
  /** Owners in the order they are served next (a Map keeps insertion order), each with its items in order. */
  private readonly owners = new Map<string, Set<T>>();
  private count = 0;

  /** Items queued. */
  get size(): number {
    return this.count;
  }

  /** Queue `item` behind `owner`'s others (an owner with none queued joins the end of the line). */
  push(owner: string, item: T): void {
    let items = this.owners.get(owner);
    if (!items) this.owners.set(owner, (items = new Set()));
    items.add(item);
    this.count++;
  }

  /** Take the next item (see the class comment); undefined when none is queued. */
  shift(): T | undefined {
    const next = this.owners.entries().next();
    if (next.done) return undefined;
    const [owner, items] = next.value;
    const item = items.values().next().value as T;
    items.delete(item);
    this.count--;
    // the owner goes to the end of the line, if it has more
    this.owners.delete(owner);
    if (items.size > 0) this.owners.set(owner, items);
    return item;
  }

  /** Take `item` back; false when it is not queued (already taken, or never queued). */
  delete(owner: string, item: T): boolean {
    const items = this.owners.get(owner);
    if (!items?.delete(item)) return false;
    this.count--;
    if (items.size === 0) this.owners.delete(owner);
    return true;
  }
}
