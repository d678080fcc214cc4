/**
 * Methods and endpoints. A method is known by its gRPC path (`/forecast.v1.EntityService/GetEntity`)
 * and its generated (ts-proto, grpc-js) definition, which gives binary codecs to both transports.
 * An endpoint is the protocol-neutral implementation: written once, called by gRPC and REST alike.
 */
import type { Scope } from '../accounts/tiers';
import type { CallContext } from './context';

/** The shape of a ts-proto `outputServices=grpc-js` method definition. */
export interface MethodDefinition<Req = any, Res = any> {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  requestSerialize(value: Req): Buffer;
  requestDeserialize(bytes: Buffer): Req;
  responseSerialize(value: Res): Buffer;
  responseDeserialize(bytes: Buffer): Res;
}

/** A generated service definition: method name → definition. */
export type ServiceDefinition = { readonly [method: string]: MethodDefinition };

/**
 * Who may call: `public` (no key, e.g. GetVersion), `authenticated` (any valid key), or a scope
 * the key must have.
 */
export type Access = 'public' | 'authenticated' | Scope;

/** A unary endpoint. */
export interface UnaryEndpoint<Req, Res> {
  readonly access: Access;
  handle(request: Req, ctx: CallContext): Promise<Res>;
}

/** A client-streaming endpoint: the requests arrive as an async iterable, one response. */
export interface ClientStreamEndpoint<Req, Res> {
  readonly access: Access;
  /**
   * Called once the caller is authenticated, before anything reads the stream (interceptors
   * such as idempotency read it whole): throw to refuse the call at once, or return what to run
   * when the call has ended. Why here: found by review, a limit on open streams counted in
   * `handleStream` let any number of streams with an `Idempotency-Key` sit open.
   */
  admit?(ctx: CallContext): () => void;
  handleStream(requests: AsyncIterable<Req>, ctx: CallContext): Promise<Res>;
}

/** The implementation of a whole service, type-checked against its generated definition. */
export type ServiceImpl<S extends ServiceDefinition> = {
  [K in keyof S]: S[K] extends MethodDefinition<infer Req, infer Res>
    ? S[K]['requestStream'] extends true
      ? ClientStreamEndpoint<Req, Res>
      : UnaryEndpoint<Req, Res>
    : never;
};

/** A method ready to serve: definition + endpoint + facts from the descriptors. */
export interface MethodEntry {
  /** `/forecast.v1.EntityService/GetEntity`. */
  readonly path: string;
  /** `forecast.v1.EntityService`. */
  readonly service: string;
  /** `GetEntity`. */
  readonly name: string;
  /** Key of the method in the generated definition (`getEntity`), as grpc-js expects. */
  readonly key: string;
  readonly definition: MethodDefinition;
  readonly endpoint: UnaryEndpoint<unknown, unknown> | ClientStreamEndpoint<unknown, unknown>;
  /**
   * True when the method changes nothing (its `google.api.http` rule is a GET): at its deadline
   * the pipeline answers 504 at once. Any other method may write, and a write that started
   * answers its real outcome (see `Pipeline` on deadlines).
   */
  readonly readOnly: boolean;
  /** Set when the method is `deprecated = true` in the proto: when it was announced, when it goes. */
  readonly deprecation?: Deprecation;
  /** Request fields marked `deprecated = true`: using one adds the deprecation headers too. */
  readonly deprecatedFields: readonly { readonly localName: string; readonly deprecation: Deprecation }[];
}

/**
 * A deprecation: announced at `since`, removed no earlier than `sunset` (≥ 12 months later, the
 * seed's notice period), documented at `link`.
 */
export interface Deprecation {
  readonly since: number;
  readonly sunset: number;
  readonly link: string;
}
