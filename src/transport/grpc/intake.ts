/**
 * How the gRPC server takes a call's request in: its bytes counted against the process's budget
 * as they arrive, and its messages read only when the pipeline asks for them (after
 * authentication), each read waiting at most the idle limit (transport/request-intake.ts).
 */
import * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { ClientCancelledError, invalidArgument, type ServiceError } from '../../rpc/errors';
import type { Arrival, RequestIntake } from '../request-intake';

/** Every call, unary ones too, is a client stream to grpc-js (see `createGrpcServer`). */
export type GrpcCall = grpc.ServerReadableStream<unknown, unknown>;

export interface IntakeOptions {
  readonly intake: RequestIntake;
  /** Whether a method is one of the pipeline's (the others are grpc-js's own: health, reflection). */
  isPipelineMethod(path: string): boolean;
  /** The status answering a refused request (our error details, a request-id). */
  refusal(error: ServiceError): grpc.StatusObject;
  /** Told once if the installed grpc-js does not show the HTTP/2 stream (bytes are then not counted). */
  onUncounted(): void;
  /** A call began on the connection of `stream`; the returned function is called once it has ended. */
  callStarted?(stream: http2.ServerHttp2Stream): () => void;
}

/**
 * The interceptor that counts each call's request bytes against the budget as they arrive, from
 * the HTTP/2 stream under the call: grpc-js holds a message's bytes until the message is whole
 * (up to 4 × the message limit) and tells no one of them. They stop counting when the request
 * has ended or its call has. Its `arrivals` maps a call's metadata (what the handler gets of
 * the interceptor's call) to the call's arrival.
 *
 * A call of the pipeline is answered by the pipeline when its request is refused (the read it
 * waits on fails). grpc-js's own services (health, reflection: public, no pipeline) read a
 * request whole with nothing of ours in between: the interceptor refuses those itself, over the
 * budget or once the idle limit passes before the request has ended (not for a two-way stream,
 * reflection's, whose requests come when its client has one).
 *
 * A call answered before its request ended (refused before or while it was read) then resets the
 * stream with NO_ERROR, once the answer has gone out (RFC 9113 8.1: "the server MAY request that
 * the client abort transmission of a request without error"): until then grpc-js would keep the
 * stream, and the part of a message it holds, for as long as the client kept it open.
 */
export function intakeInterceptor(options: IntakeOptions, arrivals: WeakMap<grpc.Metadata, Arrival>): grpc.ServerInterceptor {
  let told = false;
  return (method, call) => {
    const arrival = options.intake.open('request');
    const stream = http2StreamOf(call);
    let ended = false;
    if (stream) {
      if (options.callStarted) stream.once('close', options.callStarted(stream));
      stream.on('data', (chunk: Buffer) => arrival.add(chunk.length));
      const end = new Promise<void>((resolve) =>
        stream.once('end', () => {
          ended = true;
          arrival.close();
          resolve();
        }),
      );
      stream.once('close', () => arrival.close());
      if (!options.isPipelineMethod(method.path)) {
        // A two-way stream (reflection, which tools keep open between their requests) may sit idle
        // for as long as it likes: held to the budget, not the idle limit (found by review: cut
        // after 30 s of silence). Its bytes still count until its request side ends.
        if (!(method.requestStream && method.responseStream)) arrival.wait(end).catch(() => undefined);
        arrival.whenFailed((error) => intercepting.sendStatus(options.refusal(error)));
      }
    } else if (!told) {
      told = true;
      options.onUncounted();
    }
    const intercepting = new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            arrivals.set(metadata, arrival);
            nextMetadata(metadata);
          },
        }),
      sendStatus: (status, next) => {
        next(status);
        arrival.close();
        // Node sends the reset after what was already written (the status) for NO_ERROR.
        if (stream && !ended && !stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
      },
    });
    return intercepting;
  };
}

/** The HTTP/2 stream under grpc-js's own call (grpc-js 1.14: `BaseServerInterceptingCall.stream`, not public). */
function http2StreamOf(call: grpc.ServerInterceptingCallInterface): http2.ServerHttp2Stream | undefined {
  const stream = (call as unknown as { stream?: Partial<http2.ServerHttp2Stream> }).stream;
  return stream && typeof stream.on === 'function' && typeof stream.close === 'function' && 'rstCode' in stream ? (stream as http2.ServerHttp2Stream) : undefined;
}

/**
 * A call's next message as grpc-js reads it (undefined at the end of the request), waiting at
 * most the idle limit for its bytes (`Arrival.wait`); a cancelled call fails. grpc-js reads a
 * message only when asked (`read()`), so the request is read as the pipeline asks for it: after
 * authentication. Not a `for await` over the call: the stream's iterator destroys it when done,
 * which costs two errors with their stack traces per call (an AbortError, then grpc-js ending the
 * destroyed stream): measured, a fifth of a small call's time.
 */
export function nextMessage(call: GrpcCall, arrival: Arrival): Buffer | undefined | Promise<Buffer | undefined> {
  const ready = call.read() as Buffer | null;
  if (ready !== null) return ready;
  if (call.readableEnded) return undefined;
  if (call.destroyed) return Promise.reject(new ClientCancelledError());
  return arrival.wait(
    new Promise<Buffer | undefined>((resolve, reject) => {
      const settle = () => {
        call.off('readable', onReadable);
        call.off('end', onEnd);
        call.off('close', onClose);
      };
      const onReadable = () => {
        const message = call.read() as Buffer | null;
        if (message === null) return; // the end: 'end' follows
        settle();
        resolve(message);
      };
      const onEnd = () => {
        settle();
        resolve(undefined);
      };
      // closed without an end: grpc-js destroys the stream of a cancelled call
      const onClose = () => {
        settle();
        reject(new ClientCancelledError());
      };
      call.on('readable', onReadable);
      call.on('end', onEnd);
      call.on('close', onClose);
    }),
  );
}

/** A unary call's one message, and its end (as grpc-js waits for both before a unary handler runs). */
export async function readOne(call: GrpcCall, arrival: Arrival): Promise<Buffer> {
  const first = await nextMessage(call, arrival);
  if (first === undefined) throw invalidArgument('request', 'no request message: a unary call sends exactly one');
  if ((await nextMessage(call, arrival)) !== undefined) throw invalidArgument('request', 'more than one request message: a unary call sends exactly one');
  return first;
}
