/**
 * Headless Chromium for the inspector's specs, launched as spec/portable/run.mjs launches it:
 * Debian's /usr/bin/chromium through playwright-core, a fresh profile, no background traffic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A page in a fresh browser; `errors` collects page errors and console errors; `close()` removes the profile. */
export async function openBrowser(): Promise<{ page: Page; errors: string[]; close(): Promise<void>; context: BrowserContext }> {
  const profile = mkdtempSync(join(tmpdir(), 'toolrun-inspect-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 60_000,
    viewport: { width: 1100, height: 560 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return {
    page,
    errors,
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
