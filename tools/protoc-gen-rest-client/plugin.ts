/**
 * protoc-gen-rest-client: a buf plugin writing a typed TypeScript REST client for every service
 * of the input, from the same `google.api.http` annotations the gateway compiles its routes from
 * (the path templates are parsed by the gateway's own parser). Per proto file it writes
 * `<file>.rest.ts`: an input type and a proto3-JSON field table per message the services reach,
 * and per service a client class whose methods take and return the ts-proto message types. Once
 * per run it writes `rest_runtime.ts` (the shared, hand-written runtime, copied verbatim) and
 * `rest_clients.ts` (every service of the run, by full name, and a factory for all clients).
 *
 * Options: `runtime=<path>` imports the runtime from `<path>` (relative to the output root, no
 * extension) instead of writing it, so a second output (the test-only contract) shares the
 * first one's runtime and error class.
 *
 * Run by buf through tsx straight from these sources (buf.gen.yaml); it imports nothing from
 * `gen/`, so it never depends on its own output.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getOption, hasOption, ScalarType, type DescEnum, type DescExtension, type DescField, type DescMessage, type DescMethod, type DescService } from '@bufbuild/protobuf';
import { createEcmaScriptPlugin, getComments, type GeneratedFile, type Printable, type Schema } from '@bufbuild/protoplugin';
import { parseTemplate, type Segment } from '../../src/transport/rest/path-template';
import { codecName, enumTableName, inputName, lowerFirst, restImportPath, tsProtoFieldName, tsProtoImportPath, tsProtoTypeName } from './names';

interface Options {
  /** Import path of the runtime from the output root, or undefined to write `rest_runtime.ts`. */
  readonly runtime?: string;
}

/** Well-known types whose proto3 JSON is plain JSON (ts-proto holds them as plain values too). */
const PLAIN_JSON: Readonly<Record<string, string>> = {
  'google.protobuf.Struct': '{ [key: string]: any }',
  'google.protobuf.Value': 'any',
  'google.protobuf.ListValue': 'any[]',
};
/** A response (or response field) of this type is the raw HTTP body, as the gateway sends it. */
const HTTP_BODY = 'google.api.HttpBody';

const REQUIRED = 2; // google.api.FieldBehavior.REQUIRED
const OUTPUT_ONLY = 3; // google.api.FieldBehavior.OUTPUT_ONLY

/** A service method's REST binding, read from its `google.api.http` rule. */
interface Binding {
  readonly method: DescMethod;
  readonly verb: string;
  readonly template: string;
  readonly body: string;
  readonly responseBody: string;
}

export const plugin = createEcmaScriptPlugin<Options>({
  name: 'protoc-gen-rest-client',
  version: 'v1',
  parseOptions(raw) {
    let runtime: string | undefined;
    for (const { key, value } of raw) {
      if (key === 'runtime') runtime = value;
      else throw new Error(`unknown option ${key}`);
    }
    return { runtime };
  },
  generateTs(schema) {
    const ext = (name: string) => schema.allFiles.flatMap((f) => f.extensions).find((e) => e.typeName === name);
    const http = ext('google.api.http');
    const behavior = ext('google.api.field_behavior');
    const services = schema.files.flatMap((f) => f.services);
    const bindings = new Map(services.map((s) => [s, s.methods.map((m) => bindingOf(m, http)).filter((b): b is Binding => b !== undefined)]));
    const all = [...bindings.values()].flat();
    const reached = reachable(all.flatMap((b) => [b.method.input, b.method.output]));
    const inputs = reachable(all.map((b) => b.method.input)).messages;
    const runtimePath = schema.options.runtime === undefined ? './rest_runtime.js' : `${schema.options.runtime}.js`;
    const fieldBehaviors = (f: DescField): number[] => (behavior && hasOption(f, behavior) ? (getOption(f, behavior) as number[]) : []);

    for (const file of schema.files) {
      const messages = [...reached.messages].filter((m) => m.file === file);
      const enums = [...reached.enums].filter((e) => e.file === file);
      const fileServices = file.services.filter((s) => bindings.get(s)!.length > 0);
      if (messages.length + enums.length + fileServices.length === 0) continue;
      const f = schema.generateFile(`${file.name}.rest.ts`);
      f.preamble(file);
      const rt = (name: string, typeOnly = false) => f.import(name, runtimePath, typeOnly);
      for (const e of enums) {
        f.print(f.jsDoc(`proto3 JSON names of ${e.typeName}.`));
        f.print(f.export('const', enumTableName(e)), ': ', rt('EnumType', true), ' = { enumName: ', f.string(e.typeName), ', names: { ', e.values.map((v) => `${v.number}: ${JSON.stringify(v.name)}`).join(', '), ' } };');
        f.print();
      }
      for (const m of messages) printMessage(f, m, rt, fieldBehaviors, inputs.has(m));
      for (const s of fileServices) printService(f, s, bindings.get(s)!, rt);
    }
    printIndex(schema, services.filter((s) => bindings.get(s)!.length > 0), runtimePath);
    if (schema.options.runtime === undefined) {
      const f = schema.generateFile('rest_runtime.ts');
      f.print('// @generated by protoc-gen-rest-client v1 from tools/protoc-gen-rest-client/runtime.ts. DO NOT EDIT.');
      f.print(readFileSync(join(__dirname, 'runtime.ts'), 'utf8').trimEnd());
    }
  },
});

function bindingOf(method: DescMethod, http: DescExtension | undefined): Binding | undefined {
  if (!http || !hasOption(method, http)) return undefined; // no REST binding: gRPC only
  if (method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming') return undefined; // the gateway serves neither
  const rule = getOption(method, http) as unknown as { pattern: { case: string | undefined; value?: unknown }; body: string; responseBody: string };
  const { pattern } = rule;
  const [verb, template] =
    pattern.case === 'custom'
      ? [(pattern.value as { kind: string }).kind.toUpperCase(), (pattern.value as { path: string }).path]
      : [String(pattern.case).toUpperCase(), String(pattern.value)];
  return { method, verb, template, body: rule.body, responseBody: rule.responseBody };
}

/** Every message and enum the given messages reach through their fields (map entries excluded). */
function reachable(roots: readonly DescMessage[]): { messages: Set<DescMessage>; enums: Set<DescEnum> } {
  const messages = new Set<DescMessage>();
  const enums = new Set<DescEnum>();
  const visit = (m: DescMessage) => {
    if (messages.has(m) || m.typeName in PLAIN_JSON || m.typeName === HTTP_BODY) return;
    if (m.file.proto.package === 'google.protobuf') throw new Error(`${m.typeName}: well-known types are not mapped by protoc-gen-rest-client yet`);
    messages.add(m);
    for (const fd of m.fields) {
      const target = fd.fieldKind === 'message' ? fd.message : fd.fieldKind === 'list' || fd.fieldKind === 'map' ? (fd.message ?? fd.enum) : fd.fieldKind === 'enum' ? fd.enum : undefined;
      if (target?.kind === 'message') visit(target);
      else if (target?.kind === 'enum') enums.add(target);
    }
  };
  roots.forEach(visit);
  return { messages, enums };
}

const INT64 = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

function scalarKind(s: ScalarType): string {
  if (s === ScalarType.STRING) return 'string';
  if (s === ScalarType.BOOL) return 'bool';
  if (s === ScalarType.BYTES) return 'bytes';
  if (s === ScalarType.DOUBLE || s === ScalarType.FLOAT) return 'double';
  return INT64.has(s) ? 'int64' : 'int32';
}

function scalarTsType(s: ScalarType): string {
  const kind = scalarKind(s);
  return kind === 'string' ? 'string' : kind === 'bool' ? 'boolean' : kind === 'bytes' ? 'Uint8Array' : kind === 'int64' ? 'string | number | bigint' : 'number';
}

type Rt = (name: string, typeOnly?: boolean) => ReturnType<GeneratedFile['import']>;

/** The value type of a field (its element type for lists and maps) as a table entry and an input type. */
function valueOf(f: GeneratedFile, fd: DescField): { table: Printable[]; input: Printable[] } {
  const msg = fd.fieldKind === 'message' ? fd.message : fd.fieldKind === 'list' || fd.fieldKind === 'map' ? fd.message : undefined;
  if (msg && msg.typeName in PLAIN_JSON) return { table: ['"json"'], input: [PLAIN_JSON[msg.typeName]] };
  if (msg?.typeName === HTTP_BODY) return { table: ['"raw"'], input: ['never'] };
  if (msg) {
    return {
      table: ['() => ', f.import(codecName(msg), restImportPath(msg.file))],
      input: [f.import(inputName(msg), restImportPath(msg.file), true)],
    };
  }
  const en = fd.fieldKind === 'enum' ? fd.enum : fd.fieldKind === 'list' || fd.fieldKind === 'map' ? fd.enum : undefined;
  if (en) return { table: [f.import(enumTableName(en), restImportPath(en.file))], input: [f.import(tsProtoTypeName(en), tsProtoImportPath(en.file), true)] };
  const scalar = (fd as { scalar: ScalarType }).scalar;
  return { table: [JSON.stringify(scalarKind(scalar))], input: [scalarTsType(scalar)] };
}

function printMessage(f: GeneratedFile, m: DescMessage, rt: Rt, behaviors: (f: DescField) => number[], isInput: boolean): void {
  const type = f.import(tsProtoTypeName(m), tsProtoImportPath(m.file), true);
  if (isInput) printInput(f, m, behaviors);
  f.print(f.jsDoc(`proto3 JSON field table of ${m.typeName}.`));
  f.print(f.export('const', codecName(m)), ': ', rt('MessageCodec', true), '<', type, '> = ', rt('message'), '<', type, '>(', f.string(m.typeName), ', {');
  for (const fd of m.fields) {
    const { table } = valueOf(f, fd);
    const explicit = fd.fieldKind === 'message' || fd.proto.proto3Optional || fd.oneof !== undefined;
    const required = behaviors(fd).includes(REQUIRED) && !behaviors(fd).includes(OUTPUT_ONLY);
    const kind = fd.fieldKind === 'list' ? 'list' : fd.fieldKind === 'map' ? 'map' : explicit ? 'optional' : required ? 'required' : 'single';
    const key = fd.fieldKind === 'map' ? `, ${JSON.stringify(scalarKind(fd.mapKey) === 'bool' ? 'bool' : scalarKind(fd.mapKey))}` : '';
    f.print('  ', tsProtoFieldName(fd), ': ', rt('field'), '(', f.string(fd.name), ', ', ...table, kind === 'single' ? '' : `, ${JSON.stringify(kind)}`, key, '),');
  }
  f.print('});');
  f.print();
}

/** The input type of a message: what a call takes (REQUIRED fields required, everything else optional). */
function printInput(f: GeneratedFile, m: DescMessage, behaviors: (f: DescField) => number[]): void {
  f.print(f.jsDoc(`${m.typeName} as a call takes it: REQUIRED fields must be set, the others default as in proto3 (any ${tsProtoTypeName(m)} is one).`));
  f.print(f.export('interface', inputName(m)), ' {');
  for (const fd of m.fields) {
    const b = behaviors(fd);
    const { input } = valueOf(f, fd);
    const optional = b.includes(REQUIRED) && !b.includes(OUTPUT_ONLY) ? '' : '?';
    const t = fd.fieldKind === 'list' ? (input.some((x) => typeof x === 'string' && x.includes('|')) ? ['(', ...input, ')[]'] : [...input, '[]']) : fd.fieldKind === 'map' ? [`{ [key: ${fd.mapKey === ScalarType.INT32 || fd.mapKey === ScalarType.UINT32 || fd.mapKey === ScalarType.SINT32 ? 'number' : 'string'}]: `, ...input, ' }'] : input;
    const text = comment(fd) ?? '';
    const doc = [text, b.includes(REQUIRED) && !/\brequired\b/i.test(text) ? 'Required.' : '', b.includes(OUTPUT_ONLY) && !/\boutput only\b/i.test(text) ? 'Output only.' : ''].filter(Boolean).join('\n');
    if (doc) f.print(f.jsDoc(doc, '  '));
    f.print('  ', tsProtoFieldName(fd), optional, ': ', ...t, optional ? ' | undefined' : '', ';');
  }
  f.print('}');
  f.print();
}

/** The template as the runtime's path parts: literal text and field variables. */
function pathParts(b: Binding): string {
  const t = parseTemplate(b.template);
  const parts: (string | { field: string; multi: boolean })[] = [];
  const literal = (s: string) => (typeof parts[parts.length - 1] === 'string' ? (parts[parts.length - 1] += s) : parts.push(s));
  const plain = (s: Segment): string => {
    if (s.kind === 'literal') return s.raw;
    throw new Error(`${b.method.parent.typeName}.${b.method.name}: ${b.template} has a wildcard outside a variable, which a client cannot fill`);
  };
  for (const s of t.segments) {
    literal('/');
    if (s.kind === 'variable') {
      const multi = s.segments.length !== 1 || s.segments[0].kind !== 'wildcard';
      if (multi && s.segments.some((x) => x.kind === 'literal')) throw new Error(`${b.template}: variables with literal segments are not supported by protoc-gen-rest-client`);
      parts.push({ field: s.fieldPath, multi });
    } else literal(plain(s));
  }
  if (t.verb !== undefined) literal(`:${t.verb}`);
  return JSON.stringify(parts);
}

/** A list method: `page_size` and `cursor` in, `next_cursor` and one repeated message field out. */
function pageOf(m: DescMethod): string | undefined {
  const has = (msg: DescMessage, name: string) => msg.fields.some((fd) => fd.name === name && fd.fieldKind === 'scalar');
  if (!has(m.input, 'page_size') || !has(m.input, 'cursor') || !has(m.output, 'next_cursor')) return undefined;
  const lists = m.output.fields.filter((fd) => fd.fieldKind === 'list');
  if (lists.length !== 1) return undefined;
  return `{ items: ${JSON.stringify(tsProtoFieldName(lists[0]))}, cursor: "cursor", nextCursor: "nextCursor" }`;
}

function printService(f: GeneratedFile, s: DescService, bindings: readonly Binding[], rt: Rt): void {
  const specName = `${s.name}$rest`;
  const clientName = `${s.name}RestClient`;
  f.print(f.jsDoc(`${comment(s) ?? s.typeName}\n\nREST client: every method throws ApiError on failure.`));
  f.print(f.export('class', clientName), ' extends ', rt('RestClient'), ' {');
  for (const b of bindings) {
    const m = b.method;
    const input = f.import(inputName(m.input), restImportPath(m.input.file), true);
    const output = f.import(tsProtoTypeName(m.output), tsProtoImportPath(m.output.file), true);
    const call = rt('CallOptions', true);
    const doc = `${comment(m) ?? m.name}\n\n\`${b.verb} ${b.template}\``;
    f.print(f.jsDoc(doc, '  '));
    if (m.methodKind === 'client_streaming') {
      f.print('  ', m.localName, '(requests: Iterable<', input, '> | AsyncIterable<', input, '>, options?: ', call, '): Promise<', output, '> {');
      f.print('    return this.clientStream(', specName, '.methods.', m.name, ', requests, options);');
    } else {
      f.print('  ', m.localName, '(request: ', input, ', options?: ', call, '): Promise<', output, '> {');
      f.print('    return this.unary(', specName, '.methods.', m.name, ', request, options);');
    }
    f.print('  }');
    const page = pageOf(m);
    if (page) {
      const items = m.output.fields.find((fd) => fd.fieldKind === 'list')!;
      const item = items.message ? f.import(tsProtoTypeName(items.message), tsProtoImportPath(items.message.file), true) : scalarTsType((items as { scalar: ScalarType }).scalar);
      f.print();
      f.print(f.jsDoc(`Every item of ${m.name}, page after page (following \`next_cursor\`; \`page_size\` sets the page size).`, '  '));
      f.print('  ', m.localName, 'All(request: ', input, ', options?: ', call, '): AsyncGenerator<', item, ', void, undefined> {');
      f.print('    return this.paginate(', specName, '.methods.', m.name, ', request, options);');
      f.print('  }');
    }
    f.print();
  }
  f.print('}');
  f.print();
  f.print(f.jsDoc(`The REST bindings of ${s.typeName}, from its google.api.http rules.`));
  f.print(f.export('const', specName), ' = {');
  f.print('  typeName: ', f.string(s.typeName), ',');
  f.print('  client: ', clientName, ',');
  f.print('  methods: {');
  for (const b of bindings) {
    const m = b.method;
    const spec = rt('MethodSpec', true);
    const inType = f.import(tsProtoTypeName(m.input), tsProtoImportPath(m.input.file), true);
    const outType = f.import(tsProtoTypeName(m.output), tsProtoImportPath(m.output.file), true);
    const page = pageOf(m);
    const stream = m.methodKind === 'client_streaming';
    if (stream && parseTemplate(b.template).variables.length > 0) throw new Error(`${s.typeName}.${m.name}: the gateway takes no path variables on a client stream`);
    f.print('    ', m.name, ': {');
    f.print('      name: ', f.string(m.name), ', method: ', f.string(m.localName), ', verb: ', f.string(b.verb), ', template: ', f.string(b.template), ', path: ', pathParts(b), ',');
    f.print('      body: ', f.string(b.body), ', responseBody: ', f.string(b.responseBody), ',');
    f.print('      input: ', f.import(codecName(m.input), restImportPath(m.input.file)), ', output: ', f.import(codecName(m.output), restImportPath(m.output.file)), ',');
    if (stream) f.print('      stream: true,');
    if (rawBodyOf(m, b)) f.print('      rawBody: true,');
    if (page) f.print('      page: ', page, ',');
    f.print('    } satisfies ', spec, '<', inType, ', ', outType, '>,');
  }
  f.print('  },');
  f.print('} as const;');
  f.print();
}

/** True when the method answers a `google.api.HttpBody` (whole, or as its `response_body` field): the raw body. */
function rawBodyOf(m: DescMethod, b: Binding): boolean {
  if (m.input.fields.some((fd) => fd.message?.typeName === HTTP_BODY)) throw new Error(`${m.parent.typeName}.${m.name}: a google.api.HttpBody request is not supported by protoc-gen-rest-client`);
  const sent = b.responseBody ? m.output.fields.find((fd) => fd.name === b.responseBody)?.message : m.output;
  return sent?.typeName === HTTP_BODY;
}

/** `rest_clients.ts`: every service of this run by full name, and one factory for all clients. */
function printIndex(schema: Schema<Options>, services: readonly DescService[], runtimePath: string): void {
  if (services.length === 0) return;
  const f = schema.generateFile('rest_clients.ts');
  const runtime = runtimePath.replace(/\.js$/, '');
  f.print('// @generated by protoc-gen-rest-client v1. DO NOT EDIT.');
  f.print('/* eslint-disable */');
  f.print(`import type { ClientOptions } from ${JSON.stringify(runtime)};`);
  for (const s of services) f.print(`import { ${s.name}$rest, ${s.name}RestClient } from ${JSON.stringify(restImportPath(s.file).replace(/\.js$/, ''))};`);
  f.print();
  f.print(`export { ApiError, type ApiErrorInit, type CallOptions, type ClientOptions, type MethodSpec } from ${JSON.stringify(runtime)};`);
  f.print();
  f.print(f.jsDoc('The REST binding of every service, by full proto name.'));
  f.print('export const REST_SERVICES = {');
  for (const s of services) f.print(`  ${JSON.stringify(s.typeName)}: ${s.name}$rest,`);
  f.print('} as const;');
  f.print();
  f.print(f.jsDoc('One client per service, all with the same options.'));
  f.print('export function createRestClients(options: ClientOptions) {');
  f.print('  return {');
  for (const s of services) f.print(`    ${lowerFirst(s.name)}: new ${s.name}RestClient(options),`);
  f.print('  };');
  f.print('}');
}

/** The leading comment of a descriptor, trimmed. */
function comment(desc: DescField | DescService | DescMethod): string | undefined {
  const text = getComments(desc).leading?.trim();
  return text ? text.split('\n').map((l) => l.replace(/^ /, '')).join('\n') : undefined;
}
