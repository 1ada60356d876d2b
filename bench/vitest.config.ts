import { sveltekit } from '@sveltejs/kit/vite';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';
import { chromiumLaunchOptions } from '../tests/support/chromium.mjs';

/** Benchmarks print numbers (lines starting with RESULT); they assert nothing about time. */
export default defineConfig({
  plugins: [sveltekit()],
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'bench-node', include: ['bench/**/*.node.bench.ts'], environment: 'node' },
      },
      {
        extends: true,
        test: {
          name: 'bench-browser',
          include: ['bench/**/*.browser.bench.ts'],
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({ launchOptions: chromiumLaunchOptions }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
