/**
 * Real headless Chromium for the browser tests: Debian's chromium (installed by `make test`,
 * scripts/install-browser.sh) driven by playwright-core, launched the same way everywhere.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launch headless Chromium; fails loudly when it is not installed. */
export function launchChromium(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: make test installs Debian's chromium (scripts/install-browser.sh)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
