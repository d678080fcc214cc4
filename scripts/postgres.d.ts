// Types of scripts/postgres.js (plain CommonJS so scripts can run it without a build).

/** A local PostgreSQL server run as a child of this process. */
export interface PostgresServer {
  /** Directory of the server binaries (`…/postgresql/15/bin`). */
  readonly binDir: string;
  /** The cluster's data directory (also the Unix socket directory). */
  readonly dataDir: string;
  /** Loopback TCP port. */
  readonly port: number;
  /** Connection URL for `database` (default `postgres`) as the `postgres` superuser (trust auth). */
  url(database?: string): string;
  /** Start it again after `stop()` (same directory and port); resolves once it accepts connections. */
  start(): Promise<void>;
  /** Fast shutdown: active transactions rolled back, clients disconnected; resolves once it has exited. */
  stop(): Promise<void>;
  /** Stop it and remove its temporary directory. */
  destroy(): Promise<void>;
  /** The last lines of its log. */
  logTail(lines?: number): string;
}

export interface StartOptions {
  /** Keep the cluster in this directory (initdb when empty); default a temporary one, removed by `destroy()`. */
  readonly dataDir?: string;
  /** fsync as usual (default false: a throwaway server skips fsyncs). */
  readonly durable?: boolean;
  /** Default: a free loopback port. */
  readonly port?: number;
  /** More server settings, each passed as `-c name=value`. */
  readonly settings?: Readonly<Record<string, string>>;
}

/** Start a PostgreSQL server (installing Debian's `postgresql` first when it is missing). */
export function startPostgres(options?: StartOptions): Promise<PostgresServer>;
/** The server binaries' directory, installing the package when missing. */
export function ensureInstalled(): string;
/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number>;
