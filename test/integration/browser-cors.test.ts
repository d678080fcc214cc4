/**
 * The generated REST client in real headless Chromium, called from pages on other loopback
 * ports (other origins): the origin listed in CORS_ORIGINS calls the API (preflight answered,
 * answer headers readable); an origin not listed is refused by the browser.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { REPO_ROOT } from '../helpers/files';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let browser: Browser;
const pages: Server[] = [];

/** A page server on a free loopback port: `/` loads `/client.js` (the bundled client). */
async function pageServer(script: string): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url === '/client.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return res.end(script);
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>client page</title><script src="/client.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pages.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

let allowed: string;
let other: string;

beforeAll(async () => {
  const bundle = await build({ entryPoints: [join(REPO_ROOT, 'test', 'browser', 'cors-client.ts')], bundle: true, write: false, format: 'iife', platform: 'browser', target: 'chrome110' });
  const script = bundle.outputFiles[0].text;
  assert.ok(!script.includes('@grpc/grpc-js') && !script.includes('BinaryWriter'), 'the client bundles no gRPC or protobuf runtime');
  allowed = await pageServer(script);
  other = await pageServer(script);
  t = await startTestService({ env: { CORS_ORIGINS: allowed } });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  for (const s of pages) s.close();
});

async function runFrom(origin: string, key: string): Promise<any> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  const result = await page.evaluate(([base, k]) => (globalThis as any).runClient(base, k), [t.baseUrl, key]);
  await context.close();
  return result;
}

test('a page on the listed origin calls the API with the generated client', async () => {
  const { key } = await t.account('pro');
  const r = await runFrom(allowed, key);
  assert.deepEqual(r, { ok: true, tier: 'pro', entity: 'store:from-browser', missing: { code: 'not_found', status: 404, requestIdHeader: r.missing.requestIdHeader } });
  assert.match(r.missing.requestIdHeader, /^req_/, 'exposed headers are readable across origins');
});

test('a page on an origin not listed is refused by the browser', async () => {
  const { key } = await t.account('pro');
  const r = await runFrom(other, key);
  assert.deepEqual(r, { ok: false, code: 'unavailable', status: 0 });
  const entities = await fetch(`${t.baseUrl}/v1/entities`, { headers: { authorization: `Bearer ${key}` } });
  assert.deepEqual(((await entities.json()) as { entities: unknown[] }).entities, [], 'nothing was created');
});
