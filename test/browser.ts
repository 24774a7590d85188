/**
 * Test support of the web pages (the presentation page, the user console): Debian's chromium,
 * headless, driven by playwright-core, with a profile of its own that is removed afterwards.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** A test's `skip`: false, or why it cannot run. */
export const withoutChromium = fs.existsSync(CHROMIUM)
  ? false
  : `Debian's chromium is not installed at ${CHROMIUM} (apt-get install -y chromium)`;

/** A headless browser; its profile directory goes when the test ends. */
export async function launchChromium(t: TestContext): Promise<BrowserContext> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-chromium-'));
  t.after(() => fs.rmSync(userDataDir, { recursive: true, force: true }));
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
