/** gRPC extras (API.md section 2): health service, reflection, deadlines, rich error details, graceful drain. */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { EchoServiceService } from '../gen/forecast/testing/v1/echo_service.pb';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { bindService } from '../../src/rpc/registry';
import { packageRoot } from '../../src/rpc/descriptors';
import { decodeErrorInfo } from '../../src/transport/grpc/status-details';
import { startTestService, type TestService } from '../helpers/service';
import { ECHO_DEPRECATIONS, ECHO_DESCRIPTORS } from '../helpers/echo';

let t: TestService;
let key: string;

beforeAll(async () => {
  t = await startTestService({
    extraDescriptors: [ECHO_DESCRIPTORS],
    deprecations: ECHO_DEPRECATIONS,
    extraServices: () => [
      bindService(EchoServiceService, {
        // A method that never finishes on its own: only its deadline (the call's signal) ends it,
        // as a well-behaved endpoint stops with the signal's reason.
        shout: {
          access: 'public',
          handle: (_req, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
        },
        oldEcho: { access: 'public', handle: async (req) => ({ name: req.name, tags: [], loud: false }) },
      }),
    ],
  });
  key = (await t.account()).key;
});
afterAll(() => t.close());

test('grpc.health.v1 reports SERVING for the server and for each service', async () => {
  const def = loadSync(healthProtoPath, { enums: String });
  const Health = grpc.makeGenericClientConstructor(def['grpc.health.v1.Health'] as never, 'Health') as any;
  const client = t.client(Health) as any;
  for (const service of ['', 'forecast.v1.EntityService', 'forecast.v1.AccountService']) {
    const res = await new Promise<any>((resolve, reject) => client.check({ service }, (e: Error | null, r: unknown) => (e ? reject(e) : resolve(r))));
    assert.equal(res.status, 'SERVING', service);
  }
});

test('server reflection lists the forecast services', async () => {
  const def = loadSync(join(packageRoot(), 'node_modules', '@grpc', 'reflection', 'build', 'proto', 'grpc', 'reflection', 'v1', 'reflection.proto'));
  const Reflection = grpc.makeGenericClientConstructor(def['grpc.reflection.v1.ServerReflection'] as never, 'ServerReflection') as any;
  const client = t.client(Reflection) as any;
  const stream = client.serverReflectionInfo();
  const reply = await new Promise<any>((resolve, reject) => {
    stream.on('data', resolve);
    stream.on('error', reject);
    stream.write({ listServices: '' });
  });
  stream.end();
  const names = reply.listServicesResponse.service.map((s: { name: string }) => s.name);
  assert.ok(names.includes('forecast.v1.EntityService'), names.join(','));
  assert.ok(names.includes('forecast.v1.AccountService'));
});

test('errors carry google.rpc.ErrorInfo with our code and request-id in the trailers', async () => {
  const client = t.client(EntityServiceClient);
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${key}`);
  const err = await new Promise<grpc.ServiceError>((resolve) => client.getEntity({ entity: 'store:none' }, md, (e) => resolve(e!)));
  assert.equal(err.code, grpc.status.NOT_FOUND);
  const info = decodeErrorInfo(err.metadata.get('grpc-status-details-bin')[0] as Buffer);
  assert.equal(info.reason, 'not_found');
  assert.equal(info.domain, 'forecast.v1');
  assert.equal(info.code, grpc.status.NOT_FOUND);
  assert.match(String(err.metadata.get('request-id')[0]), /^req_/);
});

test('a deadline that passes ends the call with DEADLINE_EXCEEDED (the method never ends otherwise)', async () => {
  const Echo = grpc.makeGenericClientConstructor(EchoServiceService, 'EchoService') as any;
  const client = t.client(Echo) as any;
  const err = await new Promise<grpc.ServiceError>((resolve) =>
    client.shout({ name: 'x', text: '', times: 0, legacyNote: '' }, new grpc.Metadata(), { deadline: Date.now() + 150 }, (e: grpc.ServiceError) => resolve(e)),
  );
  assert.equal(err.code, grpc.status.DEADLINE_EXCEEDED);
});

test('REST honours a Grpc-Timeout header with 504 deadline_exceeded', async () => {
  const res = await fetch(`${t.baseUrl}/v1/testing/echo/x:shout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'grpc-timeout': '100m' },
    body: JSON.stringify({ times: 0 }),
  });
  assert.equal(res.status, 504);
  const body = (await res.json()) as { code: string; request_id: string };
  assert.equal(body.code, 'deadline_exceeded');
  assert.match(body.request_id, /^req_/);
});

test('shutdown drains in-flight calls on both protocols before closing, and refuses new ones', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started = 0;
  let bothStarted!: () => void;
  const inside = new Promise<void>((r) => (bothStarted = r));
  const other = await startTestService({
    extraDescriptors: [ECHO_DESCRIPTORS],
    deprecations: ECHO_DEPRECATIONS,
    extraServices: () => [
      bindService(EchoServiceService, {
        shout: {
          access: 'public',
          async handle(req) {
            if (++started === 2) bothStarted();
            await gate;
            return { shout: req.name.toUpperCase() };
          },
        },
        oldEcho: { access: 'public', handle: async (req) => ({ name: req.name, tags: [], loud: false }) },
      }),
    ],
  });
  const Echo = grpc.makeGenericClientConstructor(EchoServiceService, 'EchoService') as any;
  const client = new Echo(other.grpcAddress, grpc.credentials.createInsecure());
  const inflight = new Promise<any>((resolve, reject) => client.shout({ name: 'drain', text: '', times: 0, legacyNote: '' }, (e: Error | null, r: unknown) => (e ? reject(e) : resolve(r))));
  const restInflight = fetch(`${other.baseUrl}/v1/testing/echo/rest:shout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  await inside; // both calls are inside the endpoint
  const closing = other.close();
  // a new call after the shutdown began is refused
  const late = await new Promise<grpc.ServiceError | null>((resolve) => client.shout({ name: 'late', text: '', times: 0, legacyNote: '' }, (e: grpc.ServiceError | null) => resolve(e)));
  assert.equal(late?.code, grpc.status.UNAVAILABLE);
  release();
  assert.equal((await inflight).shout, 'DRAIN');
  assert.equal(((await (await restInflight).json()) as { shout: string }).shout, 'REST');
  await closing;
  client.close();
});
