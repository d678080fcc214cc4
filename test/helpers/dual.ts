/**
 * Run the same case over REST and gRPC and see one normalised outcome, so tests state their
 * expectations once for both protocols (STYLE 14).
 */
import * as grpc from '@grpc/grpc-js';
import { decodeErrorInfo } from '../../src/transport/grpc/status-details';
import type { TestService } from './service';

/** The protocol-neutral outcome of a call. */
export interface Outcome {
  readonly protocol: 'rest' | 'grpc';
  /** `ok` or the error code (REST body `code`, gRPC ErrorInfo reason). */
  readonly code: string;
  readonly message: string;
  readonly requestId: string | undefined;
  /** REST: the JSON body; gRPC: the response object (camelCase fields). */
  readonly data: any;
  /** Lower-case response headers (REST) or initial metadata + trailers (gRPC). */
  readonly headers: Record<string, string>;
  /** HTTP status (REST) or gRPC status code. */
  readonly status: number;
}

export interface RestRequest {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  /** Raw body text (overrides `body`). */
  readonly rawBody?: string;
  readonly headers?: Record<string, string>;
}

/** A REST call through fetch. */
export async function rest(t: TestService, key: string | undefined, req: RestRequest): Promise<Outcome> {
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  let body: string | undefined = req.rawBody;
  if (body === undefined && req.body !== undefined) {
    body = JSON.stringify(req.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(t.baseUrl + req.path, { method: req.method, headers, body });
  const text = await res.text();
  let data: any;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  const h: Record<string, string> = {};
  res.headers.forEach((v, k) => (h[k] = v));
  const ok = res.status === 200;
  return {
    protocol: 'rest',
    code: ok ? 'ok' : String(data?.code),
    message: ok ? '' : String(data?.message),
    requestId: h['request-id'],
    data,
    headers: h,
    status: res.status,
  };
}

/** A unary gRPC call through a generated client method. */
export function grpcCall<Req, Res>(
  client: grpc.Client,
  method: (req: Req, md: grpc.Metadata, opts: Partial<grpc.CallOptions>, cb: (err: grpc.ServiceError | null, res: Res) => void) => grpc.ClientUnaryCall,
  key: string | undefined,
  request: Req,
  extra: Record<string, string> = {},
): Promise<Outcome> {
  const md = new grpc.Metadata();
  if (key !== undefined) md.set('authorization', `Bearer ${key}`);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return new Promise((resolve) => {
    const headers: Record<string, string> = {};
    const call = method.call(client, request, md, {}, (err, res) => {
      if (err) {
        for (const [k, v] of Object.entries(err.metadata?.getMap() ?? {})) if (typeof v === 'string') headers[k] = v;
        const details = err.metadata?.get('grpc-status-details-bin')[0];
        const info = details ? decodeErrorInfo(details as Buffer) : undefined;
        resolve({ protocol: 'grpc', code: info?.reason ?? `grpc:${err.code}`, message: err.details, requestId: headers['request-id'], data: undefined, headers, status: err.code });
      } else {
        resolve({ protocol: 'grpc', code: 'ok', message: '', requestId: headers['request-id'], data: res, headers, status: 0 });
      }
    });
    call.on('metadata', (m: grpc.Metadata) => {
      for (const [k, v] of Object.entries(m.getMap())) if (typeof v === 'string') headers[k] = v;
    });
    call.on('status', (s: grpc.StatusObject) => {
      for (const [k, v] of Object.entries(s.metadata.getMap())) if (typeof v === 'string') headers[k] ??= v;
    });
  });
}
