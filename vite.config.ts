import { sveltekit } from '@sveltejs/kit/vite';
import { SvelteKitPWA } from '@vite-pwa/sveltekit';
import { playwright } from '@vitest/browser-playwright';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';
import { engineAssets } from './scripts/vite/engine-assets.ts';
import { chromiumLaunchOptions } from './tests/support/chromium.mjs';

const appVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

/**
 * With hash routing SvelteKit renders the one page as a fallback, whose asset URLs are absolute
 * (`/_app/...`). Relative URLs let the same build run from any sub-path (`/hearth/`). This runs
 * after the page is rendered and before the service worker's precache manifest is computed; the
 * page's content security policy then gets the hashes of its inline scripts as they now are.
 */
function relativeAppShell(): Plugin {
  return {
    name: 'hearth:relative-app-shell',
    apply: 'build',
    writeBundle: {
      sequential: true,
      order: 'post',
      async handler() {
        if (!this.environment.config.build.ssr) return;
        const file = '.svelte-kit/output/prerendered/pages/index.html';
        const html = await readFile(file, 'utf8').catch(() => null);
        if (html === null) return;
        const relative = html.replace(/(["'(])\/(_app\/|icons\/|manifest\.webmanifest)/g, '$1./$2');
        const hashes = [...relative.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
          ([, body]) => `'sha256-${createHash('sha256').update(body!).digest('base64')}'`,
        );
        await writeFile(file, relative.replace(/(?: 'sha256-[A-Za-z0-9+/=]+')+/, ` ${hashes.join(' ')}`));
      },
    },
  };
}

export default defineConfig({
  // Written into backups, so a restore knows which Hearth made them.
  define: { __HEARTH_VERSION__: JSON.stringify(appVersion) },
  plugins: [
    sveltekit(),
    relativeAppShell(),
    engineAssets(),
    SvelteKitPWA({
      registerType: 'prompt',
      injectRegister: false,
      // The app shell is precached as './' (not '/') so sub-path deployments work offline too.
      kit: { base: './' },
      strategies: 'generateSW',
      manifest: {
        name: 'Hearth',
        short_name: 'Hearth',
        description: 'An agent workbench that runs entirely in your browser.',
        theme_color: '#b4532a',
        background_color: '#1b1614',
        display: 'standalone',
        start_url: './',
        scope: './',
        icons: [
          { src: 'icons/icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: 'icons/icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: 'icons/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
      },
      workbox: {
        globPatterns: [
          'client/**/*.{js,mjs,css,ico,png,svg,webp,webmanifest,wasm,zip,json}',
          'prerendered/**/*.html',
        ],
        // The extension host's document, by its own name (the glob entries' `.html` is dropped
        // for the pages' clean URLs): extensions run offline too.
        additionalManifestEntries: [
          {
            url: 'extensions/host.html',
            revision: createHash('sha256').update(readFileSync('static/extensions/host.html')).digest('hex'),
          },
        ],
        maximumFileSizeToCacheInBytes: 32 * 1024 * 1024,
        importScripts: ['sw-guard.js'],
        clientsClaim: true,
        skipWaiting: false,
        navigateFallback: null,
      },
    }),
  ],
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
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts'],
          environment: 'node',
          // Property tests are CPU-bound: on a loaded 2-core machine some take several seconds.
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          exclude: ['tests/integration/**/*.browser.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['tests/integration/**/*.browser.test.ts'],
          globalSetup: ['tests/support/listener.global.ts'],
          testTimeout: 30_000,
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
