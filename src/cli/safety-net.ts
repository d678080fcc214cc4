/**
 * The server process's last line of defence: a promise rejection nobody handles, or an exception
 * thrown outside any call, is logged and the process keeps serving. Node's default (exit on an
 * unhandled rejection) would let one request take the service down for every tenant. Every such
 * event is a bug: the log line (`level: error`, `msg: "unhandled rejection"` or `"uncaught
 * exception"`) is what the fuzz suite looks for.
 */
import type { Logger } from '../log';

/** What the net listens on (the process, or a stand-in in tests). */
export interface ProcessEvents {
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  on(event: 'uncaughtException', listener: (error: Error) => void): unknown;
}

/** Log, never exit, on unhandled rejections and uncaught exceptions. Install once per process. */
export function installSafetyNet(events: ProcessEvents, log: Logger): void {
  events.on('unhandledRejection', (reason) => log.error('unhandled rejection', { error: reason }));
  events.on('uncaughtException', (error) => log.error('uncaught exception', { error }));
}
