import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './tests/support/chromium.mjs';

/** End-to-end tests: the built app (build/) in Debian's Chromium, a fresh profile per test. */
export default defineConfig({
  testDir: 'tests/e2e',
  fullyParallel: true,
  workers: 2,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: process.env.CI ? [['list']] : [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: chromiumLaunchOptions,
    viewport: { width: 1200, height: 800 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
