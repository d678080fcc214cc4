/**
 * Whether this replica can reach its PostgreSQL server, for gRPC health (NOT_SERVING while it
 * cannot) and the log. A call that finds the server unreachable marks it down at once; a probe
 * (`SELECT 1` on a connection of its own, outside the pool, so a busy pool never looks like an
 * outage) then runs every `DOWN_PROBE_MS` until it answers, and marks it up again. While up, the
 * probe runs every `UP_PROBE_MS`, so an outage is noticed without traffic too. A probe that fails
 * without saying the server is gone (a connect or query timeout: a loaded machine, not an outage)
 * marks it down only when the next probe, `DOWN_PROBE_MS` later, fails too.
 *
 * Calls never wait for the monitor: during an outage each one tries the database itself and
 * fails fast (a refused connection, or `connectionTimeoutMillis`), and the first call after the
 * server's return succeeds — recovery needs no probe and no restart.
 */
import type { Client, ClientConfig } from 'pg';
import { classifyFailure } from './pg-errors';

/** Probe interval while the database is reachable. */
export const UP_PROBE_MS = 2000;
/** Probe interval while it is not: how soon health turns SERVING again after its return. */
export const DOWN_PROBE_MS = 200;

export class PostgresHealth {
  private up = true;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  /** Consecutive failed probes. */
  private failures = 0;
  private closed = false;
  private client: Client | undefined;

  constructor(
    private readonly clientConfig: ClientConfig,
    /** Told on every change: false with the failure that revealed it, true when the database answers again. */
    private readonly onChange: (available: boolean, error?: unknown) => void,
  ) {}

  /** Whether the database answered the last call or probe. */
  get available(): boolean {
    return this.up;
  }

  /** Start probing periodically. */
  start(): void {
    this.schedule(UP_PROBE_MS);
  }

  /** A call or the pool found the server unreachable. */
  reportUnreachable(error: unknown): void {
    if (this.closed) return;
    if (this.up) {
      this.up = false;
      this.onChange(false, error);
    }
    this.schedule(DOWN_PROBE_MS);
  }

  /** Stop probing and close the probe's connection. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.dropClient();
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.probe(), ms);
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    let ok = false;
    let failure: unknown;
    try {
      if (!this.client) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const pg = require('pg') as typeof import('pg');
        const client = new pg.Client(this.clientConfig);
        // A connection that breaks while idle reports here (unhandled, it would end the process).
        client.on('error', () => void this.dropClient(client));
        this.client = client;
        await client.connect();
      }
      await this.client.query('SELECT 1');
      ok = true;
    } catch (err) {
      failure = err;
      await this.dropClient();
    } finally {
      this.probing = false;
    }
    if (this.closed) return;
    if (ok && !this.up) {
      this.up = true;
      this.onChange(true);
    } else if (!ok && this.up && (this.failures >= 1 || classifyFailure(failure) === 'unreachable')) {
      this.up = false;
      this.onChange(false, failure);
    }
    this.failures = ok ? 0 : this.failures + 1;
    this.schedule(this.up && this.failures === 0 ? UP_PROBE_MS : DOWN_PROBE_MS);
  }

  private async dropClient(which: Client | undefined = this.client): Promise<void> {
    if (!which) return;
    if (which === this.client) this.client = undefined;
    await which.end().catch(() => {});
  }
}
