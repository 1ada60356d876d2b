import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, resolve } from 'node:path';
import { build, type Plugin, type Rolldown } from 'vite';

const require = createRequire(import.meta.url);

/** Engine files served from the app's own origin, at fixed names their loaders expect. */
const FILES: Record<string, string> = {
  'engines/pyodide/pyodide.asm.mjs': 'pyodide/pyodide.asm.mjs',
  'engines/pyodide/pyodide.asm.wasm': 'pyodide/pyodide.asm.wasm',
  'engines/pyodide/python_stdlib.zip': 'pyodide/python_stdlib.zip',
  'engines/pyodide/pyodide-lock.json': 'pyodide/pyodide-lock.json',
};

const TYPES: Record<string, string> = {
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.zip': 'application/zip',
  '.json': 'application/json',
};

const ID = 'virtual:hearth-engines';
const DEV_PREFIX = '/@hearth-engines/';
/** Code that runs in isolated workers, each bundled as one module: `<name>.js` in dev, `engines/<name>-<hash>.js` built. */
const BUNDLES = {
  sandbox: resolve('src/lib/adapters/sandbox/sandbox-main.ts'),
  extension: resolve('src/lib/adapters/extensions/extension-main.ts'),
} as const;
type BundleName = keyof typeof BUNDLES;
const isBundle = (name: string): name is BundleName => Object.hasOwn(BUNDLES, name);

/**
 * The sandbox's (or an extension worker's) code as one ES module without imports: the worker
 * imports it from its text through a blob: URL (it can fetch nothing), so it can have no chunks
 * and no files beside it.
 */
async function buildBundle(name: BundleName, production: boolean): Promise<string> {
  const result = await build({
    configFile: false,
    logLevel: 'warn',
    mode: production ? 'production' : 'development',
    resolve: { alias: { $lib: resolve('src/lib') } },
    build: {
      write: false,
      minify: production,
      emptyOutDir: false,
      copyPublicDir: false,
      // Files its modules point at (QuickJS's wasm) are left out: the runtime sends them.
      assetsInlineLimit: 0,
      rolldownOptions: {
        input: BUNDLES[name],
        preserveEntrySignatures: 'strict',
        output: { format: 'es', codeSplitting: false },
      },
    },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  const chunks = outputs.flatMap((o) => o.output).filter((o) => o.type === 'chunk');
  if (chunks.length !== 1) throw new Error(`The ${name} bundle must be one module, got ${chunks.length}.`);
  return chunks[0]!.code;
}

/**
 * Copies Pyodide into the build at build time (never committed) and serves it from node_modules in
 * dev: its files keep their own names in one folder. Builds the sandbox's and the extension
 * worker's code as one module each (and again in dev when a source changes).
 * `virtual:hearth-engines` tells the runtime worker where they are; in a build the URLs are
 * relative to the worker's chunk, so any sub-path works.
 */
export function engineAssets(): Plugin {
  let production = false;
  const dev = new Map<BundleName, Promise<string>>();
  return {
    name: 'hearth:engine-assets',
    configResolved(config) {
      production = config.command === 'build';
    },
    resolveId: (id) => (id === ID ? `\0${ID}` : undefined),
    async load(id) {
      if (id !== `\0${ID}`) return;
      if (!production) {
        const at = (file: string) => `new URL('${DEV_PREFIX}${file}', self.location.origin).href`;
        return (
          `export const pyodideIndexURL = ${at('pyodide/')};\n` +
          `export const sandboxBundleURL = ${at('sandbox.js')};\n` +
          `export const extensionBundleURL = ${at('extension.js')};\n`
        );
      }
      const refs: Record<string, string> = {};
      for (const [fileName, source] of Object.entries(FILES)) {
        refs[fileName] = this.emitFile({
          type: 'asset',
          fileName,
          source: readFileSync(require.resolve(source)),
        });
      }
      const bundle = async (name: BundleName) => {
        const code = await buildBundle(name, true);
        const hash = createHash('sha256').update(code).digest('hex').slice(0, 10);
        return this.emitFile({ type: 'asset', fileName: `engines/${name}-${hash}.js`, source: code });
      };
      const [sandboxRef, extensionRef] = [await bundle('sandbox'), await bundle('extension')];
      const url = (ref: string) => `import.meta.ROLLUP_FILE_URL_${ref}`;
      return (
        `export const pyodideIndexURL = new URL('./', ${url(refs['engines/pyodide/pyodide-lock.json']!)}).href;\n` +
        `export const sandboxBundleURL = ${url(sandboxRef)};\n` +
        `export const extensionBundleURL = ${url(extensionRef)};\n`
      );
    },
    configureServer(server) {
      server.watcher.on('change', (file) => {
        if (file.includes('/src/lib/')) dev.clear();
      });
      server.middlewares.use(DEV_PREFIX, (req, res, next) => {
        const name = (req.url ?? '').replace(/^\//, '').split('?')[0] ?? '';
        const bundleName = name.replace(/\.js$/, '');
        if (name.endsWith('.js') && isBundle(bundleName)) {
          let code = dev.get(bundleName);
          if (!code) dev.set(bundleName, (code = buildBundle(bundleName, false)));
          code.then(
            (text) => {
              res.setHeader('Content-Type', 'text/javascript');
              res.end(text);
            },
            (e: unknown) => {
              dev.delete(bundleName);
              next(e);
            },
          );
          return;
        }
        const source = FILES[`engines/${name}`];
        if (!source) return next();
        res.setHeader('Content-Type', TYPES[extname(source)] ?? 'application/octet-stream');
        createReadStream(require.resolve(source)).pipe(res);
      });
    },
  };
}
