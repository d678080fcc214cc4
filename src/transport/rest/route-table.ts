/**
 * The REST route table, compiled once at start-up from the `google.api.http` annotations in
 * the descriptor image (STYLE 3). No REST path is written by hand anywhere: a new annotated
 * method gets its route by being in the image and the method table.
 */
import { getOption, hasOption, type DescMessage, type DescMethod, type Registry } from '@bufbuild/protobuf';
import type { MethodEntry } from '../../rpc/method';
import { compareTemplates, parseTemplate, type PathTemplate } from './path-template';

/** One REST binding of a method. */
export interface Route {
  readonly httpMethod: string;
  readonly template: PathTemplate;
  /** `*` (whole request), a field name, or empty (no body: fields from path and query). */
  readonly body: string;
  /** Empty (whole response) or the response field sent as the body. */
  readonly responseBody: string;
  /**
   * True when what is sent is a `google.api.HttpBody` (the whole response or its
   * `response_body` field): its `data` goes out as the raw body with its `content_type`, as
   * grpc-gateway does, instead of the message's JSON form.
   */
  readonly rawBody: boolean;
  readonly entry: MethodEntry;
  /** The method's descriptor (comments, options). */
  readonly method: DescMethod;
  readonly input: DescMessage;
  readonly output: DescMessage;
}

/** The message whose `data` is sent raw. */
const HTTP_BODY = 'google.api.HttpBody';

export type RouteMatch =
  | { readonly kind: 'found'; readonly route: Route; readonly vars: Record<string, string> }
  | { readonly kind: 'method_not_allowed'; readonly allowed: readonly string[] }
  | { readonly kind: 'not_found' };

interface HttpRuleLike {
  pattern: { case: string | undefined; value?: unknown };
  body: string;
  responseBody: string;
  additionalBindings: HttpRuleLike[];
}

export class RouteTable {
  /**
   * Methods that take an `Idempotency-Key` (API.md section 11: every POST method), by gRPC path:
   * the one list the idempotency interceptor (both protocols) and the OpenAPI document follow.
   */
  readonly idempotentMethods: ReadonlySet<string>;

  private constructor(readonly routes: readonly Route[]) {
    this.idempotentMethods = new Set(routes.filter((r) => r.httpMethod === 'POST').map((r) => r.entry.path));
  }

  /** Compile the routes of every method in `methods` that carries a `google.api.http` rule. */
  static compile(methods: ReadonlyMap<string, MethodEntry>, registry: Registry): RouteTable {
    const ext = registry.getExtension('google.api.http');
    if (!ext) throw new Error('google.api.http is not in the descriptor image');
    const routes: Route[] = [];
    for (const entry of methods.values()) {
      const desc = registry.getService(entry.service)?.methods.find((m) => m.name === entry.name);
      if (!desc || !hasOption(desc, ext)) continue;
      const rule = getOption(desc, ext) as unknown as HttpRuleLike;
      for (const r of [rule, ...rule.additionalBindings]) routes.push(toRoute(r, entry, desc));
    }
    routes.sort((a, b) => compareTemplates(a.template, b.template) || a.httpMethod.localeCompare(b.httpMethod));
    return new RouteTable(routes);
  }

  /** Find the route for a request; distinguishes unknown paths (404) from other methods (405). */
  match(httpMethod: string, rawPath: string): RouteMatch {
    const allowed = new Set<string>();
    for (const route of this.routes) {
      const vars = route.template.match(rawPath);
      if (!vars) continue;
      if (route.httpMethod === httpMethod) return { kind: 'found', route, vars };
      allowed.add(route.httpMethod);
    }
    return allowed.size > 0 ? { kind: 'method_not_allowed', allowed: [...allowed].sort() } : { kind: 'not_found' };
  }
}

function toRoute(rule: HttpRuleLike, entry: MethodEntry, desc: DescMethod): Route {
  let httpMethod: string;
  let path: string;
  const { pattern } = rule;
  if (pattern.case === 'custom') {
    const custom = pattern.value as { kind: string; path: string };
    httpMethod = custom.kind.toUpperCase();
    path = custom.path;
  } else if (pattern.case && typeof pattern.value === 'string') {
    httpMethod = pattern.case.toUpperCase();
    path = pattern.value;
  } else {
    throw new Error(`${entry.path}: google.api.http rule has no pattern`);
  }
  if (rule.body && rule.body !== '*' && !desc.input.fields.some((f) => f.name === rule.body)) {
    throw new Error(`${entry.path}: body field ${rule.body} is not in ${desc.input.typeName}`);
  }
  if (rule.responseBody && !desc.output.fields.some((f) => f.name === rule.responseBody)) {
    throw new Error(`${entry.path}: response_body field ${rule.responseBody} is not in ${desc.output.typeName}`);
  }
  const sent = rule.responseBody ? desc.output.fields.find((f) => f.name === rule.responseBody)!.message : desc.output;
  return {
    httpMethod,
    template: parseTemplate(path),
    body: rule.body,
    responseBody: rule.responseBody,
    rawBody: sent?.typeName === HTTP_BODY,
    entry,
    method: desc,
    input: desc.input,
    output: desc.output,
  };
}
