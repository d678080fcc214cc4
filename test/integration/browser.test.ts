/**
 * The sign-up page in real headless Chromium (Debian's chromium, driven by playwright-core):
 * open `/`, sign up, copy the key with the button, use it for an API call. Keeps a screenshot
 * in test-artifacts/.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { packageRoot } from '../../src/rpc/descriptors';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let browser: Browser;

beforeAll(async () => {
  t = await startTestService();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

test('sign up in the browser, copy the key, call the API with it', async () => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 1400 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
  const page = await context.newPage();
  await page.goto(`${t.baseUrl}/`);
  assert.equal(await page.title(), 'Forecast — probabilistic forecasting API');
  // the form is reachable by keyboard and labelled
  await page.getByLabel('Work email').fill('not an email');
  await page.keyboard.press('Enter');
  // The page validates on submit: wait for its message rather than reading it at once (a race under load).
  await page.locator('#signup-error').filter({ hasText: /\S/ }).waitFor();
  assert.match(await page.locator('#signup-error').innerText(), /valid email/);
  await page.getByLabel('Work email').fill('browser@example.com');
  await page.getByRole('button', { name: 'Create free account' }).click();
  // The key's element is on the page (empty) before the sign-up answers: wait for its text.
  await page.locator('#api-key').filter({ hasText: /\S/ }).waitFor({ timeout: 10_000 });
  const keyText = await page.locator('#api-key').innerText();
  assert.match(keyText, /^fk_live_[0-9A-Za-z]{38}$/);
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied to the clipboard.').waitFor();
  const copied = await page.evaluate('navigator.clipboard.readText()') as string;
  assert.equal(copied, keyText);
  assert.ok((await page.locator('#curl-example').innerText()).includes(copied));
  const dir = join(packageRoot(), 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, 'signup.png'), fullPage: true });
  const res = await fetch(`${t.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${copied}` } });
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { tier: string }).tier, 'free');
  await context.close();
});

test('the API reference at /docs, linked from the home page, renders every operation from local files only', async () => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 1400 } });
  const page = await context.newPage();
  const requested: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(`${t.baseUrl}/`);
  await page.getByRole('link', { name: 'API docs' }).click();
  await page.waitForURL(`${t.baseUrl}/docs`);
  const operations = page.locator('.opblock');
  await operations.nth(t.service.routes.routes.length - 1).waitFor();
  assert.equal(await operations.count(), t.service.routes.routes.length);
  for (const r of t.service.routes.routes) {
    assert.ok(await page.locator(`.opblock-summary-path[data-path="${r.template.template}"]`).count(), r.template.template);
  }
  // Open one operation: its parameters and error answers render too.
  await page.locator('.opblock-summary-path[data-path="/v1/entities/{entity}"]').first().click();
  await page.getByText('Missing or invalid API key', { exact: false }).first().waitFor();
  await page.screenshot({ path: join(packageRoot(), 'test-artifacts', 'docs.png') });
  const foreign = requested.filter((u) => !u.startsWith(`${t.baseUrl}/`) && !u.startsWith('data:'));
  assert.deepEqual(foreign, [], 'no request leaves the service (no CDN, no validator badge)');
  assert.deepEqual(problems, [], 'no script error and no CSP violation');
  await context.close();
});
