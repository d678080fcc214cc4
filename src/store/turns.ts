/**
 * Long writes in slices. SQLite's driver is synchronous: a transaction's statements never wait,
 * so its awaits never let another request in, and one large write holds the whole process (found
 * by QA: a 1,000,000-row bulk ingest, the documented maximum, blocked every other request for
 * 4–7 s, and deleting that entity for 1–2 s). Such writes give the event loop a turn every
 * `ROWS_PER_TURN` rows, inside their transaction: other requests read committed data on their own
 * connection meanwhile, and writes wait for the transaction as before (all or nothing unchanged).
 * Large reads that many requests make at once (a query's series) take turns (`TurnGate`).
 */

/** Rows written or deleted between two turns of the event loop given to other requests. */
export const ROWS_PER_TURN = 10_000;

/**
 * One-row statements between two turns (the drift worker's state writes). Why: found by QA, one
 * ingest scored for 1,000 subscriptions × 32 axes wrote 32,000 states in one commit, 1.5 s of
 * blocked process.
 */
export const STATEMENTS_PER_TURN = 500;

/** Let the event loop serve pending I/O (other requests) before going on. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs tasks one per turn of the event loop, in arrival order: for reads a synchronous driver makes
 * (SQLite), so that many started together (a query's 32 series of 30,000 values each: 5 s, found by
 * QA) let other requests in between them instead of running back to back.
 */
export class TurnGate {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(nextTurn).then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
