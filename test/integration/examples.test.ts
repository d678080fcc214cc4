/**
 * Every file in examples/ runs green against a real service (each in its own process, as a user
 * runs it), and the README shows each one exactly as it is in examples/, so neither can rot.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/files';
import { startTestService, type TestService } from '../helpers/service';

const EXAMPLES = join(REPO_ROOT, 'examples');
let t: TestService;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await startTestService();
  // Like the demo account `make run` creates: every scope, keys:admin included.
  const { key } = await t.account('enterprise', ['forecast:read', 'data:write', 'audit', 'subscriptions', 'keys:admin']);
  env = { ...process.env, FORECAST_URL: t.baseUrl, FORECAST_GRPC: t.grpcAddress, FORECAST_KEY: key };
});
afterAll(() => t.close());

/** Run a command to its end: exit code and output. */
function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const tsx = (file: string) => run(join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), [join('examples', file)]);

test('examples/ holds exactly the examples tested here', () => {
  assert.deepEqual(readdirSync(EXAMPLES).sort(), ['curl.sh', 'grpc-reflection.ts', 'grpc-stubs.ts', 'rest-client.ts']);
});

test('curl.sh: creates its own entity, ingests, reads back, forecasts; errors are JSON', async () => {
  const r = await run('bash', [join('examples', 'curl.sh')]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /"entity":"store:curl-example"/);
  assert.match(r.stdout, /"accepted":56,"corrections":0/);
  assert.match(r.stdout, /"query_id":"q_/);
  // the bounded axis: its 99% quantile a week ahead is censored at 100 (the trend passes 100 by then)
  const cpu = JSON.parse(r.stdout.split('\n').find((l) => l.includes('"forecast"') && l.includes('"server:curl-example"'))!);
  assert.equal(cpu.forecast.quantiles['0.99'], 100);
  assert.ok(cpu.forecast.axes_resolved.cpu <= 100);
  assert.match(r.stdout, /"state":"revoked"/);
  assert.match(r.stdout, /"code":"not_found".*→ HTTP 404/);
  const again = await run('bash', [join('examples', 'curl.sh')]);
  assert.equal(again.code, 0, 'it runs again (the idempotent batch is replayed)');
  assert.match(again.stdout, /"accepted":56,"corrections":0/);
});

test('rest-client.ts: the generated REST client', async () => {
  const r = await tsx('rest-client.ts');
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /^ingested 56 observations \(data revision \d+\)$/m);
  assert.match(r.stdout, /^demand on 2026-03-0\dT00:00:00Z: mean \d+\.\d, 80% interval \d+–\d+, model .+$/m);
  assert.match(r.stdout, /^entity store:rest-client-example \(P1D\)$/m);
  assert.match(r.stdout, /^HTTP 404 not_found: .*store:does-not-exist.* \(request req_\w+\)$/m);
});

test('grpc-stubs.ts: the generated gRPC stubs', async () => {
  const r = await tsx('grpc-stubs.ts');
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /^ingested 56 observations/m);
  assert.match(r.stdout, /^demand on 2026-03-0\dT00:00:00Z: mean \d+\.\d, model .+$/m);
  assert.match(r.stdout, /^gRPC status 5 \(NOT_FOUND\): .*store:does-not-exist.* \(request req_\w+\)$/m);
});

test('grpc-reflection.ts: plain grpc-js with the contract from server reflection', async () => {
  const r = await tsx('grpc-reflection.ts');
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /^methods: .*CreateEntity.*ListEntities/m);
  assert.match(r.stdout, /^first entities: /m);
});

test('the README shows every example exactly as it is in examples/', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  for (const file of readdirSync(EXAMPLES)) {
    const text = readFileSync(join(EXAMPLES, file), 'utf8');
    const fence = file.endsWith('.sh') ? 'sh' : 'ts';
    assert.ok(readme.includes(`\`\`\`${fence}\n${text}\`\`\``), `README.md lacks examples/${file} verbatim (in a \`\`\`${fence} block)`);
  }
});
