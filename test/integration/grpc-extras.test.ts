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
let releaseSlow: () => void = () => undefined;
let slowStarted: () => void = () => undefined;

beforeAll(async () => {
  t = await startTestService({
    extraDescriptors: [ECHO_DESCRIPTORS],
    deprecations: ECHO_DEPRECATIONS,
    extraServices: () => [
      bindService(EchoServiceService, {
        // A slow method to test deadlines and draining: waits until released or aborted.
        shout: {
          access: 'public',
          handle: (req, ctx) =>
            new Promise((resolve) => {
              slowStarted();
              const done = () => resolve({ shout: req.name.toUpperCase() });
              releaseSlow = done;
              if (req.times > 0) setTimeout(done, req.times);
              ctx.signal.addEventListener('abort', done);
            }),
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

test('a deadline that passes ends the call with DEADLINE_EXCEEDED', async () => {
  const Echo = grpc.makeGenericClientConstructor(EchoServiceService, 'EchoService') as any;
  const client = t.client(Echo) as any;
  const started = Date.now();
  const err = await new Promise<grpc.ServiceError>((resolve) =>
    client.shout({ name: 'x', text: '', times: 5000, legacyNote: '' }, new grpc.Metadata(), { deadline: Date.now() + 150 }, (e: grpc.ServiceError) => resolve(e)),
  );
  assert.equal(err.code, grpc.status.DEADLINE_EXCEEDED);
  assert.ok(Date.now() - started < 3000);
});

test('REST honours a Grpc-Timeout header with 504 deadline_exceeded', async () => {
  const res = await fetch(`${t.baseUrl}/v1/testing/echo/x:shout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'grpc-timeout': '100m' },
    body: JSON.stringify({ times: 5000 }),
  });
  assert.equal(res.status, 504);
  assert.equal(((await res.json()) as { code: string }).code, 'deadline_exceeded');
});

test('shutdown drains an in-flight call before closing (graceful)', async () => {
  const other = await startTestService({
    extraDescriptors: [ECHO_DESCRIPTORS],
    deprecations: ECHO_DEPRECATIONS,
    extraServices: () => [
      bindService(EchoServiceService, {
        shout: { access: 'public', handle: (req) => new Promise((resolve) => setTimeout(() => resolve({ shout: req.name.toUpperCase() }), 300)) },
        oldEcho: { access: 'public', handle: async (req) => ({ name: req.name, tags: [], loud: false }) },
      }),
    ],
  });
  const Echo = grpc.makeGenericClientConstructor(EchoServiceService, 'EchoService') as any;
  const client = new Echo(other.grpcAddress, grpc.credentials.createInsecure());
  const inflight = new Promise<any>((resolve, reject) => client.shout({ name: 'drain', text: '', times: 0, legacyNote: '' }, (e: Error | null, r: unknown) => (e ? reject(e) : resolve(r))));
  const restInflight = fetch(`${other.baseUrl}/v1/testing/echo/rest:shout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  await new Promise((r) => setTimeout(r, 100));
  const closing = other.close();
  assert.equal((await inflight).shout, 'DRAIN');
  assert.equal(((await (await restInflight).json()) as { shout: string }).shout, 'REST');
  await closing;
  client.close();
});
