import { sveltekit } from '@sveltejs/kit/vite';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';
import { engineAssets } from '../scripts/vite/engine-assets.ts';
import { chromiumLaunchOptions } from '../tests/support/chromium.mjs';
import { heapCommands } from './heap-commands.ts';
import { mcpBenchCommands } from './mcp-servers.ts';

/**
 * Benchmarks print numbers (lines starting with RESULT); they assert nothing about time. One file
 * at a time, so benchmarks do not compete for the machine's two cores: `fileParallelism: false`
 * serializes the files of a project, and distinct `groupOrder`s keep the two projects apart (within
 * one group vitest runs Node and browser files side by side). Node first, then Chromium.
 */
export default defineConfig({
  // Pyodide for the sandbox worker (bench/shell.browser.bench.ts), as in vite.config.ts.
  plugins: [sveltekit(), engineAssets()],
  worker: { format: 'es', plugins: () => [engineAssets()] },
  // Served as files: their loaders locate wasm beside themselves.
  optimizeDeps: {
    exclude: [
      'pyodide',
      'quickjs-emscripten-core',
      '@jitl/quickjs-wasmfile-release-sync',
      '@jsquash/jpeg',
      '@jsquash/png',
      '@jsquash/resize',
      '@jsquash/webp',
    ],
  },
  test: {
    fileParallelism: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'bench-node',
          include: ['bench/**/*.node.bench.ts'],
          environment: 'node',
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'bench-browser',
          include: ['bench/**/*.browser.bench.ts'],
          sequence: { groupOrder: 2 },
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({ launchOptions: chromiumLaunchOptions }),
            instances: [{ browser: 'chromium' }],
            // MCP servers for bench/mcp.browser.bench.ts, started only when it asks; heap sampling.
            commands: { ...mcpBenchCommands, ...heapCommands },
          },
        },
      },
    ],
  },
});
