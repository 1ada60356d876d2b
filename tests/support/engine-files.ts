import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { PythonEngine } from '$lib/adapters/sandbox/engines/python';
import type { EngineFiles } from '$lib/adapters/sandbox/protocol';

const require = createRequire(import.meta.url);
const read = (spec: string) => new Uint8Array(readFileSync(require.resolve(spec)));

/** The engines' files as the runtime hands them to a sandbox, read from node_modules (Node tests). */
export const engineFiles = (): EngineFiles => ({
  jq: { wasm: read('jq-web/jq.wasm') },
  javascript: { wasm: read('@jitl/quickjs-wasmfile-release-sync/wasm') },
  python: {
    asm: read('pyodide/pyodide.asm.mjs'),
    wasm: read('pyodide/pyodide.asm.wasm'),
    stdlib: read('pyodide/python_stdlib.zip'),
    lock: read('pyodide/pyodide-lock.json'),
  },
});

/** Pyodide as a sandbox loads it, in Node: its module imported from node_modules, its files read there. */
export async function pythonEngine(): Promise<PythonEngine> {
  const { asm: _, ...files } = engineFiles().python;
  const { default: createModule } = await import('pyodide/pyodide.asm.mjs');
  const indexURL = dirname(require.resolve('pyodide/pyodide.asm.wasm'));
  return { createModule: createModule as PythonEngine['createModule'], ...files, indexURL };
}
