/**
 * `google.api.http` path templates: parse → compile → match (after grpc-gateway's
 * `internal/httprule` and `runtime/pattern.go`), plus the inverse `expand` and the ordering the
 * route table uses. Pure TypeScript; the grammar lives in `path-template-parse.ts`.
 *
 * Decisions (each is tested in test/unit/rest/path-template.test.ts):
 * - Decoding. Captured values are fully percent-decoded as UTF-8 (`%3A` → `:`), `%2F` → `/`
 *   included, for single- AND multi-segment variables. http.proto leaves `%2F` encoded in
 *   multi-segment values and grpc-gateway's default leaves all reserved characters there; we use
 *   its single-segment rule everywhere so a value never depends on the variable's shape. Cost: in
 *   a `**` value a `/` from a segment boundary and one from `%2F` look the same (no id of this
 *   API contains `/`).
 * - Malformed paths. A `%` not followed by two hex digits, or bytes that are not UTF-8, anywhere
 *   in the path make `match` throw PathDecodeError (the gateway answers 400) — for every template,
 *   whether or not it would otherwise match, so the answer does not depend on route order.
 * - Literals are compared decoded: the template's `v1` matches `%76%31`.
 * - Verbs. For a template without a verb the last segment is never split: `{entity}` captures
 *   `store:berlin`. For a template with a verb the verb is the text after the LAST raw `:` of the
 *   last raw segment (an encoded `%3A` never separates), so `{name}:archive` reads
 *   `a:b:archive` as name `a:b`, and a path without that raw `:` does not match.
 * - Empty segments. `*` (and `{x}`) needs a non-empty segment; literals are never empty; `**`
 *   takes zero or more segments, empty ones included (`/v1`, `/v1/` and `/v1/a//b` all match
 *   `/v1/{p=**}`). A trailing `/` is otherwise significant.
 * - A path not starting with `/` matches nothing (null).
 */
import { parseTemplateSyntax, tryDecode, type PlainSegment, type Segment } from './path-template-parse';

export {
  TemplateSyntaxError,
  type DeepWildcardSegment,
  type LiteralSegment,
  type PlainSegment,
  type Segment,
  type VariableSegment,
  type WildcardSegment,
} from './path-template-parse';

/** A request path whose percent-encoding is malformed; the gateway maps it to 400 invalid_argument. */
export class PathDecodeError extends Error {
  override readonly name = 'PathDecodeError';
  constructor(
    /** The raw path segment that failed to decode. */
    readonly segment: string,
  ) {
    super(`malformed percent-encoding in path segment ${JSON.stringify(segment.slice(0, 100))}`);
  }
}

/** `expand` was given a missing value, an unnamed wildcard to fill, or a value its variable cannot match. */
export class PathExpandError extends Error {
  override readonly name = 'PathExpandError';
}

/** A compiled path template. Build one with `parseTemplate`. */
export interface PathTemplate {
  /** The template as written, e.g. `/v1/entities/{entity}`. */
  readonly template: string;
  /** Top-level segments (`{x}` appears as a variable with segments `[wildcard]`). */
  readonly segments: readonly Segment[];
  /** The custom verb as written (without `:`), or undefined. */
  readonly verb?: string;
  /** Bound field paths, in template order (`a.b` for `{a.b}`). */
  readonly variables: readonly string[];
  /**
   * Match a raw request path (percent-encoded, no query string): the decoded variables, or null.
   * Throws PathDecodeError for malformed percent-encoding (see the module doc).
   */
  match(rawPath: string): Record<string, string> | null;
  /**
   * Build a path from variable values (inverse of `match`): single-segment values are encoded
   * except `[-_.~0-9A-Za-z]`; multi-segment ones keep `/` between their segments. Throws PathExpandError.
   */
  expand(values: Readonly<Record<string, string>>): string;
}

/** Parse and compile a template; throws TemplateSyntaxError (with `position` and `reason`). */
export function parseTemplate(template: string): PathTemplate {
  return new CompiledTemplate(template);
}

/**
 * Route order: negative when `a` must be tried before `b`. By (1) more literal segments (those
 * inside variables count; the verb does not); (2) no `**` before `**`; (3) more segments (each
 * `*` is one more required segment, so among `**` templates `/{a}/{b=**}` ⊂ `/{a=**}` comes
 * first — the brief's "fewer wildcards" read as "narrower first", since without `**` two
 * overlapping templates always have equally many); (4) a verb before none, so
 * `/v1/s/{id}:test` is tried before `/v1/s/{id}`; (5) the template strings, for determinism.
 */
export function compareTemplates(a: PathTemplate, b: PathTemplate): number {
  const sa = statsOf(a.segments);
  const sb = statsOf(b.segments);
  return (
    sb.literals - sa.literals ||
    sa.deep - sb.deep ||
    sb.fixed - sa.fixed ||
    (b.verb === undefined ? 0 : 1) - (a.verb === undefined ? 0 : 1) ||
    (a.template < b.template ? -1 : a.template > b.template ? 1 : 0)
  );
}

function statsOf(segments: readonly Segment[]): { literals: number; deep: number; fixed: number } {
  const stats = { literals: 0, deep: 0, fixed: 0 };
  for (const part of flatten(segments).parts) {
    if (part.kind === 'deepWildcard') stats.deep++;
    else stats.fixed++;
    if (part.kind === 'literal') stats.literals++;
  }
  return stats;
}

/** A variable's span over the flattened parts. */
interface Capture {
  readonly fieldPath: string;
  readonly start: number;
  readonly end: number;
  readonly single: boolean;
}

/** Compile: variables become spans [start, end) over one flat list of plain segments. */
function flatten(segments: readonly Segment[]): { parts: PlainSegment[]; captures: Capture[] } {
  const parts: PlainSegment[] = [];
  const captures: Capture[] = [];
  for (const s of segments) {
    if (s.kind !== 'variable') {
      parts.push(s);
      continue;
    }
    const start = parts.length;
    parts.push(...s.segments);
    const single = s.segments.length === 1 && s.segments[0].kind === 'wildcard';
    captures.push({ fieldPath: s.fieldPath, start, end: parts.length, single });
  }
  return { parts, captures };
}

function decodeOrThrow(raw: string): string {
  const value = tryDecode(raw);
  if (value === undefined) throw new PathDecodeError(raw);
  return value;
}

/** Percent-encode everything but `[-_.~0-9A-Za-z]` (http.proto's single-segment rule). */
function encodeSegment(value: string): string {
  try {
    return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  } catch {
    throw new PathExpandError(`value ${JSON.stringify(value.slice(0, 100))} is not well-formed UTF-16`);
  }
}

/** Do the (decoded) `segs` fit `parts`? `**` may only be the last part. */
function fits(parts: readonly PlainSegment[], segs: readonly string[]): boolean {
  const n = parts.length;
  const deep = n > 0 && parts[n - 1].kind === 'deepWildcard';
  if (deep ? segs.length < n - 1 : segs.length !== n) return false;
  for (let i = 0; i < (deep ? n - 1 : n); i++) {
    const part = parts[i];
    if (part.kind === 'literal' ? segs[i] !== part.value : segs[i] === '') return false;
  }
  return true;
}

/** The literal as written, or undefined for wildcards and for pieces past the end (taken by `**`). */
function rawLiteral(part: PlainSegment | undefined): string | undefined {
  return part?.kind === 'literal' ? part.raw : undefined;
}

class CompiledTemplate implements PathTemplate {
  readonly segments: readonly Segment[];
  readonly verb?: string;
  readonly variables: readonly string[];
  private readonly verbValue?: string;
  private readonly parts: readonly PlainSegment[];
  private readonly captures: readonly Capture[];
  private readonly deep: boolean;

  constructor(readonly template: string) {
    const parsed = parseTemplateSyntax(template);
    this.segments = parsed.segments;
    if (parsed.verb) {
      this.verb = parsed.verb.raw;
      this.verbValue = parsed.verb.value;
    }
    const { parts, captures } = flatten(parsed.segments);
    this.parts = parts;
    this.captures = captures;
    this.variables = captures.map((c) => c.fieldPath);
    this.deep = parts[parts.length - 1].kind === 'deepWildcard';
  }

  match(rawPath: string): Record<string, string> | null {
    if (!rawPath.startsWith('/')) return null;
    const raw = rawPath.slice(1).split('/');
    const segs = raw.map(decodeOrThrow); // validates the whole path, whatever the template
    if (this.verbValue !== undefined) {
      const last = raw[raw.length - 1];
      const colon = last.lastIndexOf(':');
      if (colon < 0 || decodeOrThrow(last.slice(colon + 1)) !== this.verbValue) return null;
      segs[segs.length - 1] = decodeOrThrow(last.slice(0, colon));
    }
    if (!fits(this.parts, segs)) return null;
    return Object.fromEntries(
      // fromEntries defines own properties, so even a field named __proto__ is safe.
      this.captures.map((c) => [c.fieldPath, segs.slice(c.start, this.deep && c.end === this.parts.length ? segs.length : c.end).join('/')]),
    );
  }

  expand(values: Readonly<Record<string, string>>): string {
    const out: string[] = [];
    let next = 0;
    for (const c of this.captures) {
      for (; next < c.start; next++) out.push(this.unnamed(next));
      const value = Object.hasOwn(values, c.fieldPath) ? values[c.fieldPath] : undefined;
      if (typeof value !== 'string') throw new PathExpandError(`no value for ${JSON.stringify(c.fieldPath)}`);
      const sub = this.parts.slice(c.start, c.end);
      const pieces = c.single ? [value] : value.split('/');
      if (!fits(sub, pieces)) throw new PathExpandError(`value of ${JSON.stringify(c.fieldPath)} does not match its template`);
      out.push(pieces.map((p, i) => rawLiteral(sub[i]) ?? encodeSegment(p)).join('/'));
      next = c.end;
    }
    for (; next < this.parts.length; next++) out.push(this.unnamed(next));
    // An empty trailing `**` is written as no segment: `/v1`, not `/v1/` (both match it).
    if (this.deep && out.length > 1 && out[out.length - 1] === '') out.pop();
    return `/${out.join('/')}${this.verb === undefined ? '' : `:${this.verb}`}`;
  }

  private unnamed(index: number): string {
    const part = this.parts[index];
    if (part.kind === 'literal') return part.raw;
    throw new PathExpandError(`${this.template}: an unnamed wildcard cannot be expanded`);
  }
}
