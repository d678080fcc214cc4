/**
 * The gRPC transport: a thin grpc-js adapter. Each method of the table is registered with a
 * handler that builds an `IncomingCall` and hands the call to the pipeline; outcomes map to
 * gRPC status, initial metadata and trailers. Plus grpc.health.v1 and server reflection.
 *
 * A request is read only once the pipeline has authenticated its caller (as the REST gateway
 * reads a body), its bytes count against the process's budget while they arrive, and a read
 * that waits too long for them fails (request-intake.ts). Found by QA (on a1f0179): grpc-js read
 * a unary request before any handler ran, so 100 connections without a key, each sending 15 MB
 * of a message announced as 16 MiB and holding it, took the process from 394 MB to 1.6 GB.
 */
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import type { Principal } from '../../accounts/auth';
import type { Clock } from '../../clock';
import { newId } from '../../ids';
import type { Logger } from '../../log';
import type { IncomingCall } from '../../rpc/context';
import { ClientCancelledError, invalidArgument, payloadTooLarge, ServiceError } from '../../rpc/errors';
import type { MethodEntry } from '../../rpc/method';
import { API_VERSION, type CallOutcome, type Pipeline } from '../../rpc/pipeline';
import { ConnectionCap } from '../connection-cap';
import type { Arrival, RequestIntake } from '../request-intake';
import { intakeInterceptor, nextMessage, readOne, type GrpcCall } from './intake';
import { encodeStatusDetails } from './status-details';

export interface GrpcServerOptions {
  /** Largest request message accepted (`Config.maxGrpcMessageBytes`); also the largest response sent. */
  readonly maxMessageBytes: number;
  /** Most bytes of all messages of one client stream (`Config.maxStreamBytes`). */
  readonly maxStreamBytes: number;
  /** The descriptor image bytes, served by reflection. */
  readonly descriptorBytes: Buffer;
  /** The process's budget of request bytes still arriving, shared with the REST gateway. */
  readonly intake: RequestIntake;
  /** Most open connections (`Config.maxConnections`), shared between clients (connection-cap.ts). */
  readonly maxConnections: number;
  readonly log: Logger;
  readonly clock: Clock;
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
 * its declared size, so the ceiling costs memory only when a client really sends that much, which
 * it can only after authentication and within the budget of bytes still arriving: intake.ts.)
 */
const RECEIVE_CEILING_FACTOR = 4;

/**
 * Most calls at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS; grpc-js sets no
 * limit). RFC 9113 (5.1.2) recommends no fewer than 100; a client over it waits for a turn.
 */
const MAX_CONCURRENT_STREAMS = 100;

/**
 * How long a connection without calls stays open (grpc-js: `grpc.max_connection_idle_ms`, no limit
 * by default). Connections are capped (`Config.maxConnections`), so none is held for nothing; a
 * client whose connection closed opens another on its next call.
 */
const CONNECTION_IDLE_MS = 60_000;

/** A gRPC server for every method in the pipeline's table, not yet bound to a port. */
export function createGrpcServer(pipeline: Pipeline, options: GrpcServerOptions): { server: grpc.Server; health: HealthImplementation; connections: ConnectionCap } {
  const arrivals = new WeakMap<grpc.Metadata, Arrival>();
  // Bound to the port by `bindGrpc`; told here of the calls on each connection.
  const connections = new ConnectionCap(options.maxConnections, 'gRPC', options.log);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes * RECEIVE_CEILING_FACTOR,
    'grpc.max_send_message_length': options.maxMessageBytes,
    'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS,
    'grpc.max_connection_idle_ms': CONNECTION_IDLE_MS,
    // Channelz (per-call statistics for the channelz service) is not served here: skip its bookkeeping.
    'grpc.enable_channelz': 0,
    interceptors: [
      intakeInterceptor(
        {
          intake: options.intake,
          isPipelineMethod: (path) => pipeline.methods.has(path),
          refusal: (error) => toGrpcError(error, toMetadata({ 'request-id': newId('req', options.clock), 'api-version': API_VERSION })) as grpc.StatusObject,
          onUncounted: () => options.log.error('gRPC request bytes are not counted against MAX_PENDING_REQUEST_BYTES: the installed grpc-js keeps its HTTP/2 stream elsewhere than 1.14 did'),
          callStarted: (stream) => {
            // (The session shows its socket through a proxy: the connection is found by its peer.)
            const socket = stream.session?.socket;
            return connections.callStartedAt(socket?.remoteAddress, socket?.remotePort);
          },
        },
        arrivals,
      ),
    ],
  });
  // (The interceptor maps every call; a fresh arrival would only lack the call's byte counts.)
  const limits: HandlerLimits = { ...options, arrivalOf: (call) => arrivals.get(call.metadata) ?? options.intake.open('request') };
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
      // grpc-js with a bare INTERNAL "Error deserializing request". Every method is registered as
      // client-streaming: grpc-js reads a unary call's message before running its handler, a
      // stream's only when its handler asks, so the unary handler asks after authentication
      // (the same bytes on the wire: one message, then the end).
      definition[entry.key] = { ...entry.definition, requestStream: true, requestDeserialize: (bytes: Buffer) => bytes } as unknown as grpc.MethodDefinition<unknown, unknown>;
      impl[entry.key] = entry.definition.requestStream ? clientStreamHandler(pipeline, entry, limits) : unaryHandler(pipeline, entry, limits);
    }
    server.addService(definition as grpc.ServiceDefinition, impl);
    healthStatus[service] = 'SERVING';
  }
  const health = new HealthImplementation(healthStatus);
  health.addToServer(server);
  const reflection = new ReflectionService(loadFileDescriptorSetFromBuffer(options.descriptorBytes));
  reflection.addToServer(server);
  return { server, health, connections };
}

interface HandlerLimits extends GrpcServerOptions {
  /** The arrival of a call's request (its bytes counted by `intakeInterceptor`). */
  arrivalOf(call: GrpcCall): Arrival;
}

function unaryHandler(pipeline: Pipeline, entry: MethodEntry, limits: HandlerLimits): grpc.handleClientStreamingCall<unknown, unknown> {
  return (call, callback) => {
    const arrival = limits.arrivalOf(call);
    pipeline
      .unary(entry, async () => decodeMessage(entry, await readOne(call, arrival), 'request', limits.maxMessageBytes), incomingOf(call, arrival))
      .then((outcome) => finish(call, callback, outcome))
      .catch((err) => failSafe(callback, err));
  };
}

function clientStreamHandler(pipeline: Pipeline, entry: MethodEntry, limits: HandlerLimits): grpc.handleClientStreamingCall<unknown, unknown> {
  return (call, callback) => {
    const arrival = limits.arrivalOf(call);
    pipeline
      .clientStream(entry, decodeStream(entry, call, arrival, limits), incomingOf(call, arrival))
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
async function* decodeStream(entry: MethodEntry, call: GrpcCall, arrival: Arrival, limits: GrpcServerOptions): AsyncGenerator<unknown> {
  let i = 0;
  let total = 0;
  for (let bytes = await nextMessage(call, arrival); bytes !== undefined; bytes = await nextMessage(call, arrival)) {
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
  call: GrpcCall,
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

function incomingOf(call: GrpcCall, arrival: Arrival): IncomingCall {
  return new GrpcIncoming(call, arrival);
}

/** The gRPC side of a call. A class so its lazy accessors live on a shared prototype (see `Context` in pipeline.ts). */
class GrpcIncoming implements IncomingCall {
  readonly protocol = 'grpc';
  readonly deadline: number | undefined;
  private abort: AbortController | undefined;

  constructor(
    private readonly call: GrpcCall,
    private readonly arrival: Arrival,
  ) {
    const deadline = call.getDeadline();
    const ms = deadline instanceof Date ? deadline.getTime() : Number(deadline);
    this.deadline = Number.isFinite(ms) ? ms : undefined;
  }

  /** A metadata value; several entries of one key give their values joined by `, `, as over REST. */
  header(name: string): string | undefined {
    const values = this.call.metadata.get(name);
    return values.length === 0 ? undefined : values.map(String).join(', ');
  }

  headerValues(name: string): readonly string[] {
    return this.call.metadata.get(name).map(String);
  }

  // Lazy, like the signal: most calls never look at them.
  get peer(): string {
    return this.call.getPeer();
  }

  claim(caller: Principal): void {
    this.arrival.claim(caller);
  }

  // Aborted too when the request is refused while the endpoint is not reading (over the budget:
  // grpc-js may read ahead of it), so that the call ends and lets go of it without waiting.
  get signal(): AbortSignal {
    if (!this.abort) {
      const controller = (this.abort = new AbortController());
      const cancel = () => controller.abort(new ClientCancelledError());
      if (this.call.cancelled) cancel();
      else this.call.on('cancelled', cancel);
      if (this.arrival.failed) controller.abort(this.arrival.failed);
      else this.arrival.whenFailed((error) => controller.abort(error));
    }
    return this.abort.signal;
  }
}

/** The gRPC port's listener: it caps connections, which grpc-js's own cannot. */
export interface GrpcListener {
  readonly port: number;
  readonly tcp: TcpServer;
}

/**
 * Listen on host:port (0 = any free port) with open connections capped by `cap` (the server's
 * `connections`: connection-cap.ts), handing each to the server. The listener is ours, not
 * grpc-js's (`bindAsync`), only to cap its connections.
 */
export function bindGrpc(server: grpc.Server, host: string, port: number, cap: ConnectionCap): Promise<GrpcListener> {
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const tcp = createTcpServer({ noDelay: true }, (socket: Socket) => {
    cap.admit(socket);
    if (!socket.destroyed) injector.injectConnection(socket);
  });
  return new Promise((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, host, () => {
      tcp.off('error', reject);
      resolve({ port: (tcp.address() as AddressInfo).port, tcp });
    });
  });
}

/** Stop accepting connections and calls, drain in-flight ones for up to `graceMs`, then force. */
export function shutdownGrpc(server: grpc.Server, listener: GrpcListener, graceMs: number): Promise<void> {
  listener.tcp.close();
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
