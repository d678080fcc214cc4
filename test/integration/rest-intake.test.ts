/**
 * What a REST client can make the server hold (QA on a1f0179): finding 2, any free key held about
 * 1 MiB per connection by sending all of a body but its last bytes (1,500 connections: 1.8 GB,
 * Node's 300 s requestTimeout the only limit); finding 3, one 60 MB NDJSON line cost 42 s of the
 * main thread. Over raw sockets, requests left unfinished on purpose:
 * - a body's bytes count against MAX_PENDING_REQUEST_BYTES: over it, 503 `unavailable`; a body
 *   that stops arriving fails after REQUEST_IDLE_TIMEOUT_MS (504), and its bytes are let go;
 * - a connection that sends nothing is closed after the idle limit, a slow answer is not cut;
 * - a body no route reads does not keep its connection, nor does a sign-up form that stops
 *   arriving; at most MAX_CONNECTIONS connections, shared between client addresses;
 * - an NDJSON line longer than a message may be is refused as soon as it is, naming it.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { rest } from '../helpers/dual';
import { startTestService, type TestService } from '../helpers/service';

const KiB = 1024;
const MiB = 1024 * KiB;
const IDLE_MS = 1000;

/** An HTTP/1.1 answer read off a raw socket. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: any;
}

/** A raw connection: write what you like, read the first answer, see whether the server closed it. */
class Raw {
  private text = '';
  private ended = false;
  readonly socket: Socket;

  /** `localAddress`: the address to connect from (any of 127.0.0.0/8 on Linux), to be another client. */
  constructor(port: number, localAddress?: string) {
    this.socket = connect({ port, host: '127.0.0.1', localAddress });
    this.socket.on('data', (d) => (this.text += d.toString('latin1')));
    this.socket.on('close', () => (this.ended = true));
    this.socket.on('error', () => undefined);
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Whether a whole answer has come. */
  get answered(): boolean {
    return parse(this.text) !== undefined;
  }

  /** Forget what came so far: the next answer read is the next one sent. */
  reset(): void {
    this.text = '';
  }

  /** Everything the server sent, as latin1 text. */
  get received(): string {
    return this.text;
  }

  /** Whether the server closed the connection. */
  get closed(): boolean {
    return this.ended;
  }

  /** The first complete answer (JSON body, Content-Length framed), within `ms`. */
  async answer(ms = 5000): Promise<Answer> {
    let parsed: Answer | undefined;
    await until(() => (parsed = parse(this.text)) !== undefined, 'an answer', ms);
    return parsed!;
  }

  /** Wait (at most `ms`) for the server to close the connection. */
  closedWithin(ms = 5000): Promise<void> {
    return until(() => this.ended, 'the server to close the connection', ms);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function parse(text: string): Answer | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [status, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  const length = Number(headers['content-length'] ?? 0);
  const body = text.slice(end + 4, end + 4 + length);
  if (Buffer.byteLength(body, 'latin1') < length) return undefined;
  return { status: Number(status.split(' ')[1]), headers, body: length > 0 ? JSON.parse(Buffer.from(body, 'latin1').toString('utf8')) : undefined };
}

/** Wait (at most `ms`) until `check` holds. */
async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function head(method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\nHost: x\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

const day = (i: number) => new Date(Date.UTC(2020, 0, 1 + i)).toISOString().replace('.000Z', 'Z');
/** NDJSON lines of 100 observations each, of `entity`, from day `from`. */
function lines(entity: string, n: number, from = 0): string {
  return Array.from({ length: n }, (_, l) => JSON.stringify({ entity, observations: Array.from({ length: 100 }, (_, i) => ({ axis: 'demand', time: day(from + l * 100 + i), value: i })) }) + '\n').join('');
}

describe('bodies held open', () => {
  let t: TestService;
  let key: string;
  const raws: Raw[] = [];
  const open = () => {
    const r = new Raw(t.service.httpPort);
    raws.push(r);
    return r;
  };
  beforeAll(async () => {
    // A 16 KiB body makes a 1 MiB stream limit: the smallest budget allowed is then 1 MiB.
    t = await startTestService({
      env: { MAX_BODY_BYTES: String(16 * KiB), MAX_PENDING_REQUEST_BYTES: String(MiB), REQUEST_IDLE_TIMEOUT_MS: String(IDLE_MS) },
      // an answer that takes longer than the idle limit, nothing moving on the connection meanwhile
      httpMiddleware: [(req, res, next) => (req.url === '/slow' ? void setTimeout(() => res.end('{}'), 2.5 * IDLE_MS) : next())],
    });
    key = (await t.account()).key;
    const made = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:held', frequency: 'P1D', axes: [{ name: 'demand' }] } });
    assert.equal(made.code, 'ok', made.message);
  });
  afterAll(async () => {
    for (const r of raws) r.destroy();
    await t.close();
  });

  test('the body that takes the total over the budget gets 503 unavailable, others are served; a body that stops arriving gets 504 after the idle limit; nothing stored', async () => {
    const auth = { authorization: `Bearer ${key}` };
    // a bulk ingest, within the 1 MiB stream limit, that stops 1,000 bytes before its end
    const held = lines('store:held', Math.floor((MiB - 2000) / lines('store:held', 1).length));
    const bulk = open();
    bulk.write(head('POST', '/v1/observations:bulkIngest', { ...auth, 'content-type': 'application/x-ndjson', 'content-length': held.length + 1000 }) + held);
    await until(() => t.service.intake.pendingBytes >= held.length, 'the stream to be read');
    assert.ok(held.length + 15_000 > MiB, `${held.length} bytes held`);
    // a JSON body (within its 16 KiB limit) that takes the total over the budget; meanwhile the
    // stream keeps sending a byte now and then (so that, however loaded the machine, it is not
    // the one refused as idle first)
    const query = open();
    query.write(head('POST', '/v1/oracle/query', { ...auth, 'content-type': 'application/json', 'content-length': 16_000 }) + `{"entity":"${'a'.repeat(15_000)}`);
    const trickle = setInterval(() => bulk.write(' '), IDLE_MS / 5);
    const refused = await query.answer().finally(() => clearInterval(trickle));
    assert.equal(refused.status, 503);
    assert.equal(refused.body.code, 'unavailable');
    assert.match(refused.body.message, new RegExp(`\\(${MiB} bytes\\): retry in a moment$`));
    assert.equal(refused.body.request_id, refused.headers['request-id']);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers.connection, 'close');
    await query.closedWithin();
    // others are served meanwhile
    assert.equal((await rest(t, key, { method: 'GET', path: '/v1/version' })).code, 'ok');
    assert.ok(!bulk.closed, 'the stream goes on');
    // the stream sends nothing more: refused once the idle limit has passed, its bytes let go
    const stalled = await bulk.answer(IDLE_MS + 5000);
    assert.equal(stalled.status, 504);
    assert.equal(stalled.body.code, 'deadline_exceeded');
    assert.equal(stalled.body.message, `request body: nothing arrived for ${IDLE_MS / 1000} s; a request must keep arriving until it ends`);
    await bulk.closedWithin();
    await until(() => t.service.intake.pendingBytes === 0, 'the budget to be free again');
    const stored = await rest(t, key, { method: 'GET', path: '/v1/entities/store:held/observations' });
    assert.deepEqual(stored.data.observations, [], 'nothing of the stalled stream was stored');
    // and a stream sent whole commits
    const whole = lines('store:held', 3);
    const ok = await rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: whole, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(ok.code, 'ok', ok.message);
    assert.equal(ok.data.accepted, 300);
  });

  test('a connection that sends nothing is closed after the idle limit; an answer that takes longer is not cut, and keeps its connection', async () => {
    const silent = open();
    await silent.closedWithin(IDLE_MS + 5000);
    const slow = open();
    slow.write(head('GET', '/slow', {}));
    assert.equal((await slow.answer(2.5 * IDLE_MS + 5000)).status, 200);
    assert.ok(!slow.closed);
  });

  test('headers still incomplete the idle limit after their first byte get 504 deadline_exceeded with the error body, then the connection closes', async () => {
    // (Headers that stop arriving altogether are closed silently by the socket's own idle limit.)
    const r = open();
    r.write('GET /v1/account HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => r.write('X-Slow: 1\r\n'), IDLE_MS / 5);
    const answer = await r.answer(IDLE_MS + 5000).finally(() => clearInterval(trickle));
    assert.equal(answer.status, 504);
    assert.equal(answer.body.code, 'deadline_exceeded');
    assert.match(answer.body.request_id, /^req_/);
    assert.equal(answer.headers['request-id'], answer.body.request_id);
    assert.match(answer.body.message, /^request headers: not complete 1 s after their first byte/);
    assert.equal(answer.headers['cache-control'], 'no-store');
    await r.closedWithin();
  });

  test('a request with a body no route reads is answered and its connection closed, not left waiting for the rest', async () => {
    const r = open();
    r.write(head('POST', '/nowhere', { 'content-type': 'application/json', 'content-length': 100_000 }) + '{"a":');
    const answer = await r.answer();
    assert.equal(answer.status, 404);
    assert.equal(answer.body.code, 'not_found');
    assert.equal(answer.headers.connection, 'close');
    await r.closedWithin();
  });

  test('a body answered early (401, a bad NDJSON line) is read to its end and dropped, the connection kept: a client that sends all of it before reading gets the answer; one declared over a stream is closed', async () => {
    const r = open();
    // (within the 1 MiB a stream may hold here)
    const body = ' '.repeat(900 * KiB);
    r.write(head('POST', '/v1/entities', { authorization: 'Bearer fk_live_wrong', 'content-type': 'application/json', 'content-length': body.length }) + body);
    const refused = await r.answer();
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.connection, 'keep-alive');
    // the same connection serves the next request once the body has been read past
    r.reset();
    r.write(head('GET', '/v1/version', {}));
    assert.equal((await r.answer()).status, 200);
    assert.ok(!r.closed);
    // a bulk stream whose first line is not JSON: 400 at that line, the rest read past, same again
    r.reset();
    const stream = `{"entity":\n${lines('store:held', 5).repeat(30)}`;
    assert.ok(stream.length > 700 * KiB && stream.length < MiB, `${stream.length}`);
    r.write(head('POST', '/v1/observations:bulkIngest', { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson', 'content-length': stream.length }) + stream);
    const bad = await r.answer();
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.match(bad.body.message, /^line 1: /);
    r.reset();
    r.write(head('GET', '/v1/version', {}));
    assert.equal((await r.answer()).status, 200);
    // a chunked rest whose framing breaks: the connection closes, with no second answer
    const chunked = open();
    chunked.write(head('POST', '/v1/entities', { authorization: 'Bearer fk_live_wrong', 'content-type': 'application/json', 'transfer-encoding': 'chunked' }) + '5\r\nhello\r\n');
    assert.equal((await chunked.answer()).status, 401);
    chunked.write('zz\r\nnot a chunk\r\n');
    await chunked.closedWithin();
    assert.equal(chunked.received.match(/HTTP\/1\.1 /g)?.length, 1, chunked.received);
    // a malformed request right after the rest of a drained body, in the same write: answered 400
    const next = open();
    next.write(head('POST', '/v1/entities', { authorization: 'Bearer fk_live_wrong', 'content-type': 'application/json', 'content-length': 10 }) + 'hello');
    assert.equal((await next.answer()).status, 401);
    next.write('world' + 'NOT HTTP\r\n\r\n');
    await next.closedWithin();
    assert.deepEqual(next.received.match(/HTTP\/1\.1 \d+/g), ['HTTP/1.1 401', 'HTTP/1.1 400'], next.received);
    // declared larger than a stream may be (1 MiB here): closed after the answer, as before
    const big = open();
    big.write(head('POST', '/v1/observations:bulkIngest', { authorization: 'Bearer fk_live_wrong', 'content-type': 'application/x-ndjson', 'content-length': 2 * MiB }) + 'x'.repeat(1000));
    const bigAnswer = await big.answer();
    assert.equal(bigAnswer.status, 401);
    assert.equal(bigAnswer.headers.connection, 'close');
    await big.closedWithin();
  });

  test('a sign-up form that stops arriving has its connection closed after the idle limit; one sent whole is answered', async () => {
    const r = open();
    r.write(head('POST', '/signup', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': 100 }) + 'email=held%40example.com');
    await r.closedWithin(IDLE_MS + 5000);
    assert.ok(!r.answered);
    const form = 'email=whole%40example.com';
    const whole = open();
    whole.write(head('POST', '/signup', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': form.length }) + form);
    await whole.closedWithin();
    assert.match(whole.received, /^HTTP\/1\.1 200 [^]*<code id="api-key">fk_live_/);
  });
});

describe('at most MAX_CONNECTIONS connections', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { MAX_CONNECTIONS: '2' } });
  });
  afterAll(() => t.close());

  test('one more is closed at once; once one closes, a new one is served', async () => {
    const version = head('GET', '/v1/version', {});
    const first = [new Raw(t.service.httpPort), new Raw(t.service.httpPort)];
    try {
      // each served a request (keep-alive): the server has accepted both
      for (const r of first) {
        r.write(version);
        assert.equal((await r.answer()).status, 200);
      }
      const third = new Raw(t.service.httpPort);
      await third.closedWithin();
      first.pop()!.destroy();
      // the server hears of the close a moment later: retry (bounded) until a new connection is served
      const end = Date.now() + 10_000;
      let status = 0;
      while (status !== 200 && Date.now() < end) {
        const r = new Raw(t.service.httpPort);
        r.write(version);
        status = await r.answer(1000).then((a) => a.status, () => 0);
        r.destroy();
      }
      assert.equal(status, 200);
    } finally {
      for (const r of first) r.destroy();
    }
  });
});

describe("shares of the budget: one account's, the free tier's", () => {
  let t: TestService;
  const raws: Raw[] = [];
  afterAll(async () => {
    for (const r of raws) r.destroy();
    await t.close();
  });

  test("one free account's requests hold at most a quarter of the budget (429), all free accounts' half (503); a paying account's upload is served meanwhile", async () => {
    // 16 KiB bodies: 1 MiB streams; an 8 MiB budget: 2 MiB for one free account, 4 MiB for the free tier
    t = await startTestService({ env: { MAX_BODY_BYTES: String(16 * KiB), MAX_PENDING_REQUEST_BYTES: String(8 * MiB) } });
    const [a, b, c, paying] = [await t.account('free'), await t.account('free'), await t.account('free'), await t.account('pro')];
    for (const who of [a, b, c, paying]) {
      const made = await rest(t, who.key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:shared', frequency: 'P1D', axes: [{ name: 'demand' }] } });
      assert.equal(made.code, 'ok', made.message);
    }
    const open = (key: string, path: string, type: string, length: number, sent: string) => {
      const r = new Raw(t.service.httpPort);
      raws.push(r);
      r.write(head('POST', path, { authorization: `Bearer ${key}`, 'content-type': type, 'content-length': length }) + sent);
      return r;
    };
    // two bulk streams each (as many as one account may have at once), each sent but for its last bytes
    const body = lines('store:shared', Math.floor((MiB - 2000) / lines('store:shared', 1).length));
    const hold = async (who: { key: string; accountId: string }) => {
      const streams = [0, 1].map(() => open(who.key, '/v1/observations:bulkIngest', 'application/x-ndjson', body.length + 1000, body));
      await until(() => t.service.intake.pendingBytesOf(who.accountId) >= 2 * body.length, "a free account's streams to be read");
      return streams;
    };
    const held = [...(await hold(a)), ...(await hold(b))];
    assert.ok(2 * body.length + 15_000 > 2 * MiB, `${2 * body.length} bytes held by each`);
    const query = (key: string) => open(key, '/v1/oracle/query', 'application/json', 16_000, `{"entity":"${'a'.repeat(15_000)}`);
    // the same free account's query body: over its own share
    const mine = await query(a.key).answer();
    assert.equal(mine.status, 429, JSON.stringify(mine.body));
    assert.equal(mine.body.code, 'quota_exceeded');
    assert.equal(mine.body.message, `your account's requests still arriving hold as many bytes as one account's may at once (${2 * MiB} bytes): retry when one of them has arrived`);
    assert.equal(mine.headers['retry-after'], '1');
    // a third free account's stream: over the free tier's share
    const theirs = await open(c.key, '/v1/observations:bulkIngest', 'application/x-ndjson', body.length + 1000, body).answer();
    assert.equal(theirs.status, 503, JSON.stringify(theirs.body));
    assert.equal(theirs.body.code, 'unavailable');
    assert.equal(theirs.body.message, `the server is receiving as many request bytes from free-tier accounts as it holds at once (${4 * MiB} bytes): retry in a moment`);
    assert.equal(theirs.headers['retry-after'], '1');
    // a paying account's stream of a whole stream's size is read, and commits once sent whole
    const ok = await rest(t, paying.key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: body, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(ok.code, 'ok', ok.message);
    assert.ok(held.every((r) => !r.closed), "the free accounts' streams go on");
  });
});

describe('the share of requests no account has claimed', () => {
  test('sign-up bodies held half-sent (no key needed) fill a quarter of the budget at most (503); a paying account is served meanwhile', async () => {
    // 16 KiB bodies: 1 MiB streams; a 4 MiB budget: the unclaimed share is a stream and a sixteenth (1,114,112 bytes)
    const t = await startTestService({ env: { MAX_BODY_BYTES: String(16 * KiB), MAX_PENDING_REQUEST_BYTES: String(4 * MiB) } });
    const raws: Raw[] = [];
    try {
      const paying = await t.account('pro');
      const hold = () => {
        const r = new Raw(t.service.httpPort);
        raws.push(r);
        r.write(head('POST', '/v1/signup', { 'content-type': 'application/json', 'content-length': 16_100 }) + `{"email":"${'a'.repeat(15_990)}`);
        return r;
      };
      for (let i = 0; i < 69; i++) hold();
      await until(() => t.service.intake.pendingBytes >= 69 * 16_000, 'the bodies to be read');
      const refused = await hold().answer();
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.message, 'the server is receiving as many request bytes from callers not yet authenticated as it holds at once (1114112 bytes): retry in a moment');
      assert.equal(refused.headers['retry-after'], '1');
      const made = await rest(t, paying.key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:paying', frequency: 'P1D', axes: [{ name: 'demand' }] } });
      assert.equal(made.code, 'ok', made.message);
      assert.ok(raws.slice(0, 69).every((r) => !r.closed), 'the held bodies go on');
    } finally {
      for (const r of raws) r.destroy();
      await t.close();
    }
  });
});

describe("a free account's share holds a whole stream", () => {
  test('a free account\'s stream at its limit is served, and one byte over it gets 413, not a 429 no retry could clear', async () => {
    // 16 KiB bodies: 1 MiB streams; a 4 MiB budget: a free account's share is a stream and a sixteenth
    const t = await startTestService({ env: { MAX_BODY_BYTES: String(16 * KiB), MAX_PENDING_REQUEST_BYTES: String(4 * MiB) } });
    try {
      const free = await t.account('free');
      const made = await rest(t, free.key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:full', frequency: 'P1D', axes: [{ name: 'demand' }] } });
      assert.equal(made.code, 'ok', made.message);
      const n = Math.floor(MiB / lines('store:full', 1).length) - 1;
      const whole = lines('store:full', n);
      const one = lines('store:full', 1, 100 * n);
      // the last line padded with spaces (JSON allows them) to the limit exactly
      const atLimit = whole + one.slice(0, -2) + ' '.repeat(MiB - whole.length - one.length) + '}\n';
      assert.equal(atLimit.length, MiB);
      const send = async (body: string) => {
        const r = new Raw(t.service.httpPort);
        const chunks = body.match(/[^]{1,65536}/g)!.map((c) => `${c.length.toString(16)}\r\n${c}\r\n`).join('');
        r.write(head('POST', '/v1/observations:bulkIngest', { authorization: `Bearer ${free.key}`, 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' }) + chunks + '0\r\n\r\n');
        const answer = await r.answer(20_000);
        r.destroy();
        return answer;
      };
      const ok = await send(atLimit);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const over = await send(atLimit.slice(0, -2) + ' }\n');
      assert.equal(over.status, 413, JSON.stringify(over.body));
      assert.equal(over.body.code, 'payload_too_large');
      await until(() => t.service.intake.pendingBytes === 0, 'the budget to be free again');
    } finally {
      await t.close();
    }
  });
});

describe('connections shared between clients at the limit', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { MAX_CONNECTIONS: '3' } });
  });
  afterAll(() => t.close());

  test('a client holding every connection gives its oldest up to another client, until the two meet halfway; not to itself', async () => {
    const version = head('GET', '/v1/version', {});
    const served = async (r: Raw) => {
      r.write(version);
      return (await r.answer(3000).then((a) => a.status, () => 0)) === 200;
    };
    const hog = [new Raw(t.service.httpPort, '127.0.0.1'), new Raw(t.service.httpPort, '127.0.0.1'), new Raw(t.service.httpPort, '127.0.0.1')];
    const others: Raw[] = [];
    try {
      for (const r of hog) assert.ok(await served(r));
      // the hog's own next connection is closed at once, as the limit alone did
      const more = new Raw(t.service.httpPort, '127.0.0.1');
      others.push(more);
      await more.closedWithin();
      // another client is served, and the hog's oldest connection closed for it
      const other = new Raw(t.service.httpPort, '127.0.0.2');
      others.push(other);
      assert.ok(await served(other), 'another client is served at the limit');
      await hog[0].closedWithin();
      assert.ok(!hog[1].closed && !hog[2].closed);
      // two against one: nothing more to give (2 and 1 would become 1 and 2)
      const second = new Raw(t.service.httpPort, '127.0.0.2');
      others.push(second);
      await second.closedWithin();
      assert.ok(!hog[1].closed && !hog[2].closed && !other.closed);
    } finally {
      for (const r of [...hog, ...others]) r.destroy();
    }
  });

  test("the connection closed for a newcomer is the biggest holder's oldest without a request in flight: its upload under way goes on", async () => {
    // (a service of its own: the connections of the test before may not all be gone yet)
    const t = await startTestService({ env: { MAX_CONNECTIONS: '3' } });
    const version = head('GET', '/v1/version', {});
    // the oldest connection is sending a sign-up body slowly; the two after it are idle keep-alives
    const form = JSON.stringify({ email: 'slow@example.com' });
    const busy = new Raw(t.service.httpPort, '127.0.0.1');
    busy.write(head('POST', '/v1/signup', { 'content-type': 'application/json', 'content-length': form.length }) + form.slice(0, 5));
    const idle = [new Raw(t.service.httpPort, '127.0.0.1'), new Raw(t.service.httpPort, '127.0.0.1')];
    const others: Raw[] = [];
    try {
      for (const r of idle) {
        r.write(version);
        assert.equal((await r.answer()).status, 200);
      }
      const other = new Raw(t.service.httpPort, '127.0.0.2');
      others.push(other);
      other.write(version);
      assert.equal((await other.answer()).status, 200);
      await idle[0].closedWithin();
      assert.ok(!busy.closed && !idle[1].closed, 'the upload and the newer idle connection stay');
      busy.write(form.slice(5));
      const answer = await busy.answer();
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.match(answer.body.api_key, /^fk_live_/);
    } finally {
      for (const r of [busy, ...idle, ...others]) r.destroy();
      await t.close();
    }
  });
});

describe('NDJSON lines', () => {
  let t: TestService;
  let key: string;
  beforeAll(async () => {
    t = await startTestService();
    key = (await t.account()).key;
    const made = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:lines', frequency: 'P1D', axes: [{ name: 'demand' }] } });
    assert.equal(made.code, 'ok', made.message);
  });
  afterAll(() => t.close());

  test('a line longer than a message may be (4 MiB) is refused with 413 naming it, as soon as it is that long; nothing stored', async () => {
    const first = lines('store:lines', 1);
    const total = first.length + 60 * MiB;
    const r = new Raw(t.service.httpPort);
    try {
      r.write(head('POST', '/v1/observations:bulkIngest', { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson', 'content-length': total }) + first);
      // of a 60 MiB second line, only a little over 4 MiB, then nothing more: the answer must come
      // while the body is far from complete. (Not sent on until the answer: the server closes the
      // connection after answering, and a client still writing then may meet a reset that loses
      // the answer unread; found under load in the full suite.)
      const chunk = Buffer.alloc(64 * KiB, 0x20);
      let sent = first.length;
      while (sent < first.length + 4 * MiB + 2 * chunk.length && !r.answered && !r.closed) {
        if (!r.socket.write(chunk)) await new Promise((resolve) => (r.socket.once('drain', resolve), r.socket.once('close', resolve)));
        sent += chunk.length;
      }
      const answer = await r.answer();
      assert.equal(answer.status, 413);
      assert.equal(answer.body.code, 'payload_too_large');
      assert.equal(answer.body.message, `line 2: messages[1] exceeds the limit of ${4 * MiB} bytes for one line (one message)`);
      assert.deepEqual(answer.body.details, { limit: 4 * MiB, field: 'messages[1]', line: 2 });
      assert.ok(sent < total / 2, `the answer came after ${sent} of ${total} bytes`);
    } finally {
      r.destroy();
    }
    const stored = await rest(t, key, { method: 'GET', path: '/v1/entities/store:lines/observations' });
    assert.deepEqual(stored.data.observations, []);
  });
});
