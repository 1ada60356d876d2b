import quickjsWasmURL from '@jitl/quickjs-wasmfile-release-sync/wasm?url';
import jqWasmURL from 'jq-web/jq.wasm?url';
import { extensionBundleURL, pyodideIndexURL, sandboxBundleURL } from 'virtual:hearth-engines';
import type { EngineProgress } from '$lib/domain/run-update';
import type { EngineFiles, EngineName } from './protocol';

/** Where a sandbox's code and its engines' files come from; the sandbox itself cannot fetch. */
export interface EngineSource {
  bundle(): Promise<string>;
  files<E extends EngineName>(
    engine: E,
    onProgress?: (progress: EngineProgress) => void,
  ): Promise<EngineFiles[E]>;
}

const PYTHON = ['pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'] as const;

/**
 * The files from the app's own origin (precached by the service worker, so offline too), read
 * once per tab and kept: each new sandbox gets a copy. A failed read is tried again next time.
 */
export class FetchedEngines implements EngineSource {
  readonly #cache = new Map<string, Promise<Uint8Array>>();

  async bundle(): Promise<string> {
    return new TextDecoder().decode(await this.#read([sandboxBundleURL]).then(([b]) => b!));
  }

  /** The extension workers' code (`adapters/extensions/extension-main.ts`). */
  async extensionBundle(): Promise<string> {
    return new TextDecoder().decode(await this.#read([extensionBundleURL]).then(([b]) => b!));
  }

  async files<E extends EngineName>(
    engine: E,
    onProgress?: (progress: EngineProgress) => void,
  ): Promise<EngineFiles[E]> {
    if (engine === 'jq') return { wasm: (await this.#read([jqWasmURL]))[0]! } as EngineFiles[E];
    if (engine === 'javascript') return { wasm: (await this.#read([quickjsWasmURL]))[0]! } as EngineFiles[E];
    const [asm, wasm, stdlib, lock] = await this.#read(
      PYTHON.map((f) => pyodideIndexURL + f),
      onProgress,
    );
    return { asm: asm!, wasm: wasm!, stdlib: stdlib!, lock: lock! } as EngineFiles[E];
  }

  /** Reads the URLs; with `onProgress`, counts the bytes of those not read yet (for Python's bar). */
  async #read(
    urls: readonly string[],
    onProgress?: (progress: EngineProgress) => void,
  ): Promise<Uint8Array[]> {
    const missing = urls.filter((url) => !this.#cache.has(url));
    if (missing.length > 0) {
      const download = downloadAll(missing, onProgress);
      missing.forEach((url, i) => {
        const one = download.then((all) => all[i]!);
        this.#cache.set(url, one);
        one.catch(() => this.#cache.delete(url));
      });
    } else {
      onProgress?.({ engine: 'python', loadedBytes: 0, totalBytes: 0, done: false });
    }
    return Promise.all(urls.map((url) => this.#cache.get(url)!));
  }
}

async function downloadAll(
  urls: readonly string[],
  onProgress?: (progress: EngineProgress) => void,
): Promise<Uint8Array[]> {
  const responses = await Promise.all(urls.map((url) => fetch(url)));
  const failed = responses.find((r) => !r.ok);
  if (failed) throw new Error(`Could not download ${failed.url}: HTTP ${failed.status}.`);
  const totalBytes = responses.reduce((sum, r) => sum + Number(r.headers.get('content-length') ?? 0), 0);
  let loadedBytes = 0;
  let lastReport = 0;
  const report = (done: boolean) => onProgress?.({ engine: 'python', loadedBytes, totalBytes, done });
  report(false);
  return Promise.all(
    responses.map(async (response) => {
      const chunks: Uint8Array[] = [];
      const reader = response.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        loadedBytes += value.byteLength;
        if (loadedBytes - lastReport > 256 * 1024) {
          lastReport = loadedBytes;
          report(false);
        }
      }
      return concat(chunks);
    }),
  );
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
