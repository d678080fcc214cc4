/**
 * The parser half of the `google.api.http` path templates (see `path-template.ts` for
 * matching, expansion and ordering). It follows the grammar of google/api/http.proto:
 *
 *     Template  = "/" Segments [ Verb ] ;
 *     Segments  = Segment { "/" Segment } ;
 *     Segment   = "*" | "**" | LITERAL | Variable ;
 *     Variable  = "{" FieldPath [ "=" Segments ] "}" ;
 *     FieldPath = IDENT { "." IDENT } ;
 *     Verb      = ":" LITERAL ;
 *
 * Design after grpc-gateway's `internal/httprule`, but a hand-written recursive descent over
 * character positions so every error can say where it is. Rules it enforces beyond the bare
 * grammar (all as in http.proto's prose): `**` must be the last segment (a verb may follow),
 * variables do not nest, a field path is bound at most once, LITERAL is RFC 3986 `pchar`s
 * (percent-encoding must be well formed and decode to UTF-8). `/` alone is rejected: the
 * grammar needs at least one segment. The verb is the text after the last `:` that is outside
 * braces and after the last `/` outside braces, so a verb never contains `:` — the same rule
 * the matcher uses on request paths (last raw colon of the last segment).
 */

/** A template that does not follow the grammar; `position` is a 0-based index into `template`. */
export class TemplateSyntaxError extends Error {
  override readonly name = 'TemplateSyntaxError';
  constructor(
    /** The template as given. */
    readonly template: string,
    /** 0-based offset of the offending character (`template.length` for "ended too early"). */
    readonly position: number,
    /** Human-readable reason, without the template. */
    readonly reason: string,
  ) {
    super(`invalid path template ${JSON.stringify(template)}: ${reason} at position ${position}`);
  }
}

/** A LITERAL segment: `raw` as written in the template, `value` percent-decoded (compared to decoded paths). */
export interface LiteralSegment {
  readonly kind: 'literal';
  readonly raw: string;
  readonly value: string;
}
/** `*`: exactly one non-empty path segment. */
export interface WildcardSegment {
  readonly kind: 'wildcard';
}
/** `**`: zero or more path segments (any content); only ever the last segment. */
export interface DeepWildcardSegment {
  readonly kind: 'deepWildcard';
}
/** A segment allowed inside a variable (variables do not nest). */
export type PlainSegment = LiteralSegment | WildcardSegment | DeepWildcardSegment;
/** `{field.path=segments}`; `{x}` is stored as `{x=*}`, i.e. `segments` is `[wildcard]`. */
export interface VariableSegment {
  readonly kind: 'variable';
  readonly fieldPath: string;
  readonly segments: readonly PlainSegment[];
}
/** One top-level segment of a template. */
export type Segment = PlainSegment | VariableSegment;

/** The syntax tree of a template: its segments and, if any, its verb (as written and decoded). */
export interface ParsedTemplate {
  readonly segments: readonly Segment[];
  readonly verb?: { readonly raw: string; readonly value: string };
}

/**
 * Percent-decode `s` as UTF-8 (every `%XX`, `%2F` included); `undefined` when a `%` is not
 * followed by two hex digits or the bytes are not UTF-8. Shared by the parser and the matcher.
 */
export function tryDecode(s: string): string | undefined {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** Parse `template` into its syntax tree; throws TemplateSyntaxError. Prefer `parseTemplate`. */
export function parseTemplateSyntax(template: string): ParsedTemplate {
  if (!template.startsWith('/')) throw new TemplateSyntaxError(template, 0, 'a template must start with "/"');
  const colon = findVerbColon(template);
  const end = colon < 0 ? template.length : colon;
  const parser = new Parser(template, end);
  const segments = parser.segments(false);
  if (colon < 0) return { segments };
  if (colon + 1 === template.length) throw new TemplateSyntaxError(template, colon + 1, 'verb without literal after ":"');
  const raw = template.slice(colon + 1);
  return { segments, verb: { raw, value: checkLiteral(template, colon + 1, template.length, 'verb') } };
}

/** Index of the verb's `:` (last `:` outside braces after the last `/` outside braces), or -1. */
function findVerbColon(t: string): number {
  let depth = 0;
  let colon = -1;
  for (let i = 1; i < t.length; i++) {
    const c = t[i];
    if (c === '{') depth++;
    else if (c === '}') depth = Math.max(0, depth - 1); // imbalance is reported by the parser
    else if (depth === 0 && c === '/') colon = -1;
    else if (depth === 0 && c === ':') colon = i;
  }
  return colon;
}

const PCHAR_EXTRA = "-._~!$&'()*+,;=:@";
function isPchar(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || PCHAR_EXTRA.includes(c);
}
function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9A-Fa-f]$/.test(c);
}

/** Validate `t[start, end)` as pchars and return it decoded; throws TemplateSyntaxError. */
function checkLiteral(t: string, start: number, end: number, what: string): string {
  for (let i = start; i < end; i++) {
    const c = t[i];
    if (c === '%') {
      if (i + 2 >= end || !isHex(t[i + 1]) || !isHex(t[i + 2])) throw new TemplateSyntaxError(t, i, `malformed percent-encoding in ${what}`);
      i += 2;
    } else if (!isPchar(c)) {
      throw new TemplateSyntaxError(t, i, `invalid character ${JSON.stringify(c)} in ${what}`);
    }
  }
  const value = tryDecode(t.slice(start, end));
  if (value === undefined) throw new TemplateSyntaxError(t, start, `percent-encoding in ${what} is not UTF-8`);
  return value;
}

const IDENT_START = /^[A-Za-z_]$/;
const IDENT_PART = /^[A-Za-z0-9_]$/;

/** Recursive descent over `t[1, end)`; `end` is the verb's colon or the template's length. */
class Parser {
  private pos = 1;
  /** Position of a `**` already parsed: nothing may follow it (except the verb). */
  private deepPos = -1;
  private readonly names = new Set<string>();

  constructor(
    private readonly t: string,
    private readonly end: number,
  ) {}

  private peek(): string | undefined {
    return this.pos < this.end ? this.t[this.pos] : undefined;
  }

  private fail(position: number, reason: string): never {
    throw new TemplateSyntaxError(this.t, position, reason);
  }

  /** Segments = Segment { "/" Segment }; stops at the end, or at `}` inside a variable. */
  segments(inVariable: boolean): Segment[] {
    const out: Segment[] = [];
    for (;;) {
      out.push(this.segment(inVariable));
      const c = this.peek();
      if (c === undefined) return out;
      if (c === '/') {
        this.pos++;
        continue;
      }
      if (c === '}' && inVariable) return out;
      if (c === '}') this.fail(this.pos, 'unbalanced "}"');
      if (c === '{') this.fail(this.pos, 'a variable must be a whole segment');
      this.fail(this.pos, `unexpected ${JSON.stringify(c)} after a variable`);
    }
  }

  private segment(inVariable: boolean): Segment {
    if (this.deepPos >= 0) this.fail(this.deepPos, '"**" must be the last segment');
    const start = this.pos;
    const c = this.peek();
    if (c === '{') {
      if (inVariable) this.fail(start, 'nested variable');
      return this.variable();
    }
    if (c === '}' && !inVariable) this.fail(start, 'unbalanced "}"');
    let i = start;
    while (i < this.end && !'/{}'.includes(this.t[i])) i++;
    if (i === start) this.fail(start, 'empty segment');
    this.pos = i;
    const text = this.t.slice(start, i);
    if (text === '*') return { kind: 'wildcard' };
    if (text === '**') {
      this.deepPos = start;
      return { kind: 'deepWildcard' };
    }
    return { kind: 'literal', raw: text, value: checkLiteral(this.t, start, i, 'literal') };
  }

  /** Variable = "{" FieldPath [ "=" Segments ] "}" */
  private variable(): VariableSegment {
    const start = this.pos++;
    const fieldPath = this.fieldPath();
    let segments: PlainSegment[] = [{ kind: 'wildcard' }];
    const c = this.peek();
    if (c === '=') {
      this.pos++;
      segments = this.segments(true) as PlainSegment[]; // segment(true) never returns a variable
    } else if (c === '{') {
      this.fail(this.pos, 'nested variable');
    } else if (c !== '}' && c !== undefined) {
      this.fail(this.pos, `invalid character ${JSON.stringify(c)} in field path`);
    }
    if (this.peek() !== '}') this.fail(this.pos, 'unterminated variable (missing "}")');
    this.pos++;
    if (this.names.has(fieldPath)) this.fail(start, `duplicate variable ${JSON.stringify(fieldPath)}`);
    this.names.add(fieldPath);
    return { kind: 'variable', fieldPath, segments };
  }

  /** FieldPath = IDENT { "." IDENT }, IDENT = [A-Za-z_][A-Za-z0-9_]* (a proto field name). */
  private fieldPath(): string {
    const start = this.pos;
    for (;;) {
      const c = this.peek();
      if (c === undefined || !IDENT_START.test(c)) {
        this.fail(this.pos, c === undefined ? 'unterminated variable (missing "}")' : `bad identifier: ${JSON.stringify(c)} cannot start a field name`);
      }
      this.pos++;
      while (this.peek() !== undefined && IDENT_PART.test(this.peek() as string)) this.pos++;
      if (this.peek() !== '.') return this.t.slice(start, this.pos);
      this.pos++;
    }
  }
}
