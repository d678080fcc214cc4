/**
 * A per-call hook run inside every write transaction of that call, right before COMMIT
 * (`Database.transaction`). The idempotency interceptor (`rpc/idempotency.ts`) uses it to record,
 * atomically with the handler's effect, that its claim's request has been applied: an outcome
 * that later fails to be recorded can then never lapse into a second execution.
 *
 * Why an AsyncLocalStorage and not a parameter: the hook must reach every transaction a handler
 * runs, through feature stores that know nothing of calls (STYLE 2: `rpc/` hands its concerns
 * down, features stay unaware). Work that outlives the call or serves many calls (group commits,
 * usage flushes, background loops) is started with `outsideCalls`, so it never runs a call's
 * hook; the hook also disables itself once its call has ended.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Transaction } from 'kysely';
import type { Schema } from './schema';

/** Runs in the transaction, after the caller's statements and before COMMIT; throwing rolls it back. */
export type CommitHook = (trx: Transaction<Schema>) => Promise<void>;

const current = new AsyncLocalStorage<CommitHook>();

/** Run `fn` with `hook` applied to each write transaction it (and what it awaits) runs. */
export function withCommitHook<T>(hook: CommitHook, fn: () => Promise<T>): Promise<T> {
  return current.run(hook, fn);
}

/** The hook of the call the current code runs for, if any. */
export function currentCommitHook(): CommitHook | undefined {
  return current.getStore();
}

/**
 * Run `fn` outside any call's hook: for scheduling work that is not the call's own effect (a
 * timer, a microtask or a loop started now inherits the current call otherwise).
 */
export function outsideCalls<T>(fn: () => T): T {
  return current.exit(fn);
}
