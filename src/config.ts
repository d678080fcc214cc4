/**
 * Configuration, read once from the environment into a typed object (STYLE 9). Loaders take
 * `env` as a parameter so tests inject their own.
 */


/** A client stream may be larger than one JSON body: up to this many of them. */
const STREAM_BODIES = 64;
/** Default budget of request bytes still arriving: four streams at the default body limit. */
const PENDING_REQUEST_BYTES = 256 * 1024 * 1024;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Config {
  /** REST gateway port (`HTTP_PORT`, default 8080; 0 = any free port). */
  readonly httpPort: number;
  /** gRPC port (`GRPC_PORT`, default 50051; 0 = any free port). */
  readonly grpcPort: number;
  /** Address both servers bind (`HOST`, default 127.0.0.1; `0.0.0.0` to serve other hosts). */
  readonly host: string;
  /** `sqlite:PATH` (default `sqlite:./data/forecast.db`) or `postgres://…` (`DATABASE_URL`). */
  readonly databaseUrl: string;
  /** `LOG_LEVEL`: debug, info (default), warn, error, silent. */
  readonly logLevel: LogLevel;
  /** Milliseconds to drain in-flight calls on SIGTERM before forcing (`SHUTDOWN_GRACE_MS`, default 10000). */
  readonly shutdownGraceMs: number;
  /** Maximum JSON body in bytes (`MAX_BODY_BYTES`, default 1 MiB, API.md section 12). */
  readonly maxBodyBytes: number;
  /**
   * Maximum gRPC message in bytes (4 MiB, API.md section 12): a larger one is 413
   * `payload_too_large` (gRPC RESOURCE_EXHAUSTED) with the usual error details.
   */
  readonly maxGrpcMessageBytes: number;
  /**
   * Most bytes of one client stream, either protocol (64 JSON bodies: 64 MiB by default): a
   * stream is held whole until it commits (and to fingerprint it for idempotency), so an endless
   * or slow one is refused with 413 instead of filling memory.
   */
  readonly maxStreamBytes: number;
  /**
   * Most bytes of requests still arriving, both protocols together (`MAX_PENDING_REQUEST_BYTES`,
   * default 256 MiB, or one stream's limit if that is more): a request that takes the total over
   * it is refused with 503 `unavailable` and `Retry-After: 1` (transport/request-intake.ts), so
   * that clients holding requests half-sent cannot exhaust memory. At least one stream's limit.
   */
  readonly maxPendingRequestBytes: number;
  /**
   * Shares of that budget (transport/request-intake.ts), derived from it, each with room for one
   * stream at its limit (`share`): one paying account's requests half of it (over it 429 `quota_exceeded`,
   * `Retry-After: 1`), one free account's a quarter (the same), all free accounts' together half,
   * requests not claimed by an account (before authentication, public methods) a quarter (over
   * those, the 503): no account, nor the free tier, nor anonymous callers, can keep the others'
   * uploads out.
   */
  readonly pendingRequestShares: { readonly account: number; readonly freeAccount: number; readonly freeTier: number; readonly unclaimed: number };
  /**
   * Longest a client may keep the server waiting for a request's next bytes, in ms
   * (`REQUEST_IDLE_TIMEOUT_MS`, default 30000): a body's or a message's (then the call fails with
   * 504 `deadline_exceeded` and its bytes are let go), and over REST a request's headers in all,
   * a body no API route reads (the sign-up form's) and a new connection's first bytes (then the
   * connection is closed). A time between bytes, not
   * a total: a long bulk ingest that keeps arriving is never cut.
   */
  readonly requestIdleTimeoutMs: number;
  /**
   * Most open connections on each port (`MAX_CONNECTIONS`, default 4096). At the limit, a client
   * (an IPv4 address or an IPv6 /64) holding fewer than the biggest holder less one still gets in,
   * and one of the biggest holder's is closed for it (its oldest idle one, else its oldest); any
   * other new one is closed at once (transport/connection-cap.ts). Idle ones close on their own
   * (REST: after REQUEST_IDLE_TIMEOUT_MS without a first request, 65 s of keep-alive; gRPC: 60 s
   * without a call).
   */
  readonly maxConnections: number;
  /** Public base URL used in links (`PUBLIC_BASE_URL`, default `http://HOST:HTTP_PORT`). */
  readonly publicBaseUrl?: string;
  /**
   * The master key sealing secrets at rest (`MASTER_KEY`: 32 bytes as base64 or hex), or a file
   * holding it (`MASTER_KEY_FILE`). Neither: a key file beside the SQLite database, created on
   * first start; required with PostgreSQL (`store/master-key.ts`).
   */
  readonly masterKey?: string;
  readonly masterKeyFile?: string;
  /**
   * Origins browsers may call the REST API from (`CORS_ORIGINS`, comma-separated, e.g.
   * `https://app.example.com,http://localhost:3000`; `*` for any). Default: none (no CORS
   * headers). Credentials (cookies) are never allowed.
   */
  readonly corsOrigins: readonly string[];
  /**
   * gzip/deflate REST answers of 1 KiB and more for clients that accept it (`COMPRESSION`,
   * on|off, default off: it costs every call, and most answers are small or pass a reverse
   * proxy that compresses anyway).
   */
  readonly compression: boolean;
  /** PostgreSQL: most connections per replica (`DATABASE_POOL_SIZE`, default 10). */
  readonly databasePoolSize: number;
  /**
   * PostgreSQL: longest a statement may run, in ms, before the server cancels it and the call
   * answers 503 (`DATABASE_STATEMENT_TIMEOUT_MS`, default 30000; 0 = no limit).
   */
  readonly databaseStatementTimeoutMs: number;
  /**
   * PostgreSQL: longest a call waits for a connection, new or from a busy pool, in ms, before it
   * answers 503 (`DATABASE_CONNECT_TIMEOUT_MS`, default 3000).
   */
  readonly databaseConnectTimeoutMs: number;
  /**
   * Webhook retry base interval in ms (`WEBHOOK_RETRY_BASE_MS`, default 5000): the first retry's
   * delay; the later ones scale with it (5 s, 5 min, 30 min, 2 h, 5 h at the default).
   */
  readonly webhookRetryBaseMs: number;
  /** Allow plain `http://` webhook URLs (`WEBHOOK_ALLOW_HTTP=true`; default false: https only). */
  readonly webhookAllowHttp: boolean;
  /**
   * Allow webhook URLs that reach loopback, private, link-local and other non-public addresses
   * (`WEBHOOK_ALLOW_PRIVATE=true`; default false).
   */
  readonly webhookAllowPrivate: boolean;
  /**
   * Networks allowed despite the guard, e.g. `127.0.0.0/8,::1/128` (`WEBHOOK_ALLOW_CIDRS`, comma
   * separated; default none): a narrower opening than WEBHOOK_ALLOW_PRIVATE.
   */
  readonly webhookAllowCidrs: readonly string[];
  /** How long one webhook attempt may take in ms (`WEBHOOK_TIMEOUT_MS`, default 10000). */
  readonly webhookTimeoutMs: number;
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** The whole number in `env[name]` (at least `min`), or `fallback` when unset or empty; throws with the variable's name on a bad value. */
export function envInteger(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${raw}`);
  return n;
}

/** Read the configuration from `env`; throws with the variable's name on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name} must be a port number 0..65535, got ${raw}`);
    return n;
  };
  const integer = (name: string, fallback: number, min: number): number => envInteger(env, name, fallback, min);
  const logLevel = (env.LOG_LEVEL ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${env.LOG_LEVEL}`);
  const grace = Number(env.SHUTDOWN_GRACE_MS ?? 10000);
  if (!Number.isFinite(grace) || grace < 0) throw new Error(`SHUTDOWN_GRACE_MS must be a non-negative number`);
  const maxBody = Number(env.MAX_BODY_BYTES ?? 1024 * 1024);
  if (!Number.isInteger(maxBody) || maxBody <= 0) throw new Error(`MAX_BODY_BYTES must be a positive integer`);
  // The budget must hold one whole stream at its limit, or such a stream could never arrive.
  const pendingBytes = integer('MAX_PENDING_REQUEST_BYTES', Math.max(PENDING_REQUEST_BYTES, maxBody * STREAM_BODIES), maxBody * STREAM_BODIES);
  const corsOrigins = (env.CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter((o) => o !== '');
  for (const o of corsOrigins) {
    if (o !== '*' && !isOrigin(o)) throw new Error(`CORS_ORIGINS: ${JSON.stringify(o)} is not an origin (scheme://host[:port], no path) or *`);
  }
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/forecast.db';
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    // the scheme only: the rest of a URL may hold a password
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(databaseUrl)?.[0] ?? 'no scheme';
    throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got ${scheme}`);
  }
  // Printed in the OpenAPI document's servers and in links: a page of the site may show it.
  const publicBaseUrl = env.PUBLIC_BASE_URL || undefined;
  if (publicBaseUrl !== undefined && !isBaseUrl(publicBaseUrl)) {
    // (credentials given by mistake are not repeated into a log, as DATABASE_URL's are not)
    const shown = publicBaseUrl.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@').slice(0, 100);
    throw new Error(`PUBLIC_BASE_URL must be an http:// or https:// URL without credentials, query or fragment, got ${JSON.stringify(shown)}`);
  }
  const compressionFlag = (env.COMPRESSION ?? 'off').toLowerCase();
  if (compressionFlag !== 'on' && compressionFlag !== 'off') throw new Error(`COMPRESSION must be on or off, got ${env.COMPRESSION}`);
  const positive = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
    return n;
  };
  const flag = (name: string): boolean => {
    const raw = (env[name] ?? '').toLowerCase();
    if (raw === '' || raw === 'false' || raw === '0') return false;
    if (raw === 'true' || raw === '1') return true;
    throw new Error(`${name} must be true or false, got ${env[name]}`);
  };
  return {
    httpPort: port('HTTP_PORT', 8080),
    grpcPort: port('GRPC_PORT', 50051),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    logLevel,
    shutdownGraceMs: grace,
    maxBodyBytes: maxBody,
    maxGrpcMessageBytes: 4 * 1024 * 1024,
    maxStreamBytes: maxBody * STREAM_BODIES,
    maxPendingRequestBytes: pendingBytes,
    pendingRequestShares: {
      account: share(pendingBytes, 1 / 2, maxBody * STREAM_BODIES),
      freeAccount: share(pendingBytes, 1 / 4, maxBody * STREAM_BODIES),
      freeTier: share(pendingBytes, 1 / 2, maxBody * STREAM_BODIES),
      unclaimed: share(pendingBytes, 1 / 4, maxBody * STREAM_BODIES),
    },
    requestIdleTimeoutMs: integer('REQUEST_IDLE_TIMEOUT_MS', 30_000, 1),
    maxConnections: integer('MAX_CONNECTIONS', 4096, 1),
    publicBaseUrl,
    masterKey: env.MASTER_KEY || undefined,
    masterKeyFile: env.MASTER_KEY_FILE || undefined,
    corsOrigins,
    compression: compressionFlag === 'on',
    databasePoolSize: integer('DATABASE_POOL_SIZE', 10, 1),
    databaseStatementTimeoutMs: integer('DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0),
    databaseConnectTimeoutMs: integer('DATABASE_CONNECT_TIMEOUT_MS', 3_000, 1),
    webhookRetryBaseMs: positive('WEBHOOK_RETRY_BASE_MS', 5000),
    webhookAllowHttp: flag('WEBHOOK_ALLOW_HTTP'),
    webhookAllowPrivate: flag('WEBHOOK_ALLOW_PRIVATE'),
    webhookAllowCidrs: (env.WEBHOOK_ALLOW_CIDRS ?? '').split(',').map((c) => c.trim()).filter(Boolean),
    webhookTimeoutMs: positive('WEBHOOK_TIMEOUT_MS', 10_000),
  };
}

/**
 * A share of the request budget: `fraction` of it, but room for one whole stream and a sixteenth
 * more (a stream's limit counts its messages, the budget the bytes that carry them: gRPC's 5-byte
 * frame headers, NDJSON's newlines), so that a stream at its limit is never refused for the share
 * and one over it gets its 413 first (found by review: a free account's share was exactly one
 * stream, and a gRPC stream at the limit got a 429 no retry could clear); never more than the
 * budget.
 */
function share(budget: number, fraction: number, stream: number): number {
  return Math.min(budget, Math.max(Math.floor(budget * fraction), stream + Math.ceil(stream / 16)));
}

/** Found by QA: `javascript:alert(1)` was taken. */
function isBaseUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && !url.search && !url.hash && !text.includes('#') && !text.includes('?');
  } catch {
    return false;
  }
}

function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}

/**
 * `DATABASE_URL` fit to print (the start-up banner, hints): a PostgreSQL password, in the user part
 * or a `password` parameter, shown as `***`. Found by QA: `forecast serve` printed the whole URL,
 * password included, to stdout, which usually ends up in a log.
 */
export function printableDatabaseUrl(url: string): string {
  if (url.startsWith('sqlite:')) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return `${/^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? ''}//…`; // unreadable: the scheme only
  }
}
