/** Reading request bodies with a size limit, and content-type checks, for the gateway. */
import type { IncomingMessage } from 'node:http';
import { ClientCancelledError, payloadTooLarge, quote, ServiceError } from '../../rpc/errors';
import type { Arrival } from '../request-intake';

/**
 * Read the whole body, refusing more than `limit` bytes with 413 (checked before reading when
 * Content-Length says so). Its bytes count against the process's budget until it has arrived
 * (`arrival`, request-intake.ts).
 */
export async function readBody(req: IncomingMessage, limit: number, arrival: Arrival): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => payloadTooLarge('request body', limit);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of bodyChunks(req, arrival)) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** One line of a newline-delimited body and its number (1-based, blank lines counted). */
export interface NdjsonLine {
  readonly text: string;
  readonly line: number;
}

export interface NdjsonLimits {
  /** Most bytes of the whole body (413 above it). */
  readonly body: number;
  /** Most bytes of one line, its newline not counted: one message (413 naming the line above it). */
  readonly line: number;
}

const NEWLINE = 0x0a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The lines of a newline-delimited body, read as they arrive (blank lines skipped), refusing more
 * than `limits.body` bytes in all with 413, and a line longer than `limits.line` with 413 naming
 * it (`line 3: messages[2] …`, as the gateway names a line's other errors) as soon as it is: its
 * bytes are dropped, none of it is decoded. Only one line is ever held beyond what the caller keeps.
 *
 * Each chunk is searched for newlines once: the unfinished line is kept as a list of its pieces,
 * joined when its newline comes. (Found by QA: joining the pending line to every chunk and
 * splitting the whole again made one 60 MB line cost 42 s of the main thread, quadratic in its
 * length.) A newline byte never occurs inside a multi-byte UTF-8 character, so lines are cut on
 * bytes and decoded whole; a byte order mark opening the body is dropped, as a TextDecoder would.
 */
export async function* ndjsonLines(req: IncomingMessage, limits: NdjsonLimits, arrival: Arrival): AsyncGenerator<NdjsonLine> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => payloadTooLarge('request body', limits.body);
  if (Number.isFinite(declared) && declared > limits.body) throw tooLarge();
  let size = 0;
  let line = 0;
  let messages = 0;
  let pieces: Buffer[] = [];
  let pending = 0;
  const take = (last: Buffer): NdjsonLine | undefined => {
    let bytes = pieces.length === 0 ? last : Buffer.concat([...pieces, last], pending + last.length);
    pieces = [];
    pending = 0;
    if (++line === 1 && bytes.subarray(0, 3).equals(BOM)) bytes = bytes.subarray(3);
    const text = bytes.toString('utf8');
    if (text.trim() === '') return undefined;
    messages++;
    return { text, line };
  };
  const tooLong = () =>
    new ServiceError('payload_too_large', `line ${line + 1}: messages[${messages}] exceeds the limit of ${limits.line} bytes for one line (one message)`, {
      limit: limits.line,
      field: `messages[${messages}]`,
      line: line + 1,
    });
  for await (const chunk of bodyChunks(req, arrival)) {
    size += chunk.length;
    if (size > limits.body) throw tooLarge();
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
      if (pending + nl - from > limits.line) throw tooLong();
      const next = take(chunk.subarray(from, nl));
      from = nl + 1;
      if (next) yield next;
    }
    if (from < chunk.length) {
      pending += chunk.length - from;
      if (pending > limits.line) throw tooLong();
      pieces.push(chunk.subarray(from));
    }
  }
  const last = take(Buffer.alloc(0));
  if (last) yield last;
}

/**
 * The body's chunks as they arrive, each counted against the process's budget (`arrival`, which
 * also fails a read that waits too long); once the body has ended its bytes stop counting. A
 * client that closes the connection before the body ends (Node's `aborted` error) has cancelled
 * its call: that is `ClientCancelledError`, logged at info, not an internal error (nothing was
 * saved: the body is read before anything is written).
 * (Read by hand, not with `for await`, so that each read can be given the idle limit.) A body left
 * unread (the caller stopped early) stays so: the gateway closes the connection after answering.
 */
async function* bodyChunks(req: IncomingMessage, arrival: Arrival): AsyncGenerator<Buffer> {
  const chunks = (req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Buffer>;
    try {
      next = await arrival.wait(chunks.next());
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      if (req.destroyed || (err as NodeJS.ErrnoException).code === 'ECONNRESET') throw new ClientCancelledError(err);
      throw err;
    }
    if (next.done) break;
    arrival.add(next.value.length);
    arrival.throwIfFailed();
    yield next.value;
  }
  arrival.close();
}

/**
 * Refuse a body sent with a content coding (`Content-Encoding: gzip`, …) with 415 before it is
 * read: the gateway decodes none, and reading compressed bytes as JSON would only give a confusing
 * 400. `identity` (no coding) is fine. The answer carries `Accept-Encoding: identity` (RFC 7694).
 */
export function checkContentEncoding(req: IncomingMessage): void {
  const header = req.headers['content-encoding'];
  if (header === undefined) return;
  const codings = header.split(',').map((c) => c.trim().toLowerCase());
  const other = codings.find((c) => c !== 'identity' && c !== '');
  if (other === undefined) return;
  throw new ServiceError(
    'unsupported_media_type',
    `Content-Encoding ${quote(other)} is not supported: send the body uncompressed (identity)`,
    { content_encoding: other },
    { 'accept-encoding': 'identity' },
  );
}

/** Whether a request comes with a body (of any length but zero). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string | undefined {
  return header?.split(';')[0].trim().toLowerCase() || undefined;
}

/** Parse a JSON body; 400 with the parser's position on a syntax error. */
export function parseJson(text: string, what = 'body'): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    // The parser's message quotes the input; ServiceError escapes any raw control bytes in it.
    throw new ServiceError('invalid_argument', `${what}: malformed JSON (${(err as Error).message})`, { field: what });
  }
}
