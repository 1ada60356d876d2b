import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, test } from 'vitest';
import { build, type Rolldown } from 'vite';

/**
 * Issue 15: what the image normalizer adds to a worker bundle, built by Vite as the app's worker
 * is (ES modules, code splitting, wasm found through `new URL(…, import.meta.url)`). The entry
 * chunk is what a worker pays up front; the codecs' chunks and wasm only when an image arrives.
 */
const ENTRY = resolve('src/lib/adapters/images/jsquash-normalizer.ts');
const kb = (n: number) => (n / 1024).toFixed(1);

test('image normalizer: bytes up front and on first use (Vite build)', async () => {
  const result = await build({
    configFile: false,
    logLevel: 'warn',
    resolve: { alias: { $lib: resolve('src/lib') } },
    build: {
      write: false,
      minify: true,
      emptyOutDir: false,
      copyPublicDir: false,
      assetsInlineLimit: 0,
      // A worker has no document to preload into.
      modulePreload: false,
      rolldownOptions: { input: ENTRY, preserveEntrySignatures: 'strict', output: { format: 'es' } },
    },
  });
  const output = (Array.isArray(result) ? result : [result]).flatMap(
    (o) => (o as Rolldown.RolldownOutput).output,
  );
  const bytes = (o: (typeof output)[number]) =>
    o.type === 'chunk' ? Buffer.from(o.code) : Buffer.from(o.source);
  const entry = output.find((o) => o.type === 'chunk' && o.isEntry)!;
  const lazy = output.filter((o) => o.type === 'chunk' && !o.isEntry);
  const wasm = output.filter((o) => o.fileName.endsWith('.wasm'));
  const sum = (files: typeof output) => files.reduce((n, o) => n + bytes(o).length, 0);
  const gz = (files: typeof output) => files.reduce((n, o) => n + gzipSync(bytes(o)).length, 0);

  // Nothing of the codecs in the entry: they arrive by dynamic import.
  expect(bytes(entry).toString()).not.toMatch(/\.wasm|WebAssembly/);
  for (const file of wasm) {
    expect(lazy.some((c) => c.type === 'chunk' && c.code.includes(file.fileName.split('/').pop()!))).toBe(
      true,
    );
  }
  console.log(
    `RESULT images-bundle entry_kb=${kb(bytes(entry).length)} entry_gzip_kb=${kb(gzipSync(bytes(entry)).length)} ` +
      `lazy_js_chunks=${lazy.length} lazy_js_kb=${kb(sum(lazy))} lazy_js_gzip_kb=${kb(gz(lazy))} ` +
      `wasm_files=${wasm.length} wasm_kb=${kb(sum(wasm))} wasm_gzip_kb=${kb(gz(wasm))}`,
  );
  for (const file of [...lazy, ...wasm]) {
    console.log(
      `RESULT images-bundle-file name=${file.fileName} kb=${kb(bytes(file).length)} gzip_kb=${kb(gzipSync(bytes(file)).length)}`,
    );
  }
}, 120_000);
