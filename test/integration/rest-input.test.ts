/**
 * How the REST gateway takes its input (QA report on REST input handling): a client that goes
 * away mid-body has cancelled its call (not an internal error); compressed bodies are refused
 * with 415; two Authorization headers are refused; decoding errors name the full field path
 * (`observations[0]`, `axes[0].kind`), on unary and NDJSON bodies alike; a missing required
 * value is refused rather than stored as 0.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createLogger } from '../../src/log';
import { rest } from '../helpers/dual';
import { bodyOf, raw } from '../helpers/raw-http';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;
/** The service's log lines (JSON objects), debug and up. */
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  t = await startTestService({ log: createLogger('debug', (line) => logLines.push(JSON.parse(line))) });
  key = (await t.account()).key;
  const c = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:berlin', frequency: 'P1D', axes: [{ name: 'demand' }] } });
  assert.equal(c.code, 'ok', c.message);
});
afterAll(() => t.close());

/** Poll `check` until it holds (every 20 ms, at most `ms`). */
async function eventually(check: () => boolean, what: string, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Send the head and part of a body, then close the connection without reading an answer. */
function sendAndHangUp(head: string, partial: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(t.service.httpPort, '127.0.0.1', () => {
      socket.write(head + partial, () => setTimeout(() => (socket.destroy(), resolve()), 100));
    });
    socket.on('error', reject);
  });
}

describe('a client that disconnects mid-body has cancelled its call', () => {
  test.each([
    ['a unary JSON body (Content-Length 500, 11 bytes sent)', 'POST /v1/entities', 'application/json', 'content-length: 500', '{"entity":"'],
    [
      'a chunked NDJSON bulk ingest',
      'POST /v1/observations:bulkIngest',
      'application/x-ndjson',
      'transfer-encoding: chunked',
      (line => `${line.length.toString(16)}\r\n${line}\r\n`)(JSON.stringify({ entity: 'store:berlin', observations: [{ axis: 'demand', time: '2026-01-01T00:00:00Z', value: 1 }] }) + '\n'),
    ],
  ])('%s: logged at info without a stack, counted as cancelled, nothing saved', async (_name, requestLine, type, framing, partial) => {
    const before = logLines.length;
    await sendAndHangUp(`${requestLine} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${type}\r\n${framing}\r\n\r\n`, partial);
    const mine = () => logLines.slice(before);
    await eventually(() => mine().some((l) => l.msg === 'call' && l.protocol === 'rest'), 'the access line');
    const access = mine().find((l) => l.msg === 'call')!;
    assert.equal(access.outcome, 'unavailable', JSON.stringify(access));
    assert.deepEqual(mine().filter((l) => l.level === 'error' || l.level === 'warn'), []);
    const cancelled = mine().find((l) => l.msg === 'call cancelled by the client');
    assert.ok(cancelled, JSON.stringify(mine()));
    assert.equal(cancelled.level, 'info');
    assert.ok(!JSON.stringify(cancelled).includes('stack'), JSON.stringify(cancelled));
    const stored = await rest(t, key, { method: 'GET', path: '/v1/entities/store:berlin/observations' });
    assert.deepEqual(stored.data.observations, []);
  });
});

describe('a body with a content coding is refused with 415 before it is read', () => {
  const entity = { entity: 'store:gz', frequency: 'P1D', axes: [{ name: 'demand' }] };
  const line = JSON.stringify({ entity: 'store:berlin', observations: [{ axis: 'demand', time: '2026-01-01T00:00:00Z', value: 1 }] }) + '\n';
  test.each([
    ['POST /v1/entities', 'gzip', 'application/json', JSON.stringify(entity)],
    ['POST /v1/entities', 'br', 'application/json', JSON.stringify(entity)],
    ['POST /v1/entities', 'identity, deflate', 'application/json', JSON.stringify(entity)],
    ['POST /v1/observations:bulkIngest', 'gzip', 'application/x-ndjson', line],
  ])('%s with Content-Encoding: %s', async (route, coding, type, text) => {
    const [method, path] = route.split(' ');
    const body = coding === 'gzip' ? gzipSync(text) : Buffer.from(text);
    const res = await fetch(t.baseUrl + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': type, 'content-encoding': coding }, body });
    assert.equal(res.status, 415);
    assert.equal(res.headers.get('accept-encoding'), 'identity');
    const error = (await res.json()) as { code: string; message: string };
    assert.equal(error.code, 'unsupported_media_type');
    assert.ok(error.message.includes(`"${coding.split(', ').pop()}"`), error.message);
    assert.equal((await rest(t, key, { method: 'GET', path: '/v1/entities/store:gz' })).code, 'not_found');
    assert.deepEqual((await rest(t, key, { method: 'GET', path: '/v1/entities/store:berlin/observations' })).data.observations, []);
  });

  test('Content-Encoding: identity is no coding at all', async () => {
    const res = await fetch(`${t.baseUrl}/v1/entities`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'identity' }, body: JSON.stringify(entity) });
    assert.equal(res.status, 200);
  });

  test('an error message never echoes raw control bytes of the request', async () => {
    const o = await rest(t, key, { method: 'POST', path: '/v1/entities', rawBody: '\u001f\u008b\u0008\u0000\u202e{', headers: { 'content-type': 'application/json' } });
    assert.equal(o.code, 'invalid_argument');
    assert.match(o.message, /^body: malformed JSON/);
    assert.doesNotMatch(o.message, /[\u0000-\u001f\u007f-\u009f\u202e\ufffd]/u, o.message);
    assert.ok(o.message.includes('\\u001f'), o.message);
  });
});

describe('a request with two Authorization headers is refused', () => {
  const MALFORMED = 'malformed Authorization header: expected "Bearer <API_KEY>"';
  /** What of a key an answer must not show: the key, and its part after the fixed prefix. */
  const traces = (k: string) => [k, k.slice('fk_live_'.length, 'fk_live_'.length + 8)];

  test('REST: on two lines, in either order, 401 as a malformed header, naming neither key', async () => {
    const other = (await t.account()).key;
    for (const [first, second] of [[key, other], [other, key]]) {
      const answer = await raw(t.service.httpPort, `GET /v1/entities/store:berlin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${first}\r\nAuthorization: Bearer ${second}\r\nConnection: close\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 401 /);
      assert.match(answer, /\r\nwww-authenticate: Bearer realm="forecast", error="invalid_request"\r\n/i);
      assert.equal(bodyOf(answer).code, 'unauthenticated');
      assert.equal(bodyOf(answer).message, MALFORMED);
      for (const trace of [...traces(key), ...traces(other)]) assert.ok(!answer.includes(trace), 'the answer shows nothing of either key');
    }
  });
  // gRPC: Node's HTTP/2 (grpc-js's client and node:http2 alike) refuses to send two `authorization`
  // entries, so that side (GrpcIncoming.header joins them the same way) has no test here.
});

describe('decoding errors name the full path of the offending value, and show it as JSON', () => {
  const row = { axis: 'demand', time: '2026-01-01T00:00:00Z', value: 1 };
  test.each([
    ['/v1/entities/store:berlin/observations', { observations: [[]] }, 'observations[0]', 'expected an object, got []'],
    ['/v1/entities/store:berlin/observations', { observations: [row, 1] }, 'observations[1]', 'expected an object, got 1'],
    ['/v1/entities/store:berlin/observations', { observations: {} }, 'observations', 'expected a list, got {}'],
    ['/v1/entities/store:berlin/observations', { observations: [{ ...row, x: 1 }] }, 'observations[0].x', 'unknown field'],
    ['/v1/entities/store:berlin/observations', { observations: [{ ...row, value: true }] }, 'observations[0].value', 'expected a number, got true'],
    ['/v1/entities', { entity: 'store:x1', axes: [{ name: 'd', kind: 7 }] }, 'axes[0].kind', 'expected a string, got 7'],
    ['/v1/entities', { entity: 'store:x1', season_length: 1.5 }, 'season_length', 'expected number (int32), got 1.5'],
    // 64-bit integers sent as JSON numbers (found by QA: "1.5 out of range", and a rounded value quoted for int64's maximum)
    ['/v1/entities/store:berlin/observations', { observations: [{ ...row, revision: 1.5 }] }, 'observations[0].revision', 'expected an integer, got 1.5'],
    ['/v1/entities/store:berlin/observations', { observations: [{ ...row, revision: 9223372036854775807 }] }, 'observations[0].revision', '9223372036854776000 is beyond 2^53 - 1, where a JSON number loses digits: send a 64-bit integer as a string (e.g. "9223372036854775807")'],
    ['/v1/entities', { entity: 'store:x1', season_length: 7, seasonLength: 7 }, 'season_length', 'is given twice (as season_length and seasonLength)'],
  ])('POST %s %j', async (path, body, field, problem) => {
    const o = await rest(t, key, { method: 'POST', path, body });
    assert.equal(o.code, 'invalid_argument', o.message);
    assert.equal(o.message, `${field}: ${problem}`);
    assert.equal(o.data.details.field, field);
  });

  test('a name given twice in one object of a body is 400 naming its path (JSON.parse would keep the last, a proxy may read the first); nothing stored', async () => {
    const rawBody = `{"observations":[${JSON.stringify(row)},{"axis":"demand","time":"2026-01-02T00:00:00Z","value":2,"value":-2}]}`;
    const o = await rest(t, key, { method: 'POST', path: '/v1/entities/store:berlin/observations', rawBody, headers: { 'content-type': 'application/json' } });
    assert.equal(o.code, 'invalid_argument', o.message);
    assert.equal(o.message, 'observations[1].value: is given twice in one object; give each field once');
    assert.equal(o.data.details.field, 'observations[1].value');
    assert.deepEqual((await rest(t, key, { method: 'GET', path: '/v1/entities/store:berlin/observations' })).data.observations, []);
  });

  const bulk = (rawBody: string) => rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody, headers: { 'content-type': 'application/x-ndjson' } });
  const good = JSON.stringify({ entity: 'store:berlin', observations: [row] });
  test.each([
    ['an unknown field', `${good}\n{"entity":"store:berlin","observations":[],"x":1}`, 2, 'messages[1].x', 'unknown field'],
    ['a nested one', `${good}\n${good.replace('"value":1', '"value":1,"y":2')}`, 2, 'messages[1].observations[0].y', 'unknown field'],
    ['a top-level array', '[{"entity":"store:berlin"}]', 1, 'messages[0]', 'must be a JSON object'],
    ['malformed JSON after a blank line (lines count blank ones, messages not)', `${good}\n\n{"entity"`, 3, 'messages[1]', 'malformed JSON'],
    ['a name given twice', `${good}\n${good.replace('"value":1', '"value":1,"value":1000')}`, 2, 'messages[1].observations[0].value', 'is given twice in one object'],
  ])('NDJSON: %s names the line and the message as gRPC does', async (_name, rawBody, line, field, problem) => {
    const o = await bulk(rawBody);
    assert.equal(o.code, 'invalid_argument', o.message);
    assert.ok(o.message.startsWith(`line ${line}: ${field}: ${problem}`), o.message);
    assert.deepEqual(o.data.details, { field, line });
    assert.deepEqual((await rest(t, key, { method: 'GET', path: '/v1/entities/store:berlin/observations' })).data.observations, []);
  });
});

describe('an observation without a value is refused, not stored as 0', () => {
  const noValue = { axis: 'demand', time: '2026-01-01T00:00:00Z' };
  const list = async () => (await rest(t, key, { method: 'GET', path: '/v1/entities/store:berlin/observations' })).data.observations;

  test('unary: 400 naming observations[i].value, nothing stored', async () => {
    const o = await rest(t, key, { method: 'POST', path: '/v1/entities/store:berlin/observations', body: { observations: [{ ...noValue, time: '2026-01-02T00:00:00Z', value: 1 }, noValue] } });
    assert.equal(o.code, 'invalid_argument', o.message);
    assert.equal(o.message, 'observations[1].value: is required');
    assert.equal(o.data.details.field, 'observations[1].value');
    assert.deepEqual(await list(), []);
  });

  test('NDJSON: the line and messages[i].observations[j].value are named, nothing stored', async () => {
    const lines = [{ entity: 'store:berlin', observations: [{ ...noValue, value: 1 }] }, { entity: 'store:berlin', observations: [noValue] }];
    const o = await rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: lines.map((l) => JSON.stringify(l)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(o.code, 'invalid_argument', o.message);
    assert.equal(o.message, 'line 2: messages[1].observations[0].value: is required');
    assert.deepEqual(o.data.details, { field: 'messages[1].observations[0].value', line: 2 });
    assert.deepEqual(await list(), []);
  });

  test('"value": 0 is a value, also as the generated REST client sends it', async () => {
    const o = await rest(t, key, { method: 'POST', path: '/v1/entities/store:berlin/observations', body: { observations: [{ ...noValue, value: 0 }] } });
    assert.equal(o.code, 'ok', o.message);
    assert.deepEqual((await list()).map((r: { value: number }) => r.value), [0]);
  });
});

// found by QA: 5,000 nested lists overflowed the strict checks' recursion (500, a stack trace in the log)
describe('deeply nested JSON is refused, not an internal error', () => {
  const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
  test.each([
    ['sign-up, without a key', '/v1/signup', false, `{"email":${deep(5000)}}`, 'email'],
    ['an oracle query', '/v1/oracle/query', true, `{"entity":"store:berlin","thresholds":${deep(5000)}}`, 'body'],
    ['an entity', '/v1/entities', true, `{"entity":"store:x","frequency":"P1D","axes":[{"name":${deep(200)}}]}`, 'body'],
  ])('%s: 400 invalid_argument, nothing logged at error', async (_name, path, auth, body, field) => {
    const before = logLines.length;
    const r = await fetch(`http://127.0.0.1:${t.service.httpPort}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${key}` } : {}) },
      body,
    });
    const b = (await r.json()) as { code: string; message: string };
    assert.equal(r.status, 400, JSON.stringify(b));
    assert.equal(b.code, 'invalid_argument');
    assert.ok(b.message.includes('deeper than 100 levels') || b.message.includes(field), b.message);
    assert.ok(!logLines.slice(before).some((l) => l.level === 'error'), JSON.stringify(logLines.slice(before)));
  });

  test('a bulk-ingest line nested too deep: 400 naming the line, nothing stored', async () => {
    const line = `{"entity":"store:berlin","observations":[{"axis":"demand","time":"2026-03-01T00:00:00Z","value":1}],"x":${deep(5000)}}`;
    const r = await rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: line + '\n', headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(r.code, 'invalid_argument', r.message);
    assert.ok(r.message.includes('line 1'), r.message);
  });
});
