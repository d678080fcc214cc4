/**
 * Long writes in slices. SQLite's driver is synchronous: a transaction's statements never wait,
 * so its awaits never let another request in, and one large write holds the whole process (found
 * by QA: a 1,000,000-row bulk ingest, the documented maximum, blocked every other request for
 * 4–7 s, and deleting that entity for 1–2 s). Such writes give the event loop a turn every
 * `ROWS_PER_TURN` rows, inside their transaction: other requests read committed data on their own
 * connection meanwhile, and writes wait for the transaction as before (all or nothing unchanged).
 */

/** Rows written or deleted between two turns of the event loop given to other requests. */
export const ROWS_PER_TURN = 10_000;

/** Let the event loop serve pending I/O (other requests) before going on. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
