/**
 * `ndjsonLines` (transport/rest/body.ts) on bodies cut into chunks anywhere: the lines and their
 * numbers, the decoding as a TextDecoder gave it, the line limit (413 naming the line), and a long
 * line read in time linear in its length (found by QA: one 60 MB line in 64 KiB chunks cost 42 s
 * of the main thread; the pending line was joined to each chunk and split again).
 */
import { describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { ServiceError } from '../../../src/rpc/errors';
import { ndjsonLines, type NdjsonLine } from '../../../src/transport/rest/body';
import type { Arrival } from '../../../src/transport/request-intake';

/** No budget, no idle limit: only the line splitting is under test here. */
const unlimited = { wait: <T>(p: Promise<T>) => p, add: () => undefined, throwIfFailed: () => undefined, close: () => undefined } as unknown as Arrival;

/** A request whose body arrives as `chunks`. */
function request(chunks: Buffer[], headers: Record<string, string> = {}): IncomingMessage {
  return Object.assign(Readable.from(chunks), { headers }) as unknown as IncomingMessage;
}

/** `body` cut into chunks of `size` bytes. */
function cut(body: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) chunks.push(body.subarray(at, at + size));
  return chunks;
}

async function read(chunks: Buffer[], limits = { body: 2 ** 40, line: 2 ** 30 }): Promise<NdjsonLine[]> {
  const out: NdjsonLine[] = [];
  for await (const line of ndjsonLines(request(chunks), limits, unlimited)) out.push(line);
  return out;
}

describe('lines', () => {
  const body = Buffer.from('{"a":1}\n\n  \n{"b":"é€😀"}\r\n{"c":3}');

  test.each([1, 2, 3, 5, 7, 64])('the same lines and numbers whatever the chunks (%i bytes)', async (size) => {
    assert.deepEqual(await read(cut(body, size)), [
      { text: '{"a":1}', line: 1 },
      { text: '{"b":"é€😀"}\r', line: 4 },
      { text: '{"c":3}', line: 5 },
    ]);
  });

  test('a byte order mark opening the body is dropped, one opening a later line is not (as a TextDecoder read them)', async () => {
    const bom = '\ufeff';
    assert.deepEqual(await read(cut(Buffer.from(`${bom}{"a":1}\n${bom}{"b":2}\n`), 2)), [
      { text: '{"a":1}', line: 1 },
      { text: `${bom}{"b":2}`, line: 2 },
    ]);
  });

  test('bytes that are not UTF-8 read as a TextDecoder read them', async () => {
    const bad = [[0xff], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x61, 0xe2, 0x28, 0xa1, 0x62], [0xf4, 0x90, 0x80, 0x80]];
    for (const bytes of bad) {
      const [line] = await read(cut(Buffer.from([0x22, ...bytes, 0x22, 0x0a]), 1));
      assert.equal(line.text, `"${new TextDecoder().decode(Buffer.from(bytes))}"`, JSON.stringify(bytes));
    }
  });
});

describe('limits', () => {
  const refusal = async (body: string, limits: { body: number; line: number }, size: number): Promise<ServiceError> => {
    try {
      await read(cut(Buffer.from(body), size), limits);
    } catch (err) {
      assert.ok(err instanceof ServiceError);
      return err;
    }
    assert.fail('not refused');
  };

  test.each([1, 4, 100])('a line longer than the limit: 413 naming its line and message, whatever the chunks (%i bytes)', async (size) => {
    const err = await refusal('{"a":1}\n\n123456789\n', { body: 1000, line: 8 }, size);
    assert.equal(err.code, 'payload_too_large');
    assert.equal(err.message, 'line 3: messages[1] exceeds the limit of 8 bytes for one line (one message)');
    assert.deepEqual(err.details, { limit: 8, field: 'messages[1]', line: 3 });
  });

  test('a line of exactly the limit passes (its newline is not counted; a carriage return before it is)', async () => {
    assert.deepEqual(await read([Buffer.from('12345678\n1234567\r\n')], { body: 1000, line: 8 }), [
      { text: '12345678', line: 1 },
      { text: '1234567\r', line: 2 },
    ]);
    const err = await refusal('12345678\r\n', { body: 1000, line: 8 }, 3);
    assert.equal(err.message, 'line 1: messages[0] exceeds the limit of 8 bytes for one line (one message)');
  });

  test('a last line without its newline is held to the limit too', async () => {
    const err = await refusal('{"a":1}\n123456789', { body: 1000, line: 8 }, 2);
    assert.deepEqual(err.details, { limit: 8, field: 'messages[1]', line: 2 });
  });

  test('the whole body keeps its own limit', async () => {
    const err = await refusal('1234\n1234\n1234\n', { body: 12, line: 8 }, 5);
    assert.equal(err.message, 'request body exceeds the limit of 12 bytes');
  });
});

test('one 8 MiB line in 4 KiB chunks is read in time linear in its length (well under 2 s; joining and splitting it again per chunk took seconds)', async () => {
  const body = Buffer.concat([Buffer.from('{"entity":"store:x","observations":['), Buffer.alloc(8 * 1024 * 1024, 0x20), Buffer.from(']}\n')]);
  const chunks = cut(body, 4096);
  const started = performance.now();
  const lines = await read(chunks);
  const ms = performance.now() - started;
  assert.equal(lines.length, 1);
  assert.equal(lines[0].text.length, body.length - 1);
  assert.ok(ms < 2000, `${ms.toFixed(0)} ms`);
});
