import { createReadStream, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import type { Plugin } from 'vite';

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

/**
 * Copies Pyodide into the build at build time (never committed) and serves it from node_modules in
 * dev: its loader wants its files in one folder under their own names, which Vite's hashed assets
 * are not. `virtual:hearth-engines` tells the sandbox worker where; in a build the URL is relative
 * to the worker's chunk, so any sub-path works.
 */
export function engineAssets(): Plugin {
  let build = false;
  return {
    name: 'hearth:engine-assets',
    configResolved(config) {
      build = config.command === 'build';
    },
    resolveId: (id) => (id === ID ? `\0${ID}` : undefined),
    load(id) {
      if (id !== `\0${ID}`) return;
      if (!build) {
        const at = (file: string) => `new URL('${DEV_PREFIX}${file}', self.location.origin).href`;
        return `export const pyodideIndexURL = ${at('pyodide/')};\n`;
      }
      const refs: Record<string, string> = {};
      for (const [fileName, source] of Object.entries(FILES)) {
        refs[fileName] = this.emitFile({
          type: 'asset',
          fileName,
          source: readFileSync(require.resolve(source)),
        });
      }
      const url = (fileName: string) => `import.meta.ROLLUP_FILE_URL_${refs[fileName]}`;
      return `export const pyodideIndexURL = new URL('./', ${url('engines/pyodide/pyodide-lock.json')}).href;\n`;
    },
    configureServer(server) {
      server.middlewares.use(DEV_PREFIX, (req, res, next) => {
        const source = FILES[`engines/${(req.url ?? '').replace(/^\//, '').split('?')[0]}`];
        if (!source) return next();
        res.setHeader('Content-Type', TYPES[extname(source)] ?? 'application/octet-stream');
        createReadStream(require.resolve(source)).pipe(res);
      });
    },
  };
}
