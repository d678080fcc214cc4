/**
 * The length limit every string field has before any endpoint looks at it (issue 11, defect 4).
 * The pipeline checks each decoded request message, on both protocols, so a 40,000-character
 * `key_id` is refused with a short 400 before it reaches a query, a log line or an error
 * message. Fields with a stricter documented limit (names, emails, units, ids…) are checked
 * again by their endpoint; this is the ceiling for all of them, including fields added later.
 */
import { invalidArgument } from './errors';

/** Longest string field accepted anywhere in a request, in characters (e.g. a URL up to 2,048). */
export const MAX_STRING_CHARS = 2048;
/** Most elements of a repeated field or entries of a map walked (deeper lists are checked by their endpoint's count limits). */
const MAX_WALK_ITEMS = 100_000;

/** The proto field name of a ts-proto property (`keyId` → `key_id`). */
function protoName(localName: string): string {
  return localName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Throw 400 naming the first string field (or map key) of `message` longer than
 * `MAX_STRING_CHARS`; `prefix` names where the message sits (`messages[3]` in a stream).
 */
export function checkStringLengths(message: unknown, prefix = ''): void {
  const at = (path: string, part: string) => (path ? `${path}.${part}` : part);
  const visit = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      if (value.length > MAX_STRING_CHARS) throw invalidArgument(path || 'request', `at most ${MAX_STRING_CHARS} characters, got ${value.length}`);
      return;
    }
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    if (Array.isArray(value)) {
      const n = Math.min(value.length, MAX_WALK_ITEMS);
      for (let i = 0; i < n; i++) visit(value[i], `${path}[${i}]`);
      return;
    }
    let seen = 0;
    for (const key in value as Record<string, unknown>) {
      if (++seen > MAX_WALK_ITEMS) return;
      if (key.length > MAX_STRING_CHARS) throw invalidArgument(path || 'request', `map keys are at most ${MAX_STRING_CHARS} characters, got ${key.length}`);
      visit((value as Record<string, unknown>)[key], at(path, protoName(key)));
    }
  };
  visit(message, prefix);
}

/** `requests` with every message checked by `checkStringLengths` as it arrives (`messages[i]`). */
export async function* checkedStream<T>(requests: AsyncIterable<T>): AsyncGenerator<T> {
  let i = 0;
  for await (const r of requests) {
    checkStringLengths(r, `messages[${i++}]`);
    yield r;
  }
}
