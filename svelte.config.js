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
  },
};

export default config;
