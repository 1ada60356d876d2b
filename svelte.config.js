import adapter from '@sveltejs/adapter-static';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

/** @type {import('@sveltejs/kit').Config} */
const config = {
  preprocess: vitePreprocess(),
  kit: {
    // Static files only: one index.html, routes live after the '#', so any static host
    // (including sub-path deployments without rewrite rules) serves every page.
    adapter: adapter({ pages: 'build', assets: 'build', strict: true }),
    router: { type: 'hash' },
    paths: { relative: true },
    serviceWorker: { register: false },
    // The page's own policy, as a <meta> tag in the page (so it holds on any static host):
    // rendered text loads images, media, fonts and styles only from the app and data:/blob: URLs,
    // and nothing on the page connects anywhere but the app. The runtime worker, started from a
    // URL, gets no policy from the page (it calls the model providers); the sandbox host's frame
    // adds its own, stricter one (src/lib/client/sandbox-host.ts), which needs `blob:` scripts,
    // WebAssembly and data: workers to be allowed here too.
    csp: {
      mode: 'hash',
      directives: {
        'default-src': ['self'],
        'script-src': ['self', 'wasm-unsafe-eval', 'blob:'],
        'style-src': ['self', 'unsafe-inline'],
        'img-src': ['self', 'data:', 'blob:'],
        'media-src': ['self', 'data:', 'blob:'],
        'font-src': ['self', 'data:'],
        'connect-src': ['self'],
        'worker-src': ['self', 'blob:', 'data:'],
        'frame-src': ['self'],
        'object-src': ['none'],
        'base-uri': ['self'],
        'form-action': ['none'],
      },
    },
  },
};

export default config;
