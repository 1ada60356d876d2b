import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from '../tests/support/chromium.mjs';

/**
 * Browser benchmarks that need the built app and a real server (`bench/e2e/`): one worker, so
 * nothing else competes for the machine. They print RESULT lines and assert nothing about time.
 */
export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.bench.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 300_000,
  expect: { timeout: 30_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: chromiumLaunchOptions,
    viewport: { width: 1200, height: 800 },
  },
});
