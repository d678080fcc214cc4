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

/**
 * Parse a JSON body; 400 with the parser's position on a syntax error, and 400 for a name given
 * twice in one object (`{"horizon": 1, "horizon": 1000}`): `JSON.parse` keeps the last, while a
 * proxy, a gateway's validator or a log reader may act on the first, so the request would mean
 * two things (protobuf's own JSON parsers refuse it too). `what` names the message in errors
 * (`messages[1]` for an NDJSON line; a body's fields are named alone, as decoding errors name them).
 */
export function parseJson(text: string, what = 'body'): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // The parser's message quotes the input; ServiceError escapes any raw control bytes in it.
    throw new ServiceError('invalid_argument', `${what}: malformed JSON (${(err as Error).message})`, { field: what });
  }
  const repeated = repeatedName(text);
  if (repeated !== undefined) {
    const field = what === 'body' ? repeated : `${what}${repeated.startsWith('[') ? '' : '.'}${repeated}`;
    throw new ServiceError('invalid_argument', `${field}: is given twice in one object; give each field once`, { field });
  }
  return value;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Names an object may have before they are kept in a set rather than a list. */
const SHORT_LIST = 16;

/**
 * The path (`observations[0].value`, names as written) of the first name given twice in one
 * object of `text`, which must be valid JSON (parsed already): only brackets, commas and strings
 * matter then. Names are compared decoded (`"\u0061"` is `"a"`). Linear: strings are skipped with
 * `indexOf`; an object's names are kept in a short list, and in a set once it has many (an object
 * of 100,000 names must not cost 5 × 10⁹ comparisons).
 */
export function repeatedName(text: string): string | undefined {
  // Per open bracket: an object's names so far (null for an array), and where in it the text is
  // (the name of the value being read, or an array's index).
  const names: (string[] | Set<string> | null)[] = [];
  const at: (string | number)[] = [];
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      // A quote after an odd run of backslashes is escaped: the string goes on.
      for (;;) {
        let k = end - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((end - 1 - k) % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (nameNext) {
        const raw = text.slice(i + 1, end);
        const name = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const top = names.length - 1;
        const seen = names[top]!;
        at[top] = name;
        if (Array.isArray(seen)) {
          if (seen.includes(name)) return pathOf(at);
          seen.push(name);
          if (seen.length > SHORT_LIST) names[top] = new Set(seen);
        } else {
          if (seen.has(name)) return pathOf(at);
          seen.add(name);
        }
        nameNext = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      names.push([]);
      at.push('');
      nameNext = true;
    } else if (c === 0x5b /* [ */) {
      names.push(null);
      at.push(0);
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      names.pop();
      at.pop();
      nameNext = false;
    } else if (c === 0x2c /* , */) {
      const top = at.length - 1;
      if (names[top] === null) (at[top] as number)++;
      else nameNext = true;
    }
  }
  return undefined;
}

function pathOf(at: readonly (string | number)[]): string {
  let path = '';
  for (const step of at) path += typeof step === 'number' ? `[${step}]` : path === '' ? step : `.${step}`;
  return path;
}
