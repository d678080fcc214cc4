/**
 * Output whose reader has gone away: `forecast … | head -1`, or a log collector that stopped.
 * Node reports the failed write as an `error` event on `process.stdout`/`process.stderr`; with no
 * listener it is thrown from nowhere. A command then died with a stack trace, and the server did
 * worse (found by QA: `forecast serve 2>&1 | head -1`): the safety net logged the uncaught
 * exception to the closed stderr, which failed again, so it spun at full CPU, never listened and
 * ignored SIGTERM.
 */

/** Errors that mean "nobody reads this stream any more". */
const CLOSED = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

/**
 * Call `onClosed` once when one of `streams` loses its reader; its later writes are dropped.
 * A command passes `() => process.exit(141)` (stopped as by SIGPIPE, as a C tool would be); the
 * server passes nothing and keeps serving, without its output. Other errors are thrown as before.
 */
export function handleClosedOutput(streams: readonly NodeJS.WritableStream[], onClosed: () => void = () => {}): void {
  let closed = false;
  for (const stream of streams) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (!CLOSED.has(err.code ?? '')) throw err;
      if (closed) return;
      closed = true;
      onClosed();
    });
  }
}
