/** Reading request bodies with a size limit, and content-type checks, for the gateway. */
import type { IncomingMessage } from 'node:http';
import { ClientCancelledError, payloadTooLarge, quote, ServiceError } from '../../rpc/errors';

/** Read the whole body, refusing more than `limit` bytes with 413 (checked before reading when Content-Length says so). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => payloadTooLarge('request body', limit);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of bodyChunks(req)) {
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

/**
 * The lines of a newline-delimited body, read as they arrive (blank lines skipped), refusing
 * more than `limit` bytes in all with 413. Only one line is ever held beyond what the caller keeps.
 */
export async function* ndjsonLines(req: IncomingMessage, limit: number): AsyncGenerator<NdjsonLine> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => payloadTooLarge('request body', limit);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let size = 0;
  let rest = '';
  let line = 0;
  for await (const chunk of bodyChunks(req)) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = lines.pop()!;
    for (const text of lines) {
      line++;
      if (text.trim() !== '') yield { text, line };
    }
  }
  rest += decoder.decode();
  if (rest.trim() !== '') yield { text: rest, line: line + 1 };
}

/**
 * The body's chunks as they arrive. A client that closes the connection before the body ends
 * (Node's `aborted` error) has cancelled its call: that is `ClientCancelledError`, logged at info,
 * not an internal error (nothing was saved: the body is read before anything is written).
 */
async function* bodyChunks(req: IncomingMessage): AsyncGenerator<Buffer> {
  try {
    yield* req as AsyncIterable<Buffer>;
  } catch (err) {
    if (req.destroyed || (err as NodeJS.ErrnoException).code === 'ECONNRESET') throw new ClientCancelledError(err);
    throw err;
  }
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
