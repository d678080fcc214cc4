/**
 * The gRPC transport: a thin grpc-js adapter. Each method of the table is registered with a
 * handler that builds an `IncomingCall` and hands the call to the pipeline; outcomes map to
 * gRPC status, initial metadata and trailers. Plus grpc.health.v1 and server reflection.
 */
import * as grpc from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import type { IncomingCall } from '../../rpc/context';
import { ClientCancelledError, invalidArgument, payloadTooLarge, ServiceError } from '../../rpc/errors';
import type { MethodEntry } from '../../rpc/method';
import type { CallOutcome, Pipeline } from '../../rpc/pipeline';
import { encodeStatusDetails } from './status-details';

export interface GrpcServerOptions {
  /** Largest request message accepted (`Config.maxGrpcMessageBytes`); also the largest response sent. */
  readonly maxMessageBytes: number;
  /** Most bytes of all messages of one client stream (`Config.maxStreamBytes`). */
  readonly maxStreamBytes: number;
  /** The descriptor image bytes, served by reflection. */
  readonly descriptorBytes: Buffer;
}

/**
 * How far past `maxMessageBytes` grpc-js itself still receives a message. A message over the
 * limit is refused by our own check (`decodeMessage`), after authentication, as every other
 * error is: `payload_too_large` in the ErrorInfo, `request-id` in the trailers. grpc-js's own
 * limit cannot give that answer: its decoder refuses a larger message by sending a bare
 * RESOURCE_EXHAUSTED status ("Received message larger than max") from the call underneath every
 * server interceptor (grpc-js 1.14: `BaseServerInterceptingCall.handleDataFrame`), so no
 * interceptor or handler sees or rewrites it, and it carries no request-id. So grpc-js's limit
 * is set this many times higher, as a ceiling on memory only: what remains is that a message over
 * 4 × 4 MiB still gets grpc-js's bare status. (grpc-js buffers a message as it arrives, not at
 * its declared size, so the ceiling costs memory only when a client really sends that much.)
 */
const RECEIVE_CEILING_FACTOR = 4;

/** A gRPC server for every method in the pipeline's table, not yet bound to a port. */
export function createGrpcServer(pipeline: Pipeline, options: GrpcServerOptions): { server: grpc.Server; health: HealthImplementation } {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes * RECEIVE_CEILING_FACTOR,
    'grpc.max_send_message_length': options.maxMessageBytes,
    // Channelz (per-call statistics for the channelz service) is not served here: skip its bookkeeping.
    'grpc.enable_channelz': 0,
  });
  const byService = new Map<string, MethodEntry[]>();
  for (const entry of pipeline.methods.values()) {
    const list = byService.get(entry.service) ?? [];
    list.push(entry);
    byService.set(entry.service, list);
  }
  const healthStatus: Record<string, 'SERVING'> = { '': 'SERVING' };
  for (const [service, entries] of byService) {
    const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
    const impl: grpc.UntypedServiceImplementation = {};
    for (const entry of entries) {
      // grpc-js receives the raw bytes: a message that does not decode is judged by the pipeline
      // (after authentication, as INVALID_ARGUMENT with our error details), not answered by
      // grpc-js with a bare INTERNAL "Error deserializing request".
      definition[entry.key] = { ...entry.definition, requestDeserialize: (bytes: Buffer) => bytes } as unknown as grpc.MethodDefinition<unknown, unknown>;
      impl[entry.key] = entry.definition.requestStream ? clientStreamHandler(pipeline, entry, options) : unaryHandler(pipeline, entry, options);
    }
    server.addService(definition as grpc.ServiceDefinition, impl);
    healthStatus[service] = 'SERVING';
  }
  const health = new HealthImplementation(healthStatus);
  health.addToServer(server);
  const reflection = new ReflectionService(loadFileDescriptorSetFromBuffer(options.descriptorBytes));
  reflection.addToServer(server);
  return { server, health };
}

function unaryHandler(pipeline: Pipeline, entry: MethodEntry, limits: GrpcServerOptions): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    pipeline
      .unary(entry, () => decodeMessage(entry, call.request as Buffer, 'request', limits.maxMessageBytes), incomingOf(call))
      .then((outcome) => finish(call, callback, outcome))
      .catch((err) => failSafe(callback, err));
  };
}

function clientStreamHandler(pipeline: Pipeline, entry: MethodEntry, limits: GrpcServerOptions): grpc.handleClientStreamingCall<unknown, unknown> {
  return (call, callback) => {
    pipeline
      .clientStream(entry, decodeStream(entry, call, limits), incomingOf(call))
      .then((outcome) => finish(call, callback, outcome))
      .catch((err) => failSafe(callback, err));
  };
}

/**
 * Decode one request message (the pipeline calls this after authentication); 413 when it is
 * larger than `limit` bytes, 400 naming `field` when the bytes are not a valid message.
 */
function decodeMessage(entry: MethodEntry, bytes: Buffer, field: string, limit: number): unknown {
  if (bytes.length > limit) throw payloadTooLarge(`${field} (${bytes.length} bytes)`, limit);
  try {
    return entry.definition.requestDeserialize(bytes);
  } catch {
    throw invalidArgument(field, `is not a valid ${entry.name} request message (malformed protobuf, ${bytes.length} bytes)`);
  }
}

/**
 * How long a client stream that ended waits for a cancel before the endpoint sees its end. A
 * client that cancels over Node's HTTP/2 (grpc-js `call.cancel()`, or its deadline passing)
 * half-closes its stream and resets it just after: the server's grpc-js ends the messages on the
 * half-close, as if the request were complete, and hears of the reset (the `cancelled` event)
 * a moment later: about a millisecond between processes, tens of milliseconds on a loaded
 * machine. Nothing on the wire tells the two apart, so a bulk write waits this long for the
 * reset before it commits. (A cancel heard later still keeps the commit from happening: it
 * aborts the call's signal, which `Database.transaction` checks right before COMMIT. One that
 * arrives after the commit cannot undo it, as with any RPC.)
 */
const CANCEL_SETTLE_MS = 50;

/**
 * The messages of a client stream, decoded; 413 once they come to more than `maxStreamBytes`. It
 * ends normally only when the client half-closed and did not cancel within `CANCEL_SETTLE_MS`; a
 * cancelled stream fails instead (the pipeline answers with the reason its signal aborted for).
 */
async function* decodeStream(entry: MethodEntry, call: grpc.ServerReadableStream<unknown, unknown>, limits: GrpcServerOptions): AsyncGenerator<unknown> {
  let i = 0;
  let total = 0;
  for await (const bytes of call as AsyncIterable<Buffer>) {
    total += bytes.length;
    if (total > limits.maxStreamBytes) throw payloadTooLarge(`the stream (${i + 1} messages)`, limits.maxStreamBytes);
    yield decodeMessage(entry, bytes, `messages[${i++}]`, limits.maxMessageBytes);
  }
  await new Promise<void>((resolve) => {
    if (call.cancelled) return resolve();
    const settled = () => {
      clearTimeout(timer);
      call.off('cancelled', settled);
      resolve();
    };
    const timer = setTimeout(settled, CANCEL_SETTLE_MS);
    call.once('cancelled', settled);
  });
  if (call.cancelled) throw new ClientCancelledError();
}

function finish(
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerReadableStream<unknown, unknown>,
  callback: grpc.sendUnaryData<unknown>,
  outcome: CallOutcome<unknown>,
): void {
  const metadata = toMetadata(outcome.headers);
  if (outcome.ok) {
    call.sendMetadata(metadata);
    // request-id also in trailers: some clients only surface trailers.
    callback(null, outcome.response, toMetadata({ 'request-id': outcome.headers['request-id'] }));
  } else {
    callback(toGrpcError(outcome.error, metadata));
  }
}

/** The pipeline never rejects; should answering fail anyway, the call still ends (and nothing is left unhandled). */
function failSafe(callback: grpc.sendUnaryData<unknown>, err: unknown): void {
  try {
    callback(toGrpcError(ServiceError.from(err), new grpc.Metadata()));
  } catch {
    // the call has ended already
  }
}

/**
 * Most bytes our error trailers (`grpc-message` and `grpc-status-details-bin`) may take: peers
 * refuse a header list over 8 KiB (grpc-js's default), and with it the stream.
 */
const MAX_ERROR_TRAILER_BYTES = 6000;

/** A pipeline error as a grpc-js error: status, message, trailers with request-id and details. */
export function toGrpcError(error: ServiceError, trailers: grpc.Metadata): Partial<grpc.StatusObject> {
  const meta: Record<string, string> = {};
  if (error.details) for (const [k, v] of Object.entries(error.details)) meta[k] = typeof v === 'string' ? v : JSON.stringify(v);
  let message = error.message;
  let details = encodeStatusDetails(error.grpcStatus, message, error.code, meta);
  // Percent-encoded message + base64 details: keep them under the budget, whatever the input was.
  if (encodeURI(message).length + Math.ceil(details.length / 3) * 4 > MAX_ERROR_TRAILER_BYTES) {
    message = message.slice(0, 200);
    details = encodeStatusDetails(error.grpcStatus, message, error.code, {});
  }
  trailers.set('grpc-status-details-bin', details);
  return { code: error.grpcStatus, details: message, metadata: trailers };
}

function toMetadata(headers: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(headers)) md.set(k, v);
  return md;
}

function incomingOf(call: GrpcCall): IncomingCall {
  return new GrpcIncoming(call);
}

type GrpcCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerReadableStream<unknown, unknown>;

/** The gRPC side of a call. A class so its lazy accessors live on a shared prototype (see `Context` in pipeline.ts). */
class GrpcIncoming implements IncomingCall {
  readonly protocol = 'grpc';
  readonly deadline: number | undefined;
  private abort: AbortController | undefined;

  constructor(private readonly call: GrpcCall) {
    const deadline = call.getDeadline();
    const ms = deadline instanceof Date ? deadline.getTime() : Number(deadline);
    this.deadline = Number.isFinite(ms) ? ms : undefined;
  }

  /** A metadata value; several entries of one key give their values joined by `, `, as over REST. */
  header(name: string): string | undefined {
    const values = this.call.metadata.get(name);
    return values.length === 0 ? undefined : values.map(String).join(', ');
  }

  // Lazy, like the signal: most calls never look at them.
  get peer(): string {
    return this.call.getPeer();
  }

  get signal(): AbortSignal {
    if (!this.abort) {
      const controller = (this.abort = new AbortController());
      const cancel = () => controller.abort(new ClientCancelledError());
      if (this.call.cancelled) cancel();
      else this.call.on('cancelled', cancel);
    }
    return this.abort.signal;
  }
}

/** Bind to host:port (0 = any free port); resolves the bound port. */
export function bindGrpc(server: grpc.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
  });
}

/** Stop accepting calls, drain in-flight ones for up to `graceMs`, then force. */
export function shutdownGrpc(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
