/**
 * The fuzz suite (issue 11): thousands of generated and mutated requests per protocol against the
 * real server run as a child process, every method of the contract, fixed seeds (the same run
 * every time). Random and structured mutations of JSON bodies, paths, query strings and headers
 * (REST) and of raw protobuf bytes and metadata (gRPC).
 *
 * It asserts: no 5xx other than 503/504 (gRPC: no INTERNAL, UNKNOWN, DATA_LOSS or UNIMPLEMENTED);
 * every error carries `code` (one of the contract's), `message` and `request_id` (gRPC: ErrorInfo
 * reason, message, `request-id`); nothing went unhandled (the server's safety net logs nothing);
 * the process is alive and answering at the end; its memory (RSS) after the run is within
 * MEMORY_BOUND_BYTES of what it was after a warm-up.
 *
 * Not fuzzed, by design: gRPC framing and the `grpc-timeout` header's syntax (grpc-js answers a
 * malformed one with INTERNAL before any handler runs; no server code of ours is involved). HEAD
 * requests are judged by status and Request-Id only (an answer to HEAD has no body).
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { envInteger } from '../../src/config';
import { ERROR_STATUS } from '../../src/rpc/errors';
import { loadDescriptors } from '../../src/rpc/descriptors';
import { ChildAccounts, startChildServer, type ChildServer } from '../helpers/child-server';
import { frame, RawGrpc, type RawGrpcReply } from '../helpers/raw-grpc';
import { encode, fillPath, mangleJson, mangleQuery, manglePath, message, methodsOf, mutateBytes, Rng, type FuzzMethod } from './generate';

/**
 * Requests per protocol and the seed: fixed for `make test`; FUZZ_REQUESTS and FUZZ_SEED choose a
 * deeper run with other seeds (e.g. FUZZ_SEED=99 FUZZ_REQUESTS=10000 node scripts/run-tests.js
 * test/fuzz). A value that is not a whole number ≥ 1 stops the suite instead of falling back.
 */
const REQUESTS_PER_PROTOCOL = envInteger(process.env, 'FUZZ_REQUESTS', 2500, 1);
const SEED = envInteger(process.env, 'FUZZ_SEED', 20_261_123, 1);
const CONCURRENCY = 8;
/** A bound for a loaded 2-core machine (the run takes about a minute): it only stops a hung run. */
const TIMEOUT_MS = 10 * 60_000;
/** How much the server's RSS may have grown over the run (after a warm-up), in bytes. */
const MEMORY_BOUND_BYTES = 150 * 1024 * 1024;
const CODES = new Set(Object.keys(ERROR_STATUS));
/** gRPC statuses that mean a server fault (grpc-gateway maps them to 500/501). */
const GRPC_FAULTS = new Set([grpc.status.UNKNOWN, grpc.status.INTERNAL, grpc.status.DATA_LOSS, grpc.status.UNIMPLEMENTED]);

interface RestResult {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

let server: ChildServer;
let accounts: ChildAccounts;
let keys: { all: string; free: string; read: string };
let raw: RawGrpc;
const methods = methodsOf(loadDescriptors().registry);

beforeAll(async () => {
  server = await startChildServer();
  accounts = await ChildAccounts.open(server.databaseUrl);
  keys = {
    all: (await accounts.create('enterprise', ['forecast:read', 'data:write', 'audit', 'subscriptions', 'keys:admin'])).key,
    free: (await accounts.create('free')).key,
    read: (await accounts.create('enterprise', ['forecast:read'])).key,
  };
  raw = new RawGrpc(server.grpcAddress);
  const post = (path: string, body: unknown) =>
    fetch(server.baseUrl + path, { method: 'POST', headers: { authorization: `Bearer ${keys.all}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  for (const entity of ['store:fuzz', 'store:other']) {
    assert.equal((await post('/v1/entities', { entity, frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }, { name: 'revenue' }] })).status, 200);
  }
  const observations = Array.from({ length: 40 }, (_, i) => ({ axis: 'demand', time: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().replace('.000Z', 'Z'), value: 10 + (i % 7) }));
  assert.equal((await post('/v1/entities/store:fuzz/observations', { observations })).status, 200);
});
afterAll(async () => {
  raw?.close();
  await accounts?.close();
  await server?.stop();
});

function authorization(rng: Rng): string | undefined {
  switch (rng.int(12)) {
    case 0:
      return undefined;
    case 1:
      return rng.pick(['Bearer', 'Bearer ', 'Basic abc', `Bearer ${keys.all.slice(0, -1)}x`, `Bearer fk_live_${'A'.repeat(38)}`, 'x'.repeat(500)]);
    case 2:
      return `Bearer ${keys.free}`;
    case 3:
      return `Bearer ${keys.read}`;
    default:
      return `Bearer ${keys.all}`;
  }
}

function restRequest(m: FuzzMethod, rng: Rng): { method: string; path: string; headers: Record<string, string>; body?: string } {
  const json = message(m.desc.input, rng, true);
  let path = fillPath(m.template, json, rng);
  const headers: Record<string, string> = {};
  const auth = authorization(rng);
  if (auth) headers.authorization = auth;
  if (rng.chance(0.1)) headers['idempotency-key'] = rng.pick(['k1', 'k2', '', 'x'.repeat(300), `k${rng.int(5)}`]);
  if (rng.chance(0.05)) headers['grpc-timeout'] = rng.pick(['0S', '1m', '100m', 'abc', '99999999H', '5S']);
  let body: string | undefined;
  if (m.clientStreaming) {
    body = Array.from({ length: 1 + rng.int(3) }, () => (rng.chance(0.8) ? JSON.stringify(message(m.desc.input, rng, true)) : mangleJson(message(m.desc.input, rng, true), rng))).join('\n');
    headers['content-type'] = rng.chance(0.9) ? 'application/x-ndjson' : rng.pick(['application/json', 'text/plain', '']);
  } else if (m.body === '*') {
    body = rng.chance(0.85) ? JSON.stringify(json) : mangleJson(json, rng);
    headers['content-type'] = rng.chance(0.92) ? 'application/json' : rng.pick(['text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', '']);
  } else {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(json)) {
      if (Array.isArray(v)) for (const x of v) query.append(k, typeof x === 'string' ? x : JSON.stringify(x));
      else if (v !== null && typeof v !== 'object') query.append(k, String(v));
    }
    mangleQuery(query, rng);
    const q = query.toString();
    if (q) path += `?${q}`;
  }
  if (rng.chance(0.1)) path = manglePath(path, rng);
  const method = rng.chance(0.9) ? m.httpMethod : rng.pick(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
  return { method, path, headers, body: method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? undefined : body };
}

async function sendRest(req: ReturnType<typeof restRequest>): Promise<RestResult> {
  let res: Response;
  try {
    res = await fetch(server.baseUrl + req.path, { method: req.method, headers: req.headers, body: req.body });
  } catch (err) {
    // no answer at all (the process died, or it reset the connection)
    return { method: req.method, path: req.path, status: -1, headers: {}, text: String((err as Error).cause ?? err) };
  }
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k] = v));
  return { method: req.method, path: req.path, status: res.status, headers, text: await res.text() };
}

/** What is wrong with a REST answer (undefined: nothing). */
function judgeRest(r: RestResult): string | undefined {
  if (r.status === -1) return `no answer: ${r.text}`;
  if (r.status >= 500 && r.status !== 503 && r.status !== 504) return `status ${r.status}`;
  // The site (the sign-up page and its no-JavaScript form) answers in HTML by design.
  if (/^\/(signup)?(\?|$)/.test(r.path) && (r.headers['content-type'] ?? '').startsWith('text/html')) return undefined;
  if (!/^req_[0-9A-Z]{26}$/.test(r.headers['request-id'] ?? '')) return 'no Request-Id header';
  if (r.status === 200 || r.method === 'HEAD') return undefined;
  let body: any;
  try {
    body = JSON.parse(r.text);
  } catch {
    return `error body is not JSON: ${r.text.slice(0, 80)}`;
  }
  if (!CODES.has(body?.code)) return `code ${JSON.stringify(body?.code)} is not one of the contract's`;
  if (typeof body.message !== 'string' || body.message === '') return 'no message';
  if (body.request_id !== r.headers['request-id']) return 'request_id differs from the Request-Id header';
  if (ERROR_STATUS[body.code as keyof typeof ERROR_STATUS].http !== r.status) return `status ${r.status} for code ${body.code}`;
  return undefined;
}

function grpcRequest(m: FuzzMethod, rng: Rng): { body: Buffer; metadata: Record<string, string> } {
  const messages = m.clientStreaming ? 1 + rng.int(3) : 1;
  const bodies = Array.from({ length: messages }, () => {
    const bytes = encode(m.desc.input, message(m.desc.input, rng, false));
    return rng.chance(0.7) ? (bytes ?? mutateBytes(undefined, rng)) : mutateBytes(bytes, rng);
  });
  const metadata: Record<string, string> = {};
  const auth = authorization(rng);
  if (auth) metadata.authorization = auth;
  if (rng.chance(0.1)) metadata['idempotency-key'] = rng.pick(['k1', 'k2', 'x'.repeat(300), `k${rng.int(5)}`]);
  if (rng.chance(0.05)) metadata['grpc-timeout'] = rng.pick(['0n', '1m', '50m', '5S']);
  return { body: frame(...bodies), metadata };
}

function judgeGrpc(r: RawGrpcReply): string | undefined {
  if (r.status === -1) return `no status (${r.message})`;
  if (GRPC_FAULTS.has(r.status)) return `status ${grpc.status[r.status]}: ${r.message.slice(0, 100)}`;
  if (!/^req_[0-9A-Z]{26}$/.test(r.requestId ?? '')) return r.status === grpc.status.DEADLINE_EXCEEDED ? undefined : 'no request-id';
  if (r.status === grpc.status.OK) return undefined;
  // grpc-js ends a call whose deadline passes itself (without our details); our own 504s carry them
  if (r.status === grpc.status.DEADLINE_EXCEEDED && r.reason === undefined) return undefined;
  if (!CODES.has(r.reason ?? '')) return `reason ${JSON.stringify(r.reason)} is not one of the contract's (${r.message.slice(0, 80)})`;
  if (!r.message) return 'no message';
  if (ERROR_STATUS[r.reason as keyof typeof ERROR_STATUS].grpc !== r.status) return `status ${r.status} for code ${r.reason}`;
  return undefined;
}

/** Run `n` jobs, `CONCURRENCY` at a time. */
async function pool(n: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await job(next++);
    }),
  );
}

test(`fuzz: ${REQUESTS_PER_PROTOCOL} requests per protocol over every method; no server fault, the error contract holds, the process lives, memory comes back`, async () => {
  const failures: string[] = [];
  const statuses = { rest: new Map<number, number>(), grpc: new Map<number, number>() };
  const count = (m: Map<number, number>, s: number) => m.set(s, (m.get(s) ?? 0) + 1);
  const perMethod = new Map<string, number>();
  let baseline = 0;
  const warmup = 200;
  await pool(REQUESTS_PER_PROTOCOL * 2, async (i) => {
    if (i === warmup) baseline = server.rssBytes();
    const rng = new Rng(SEED + i);
    const m = methods[(i >> 1) % methods.length];
    perMethod.set(m.path, (perMethod.get(m.path) ?? 0) + 1);
    if (i % 2 === 0) {
      const req = restRequest(m, rng);
      const r = await sendRest(req);
      count(statuses.rest, r.status);
      const problem = judgeRest(r);
      if (problem) failures.push(`#${i} REST ${req.method} ${req.path.slice(0, 120)} → ${problem}`);
    } else {
      const req = grpcRequest(m, rng);
      const r = await raw.call(m.path, req.body, req.metadata);
      count(statuses.grpc, r.status);
      const problem = judgeGrpc(r);
      if (problem) failures.push(`#${i} gRPC ${m.path} (${req.body.length} bytes) → ${problem}`);
    }
  });
  // eslint-disable-next-line no-console
  console.log(
    [
      `fuzz: ${REQUESTS_PER_PROTOCOL} REST + ${REQUESTS_PER_PROTOCOL} gRPC requests over ${methods.length} methods`,
      `REST statuses ${JSON.stringify(Object.fromEntries([...statuses.rest].sort((a, b) => a[0] - b[0])))}`,
      `gRPC statuses ${JSON.stringify(Object.fromEntries([...statuses.grpc].sort((a, b) => a[0] - b[0])))}`,
      `RSS after warm-up ${(baseline / 2 ** 20).toFixed(0)} MB, after the run ${(server.rssBytes() / 2 ** 20).toFixed(0)} MB`,
    ].join('\n'),
  );
  assert.deepEqual(failures.slice(0, 25), [], `${failures.length} failures`);
  assert.equal(perMethod.size, methods.length, 'every method was fuzzed');
  for (const [path, n] of perMethod) assert.ok(n >= 100, `${path}: ${n} requests`);

  // alive and answering on both protocols
  assert.ok(server.alive());
  const version = await fetch(`${server.baseUrl}/v1/version`);
  assert.equal(version.status, 200);
  const g = await raw.call('/forecast.v1.AccountService/GetAccount', frame(Buffer.alloc(0)), { authorization: `Bearer ${keys.all}` });
  assert.equal(g.status, grpc.status.OK, g.message);
  // nothing unhandled, nothing logged as an internal error
  assert.deepEqual(server.errorLogs().map((l) => l.msg), []);
  assert.ok(server.rssBytes() - baseline < MEMORY_BOUND_BYTES, `RSS grew by ${((server.rssBytes() - baseline) / 2 ** 20).toFixed(0)} MB (bound ${MEMORY_BOUND_BYTES / 2 ** 20} MB)`);
}, TIMEOUT_MS);
