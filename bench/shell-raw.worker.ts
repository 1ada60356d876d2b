/// <reference lib="webworker" />
import quickjsVariant from '@jitl/quickjs-wasmfile-release-sync';
import jqScript from 'jq-web/jq.js?raw';
import { Bash, InMemoryFs } from 'just-bash/browser';
import type { PyodideInterface } from 'pyodide';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import guestSource from '$lib/adapters/sandbox/engines/javascript-guest.js?raw';
import { loadQuickJs } from '$lib/adapters/sandbox/engines/javascript';
import { jqFactory, type JqWeb } from '$lib/adapters/sandbox/engines/jq';
import { engineCommands } from '$lib/adapters/sandbox/engine-commands';
import { FetchedEngines } from '$lib/adapters/sandbox/engine-files';
import { loadPython, pythonEngine } from '$lib/adapters/sandbox/engines/python';
import { SandboxFs, sameBytes } from '$lib/adapters/sandbox/sandbox-fs';
import { runShell, type ShellExit } from '$lib/adapters/sandbox/shell';
import type { ShellRequest } from '$lib/ports/sandbox';

/**
 * Bench only (bench/shell.browser.bench.ts): the sandbox worker's shell path and the raw engine
 * calls, timed in the same thread. The shell path repeats what `sandbox-main.ts` does per call
 * (SandboxFs over the request's files, the engines' commands with the flush before each engine,
 * the 500 ms changes ticker, `runShell`, the final `changes()`), without posting. The engines are
 * the same modules, loaded from the same files.
 */

export type RawName = 'echo' | 'jq' | 'python' | 'js';

export type ToRaw =
  | { type: 'init'; id: number; jqInput: Uint8Array }
  | { type: 'shell'; id: number; request: ShellRequest }
  | { type: 'raw'; id: number; name: RawName; fresh: boolean }
  | { type: 'pieces'; id: number; request: ShellRequest; runs: number };

export interface ShellTiming {
  totalMs: number;
  /** `new SandboxFs(mounts, files)`: the workspace copy into just-bash's in-memory filesystem. */
  fsMs: number;
  /** `runShell`: the shell, the command, and the engine's own copy in and out. */
  runMs: number;
  /** The final `fs.changes()`: every file read back and compared with the copy. */
  changesMs: number;
  /** Time spent in the flush before an engine starts (a `changes()` too). */
  flushMs: number;
  outcome: ShellExit;
}

export type FromRaw =
  | { type: 'ready'; id: number; loadMs: Record<string, number> }
  | { type: 'shell'; id: number; timing: ShellTiming }
  | { type: 'raw'; id: number; ms: number; stdout: string }
  | {
      type: 'pieces';
      id: number;
      medianMs: Record<string, number>;
      pythonFsEntries: number;
      jqHeapBytes: { initial: number; after1mb: number };
    }
  | { type: 'error'; id: number; message: string };

const scope = self as unknown as DedicatedWorkerGlobalScope;
const post = (message: FromRaw) => scope.postMessage(message);

const once = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
};

const files = new FetchedEngines();
const jq = once(async (): Promise<JqWeb> => ({
  script: jqScript,
  wasm: await WebAssembly.compile((await files.files('jq')).wasm as Uint8Array<ArrayBuffer>),
}));
const quickJs = once(async () => loadQuickJs((await files.files('javascript')).wasm));
const python = once(async () => loadPython(await pythonEngine(await files.files('python'))));

let current: SandboxFs | null = null;
let flushMs = 0;

async function flush(): Promise<void> {
  const fs = current;
  if (!fs) return;
  const start = performance.now();
  await fs.changes(); // the sandbox worker posts these when there are any
  flushMs += performance.now() - start;
}

const commands = engineCommands({ jq, python, quickJs }, { flush });

async function shellPath(request: ShellRequest): Promise<ShellTiming> {
  flushMs = 0;
  const start = performance.now();
  const fs = new SandboxFs(request.mounts, request.files);
  const built = performance.now();
  current = fs;
  const ticker = setInterval(() => void flush(), 500);
  let outcome: ShellExit;
  try {
    outcome = await runShell(fs, request, commands);
  } finally {
    clearInterval(ticker);
    current = null;
  }
  const ran = performance.now();
  await fs.changes();
  const end = performance.now();
  return {
    totalMs: end - start,
    fsMs: built - start,
    runMs: ran - built,
    changesMs: end - ran,
    flushMs,
    outcome,
  };
}

// --- The raw engines -------------------------------------------------------------------------

/** jq-web's module: `raw(input, filter, flags)` writes the input to its FS and runs jq's main. */
interface JqModule {
  raw(input: string | Uint8Array, filter: string, flags?: string[]): string;
}
type JqModuleFactory = (settings: object) => Promise<JqModule>;

async function jqModule(): Promise<JqModule> {
  const { script, wasm } = await jq();
  return (await jqFactory<JqModuleFactory>(script))({
    instantiateWasm(
      imports: WebAssembly.Imports,
      done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
    ) {
      void WebAssembly.instantiate(wasm, imports).then((instance) => {
        lastJqMemory = instance.exports.memory as WebAssembly.Memory;
        done(instance, wasm);
      });
      return {};
    },
  });
}

/** The heap of the jq instance made last. */
let lastJqMemory: WebAssembly.Memory | undefined;

let jqInput: Uint8Array = new Uint8Array();
let warmJq: JqModule | undefined;
let qjs: QuickJSWASMModule | undefined;
let pyodide: PyodideInterface | undefined;

/** A QuickJS module on its own memory, as engines/javascript.ts makes one per call. */
async function quickJsModule(): Promise<QuickJSWASMModule> {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 256 + 1024 });
  return newQuickJSWASMModuleFromVariant(
    newVariant(quickjsVariant, { wasmModule: await quickJs(), wasmMemory: memory }),
  );
}

/** `console.log('1')` in a fresh context of `module`, with console.log captured. */
function quickJsEval(module: QuickJSWASMModule): string {
  let out = '';
  const vm = module.newContext();
  try {
    const consoleObject = vm.newObject();
    vm.newFunction('log', (...args) => {
      out += `${args.map((a) => vm.getString(a)).join(' ')}\n`;
    }).consume((log) => vm.setProp(consoleObject, 'log', log));
    vm.setProp(vm.global, 'console', consoleObject);
    consoleObject.dispose();
    vm.unwrapResult(vm.evalCode('console.log(1)')).dispose();
  } finally {
    vm.dispose();
  }
  return out;
}

async function raw(name: RawName, fresh: boolean): Promise<{ ms: number; stdout: string }> {
  let stdout = '';
  const start = performance.now();
  switch (name) {
    case 'echo': {
      const r = await new Bash({ fs: new InMemoryFs() }).exec('echo hi');
      stdout = r.stdout;
      break;
    }
    case 'jq': {
      const module = fresh ? await jqModule() : warmJq!;
      stdout = `${module.raw(jqInput, '.[] | .a')}\n`;
      break;
    }
    case 'python': {
      const decoder = new TextDecoder();
      pyodide!.setStdout({
        write: (bytes: Uint8Array) => {
          stdout += decoder.decode(bytes);
          return bytes.length;
        },
      });
      pyodide!.runPython('print(1)');
      break;
    }
    case 'js':
      stdout = quickJsEval(fresh ? await quickJsModule() : qjs!);
      break;
  }
  return { ms: performance.now() - start, stdout };
}

/** The part of Emscripten's FS the walk below uses. */
interface EmFs {
  ignorePermissions: boolean;
  lstat(path: string): { mode: number };
  isDir(mode: number): boolean;
  readdir(path: string): string[];
  mkdirTree(path: string): void;
  writeFile(path: string, data: Uint8Array): void;
  readFile(path: string): Uint8Array;
  unlink(path: string): void;
  rmdir(path: string): void;
}

/** Every path under `root`, as engines/python.ts walks Pyodide's filesystem after each call. */
function walk(em: EmFs, root: string, out: string[] = []): string[] {
  out.push(root);
  const mode = em.lstat(root).mode;
  if (!em.isDir(mode)) return out;
  for (const name of em.readdir(root)) {
    const path = root === '/' ? `/${name}` : `${root}/${name}`;
    if (name !== '.' && name !== '..' && path !== '/proc') walk(em, path, out);
  }
  return out;
}

/**
 * The per-call steps of the shell path, each alone (median of `runs` batches): what one pass over the
 * workspace copy costs, and the engines' fixed costs.
 */
async function pieces(request: ShellRequest, runs: number) {
  const fs = new SandboxFs(request.mounts, request.files);
  const bytes = request.files[0]!.bytes;
  const copy = bytes.slice();
  const em = pyodide!.FS as unknown as EmFs;
  const { script, wasm } = await jq();
  const factory = await jqFactory<JqModuleFactory>(script);
  const steps: Record<string, () => unknown> = {
    sandboxfs_build: () => new SandboxFs(request.mounts, request.files),
    sandboxfs_files: () => fs.files(),
    sandboxfs_changes: () => fs.changes(),
    same_bytes_1mb: () => sameBytes(bytes, copy),
    // As engines/python.ts does it, with the permissions off ('/' is read-only to programs).
    python_fs_copy_in_and_out_1mb: () => {
      em.ignorePermissions = true;
      try {
        em.mkdirTree('/work');
        em.writeFile('/work/data.json', bytes);
        em.readFile('/work/data.json');
        em.unlink('/work/data.json');
        em.rmdir('/work');
      } finally {
        em.ignorePermissions = false;
      }
    },
    python_fs_walk: () => walk(em, '/'),
    jq_fresh_instance_trivial_input: async () =>
      (
        await factory({
          instantiateWasm(
            imports: WebAssembly.Imports,
            done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
          ) {
            void WebAssembly.instantiate(wasm, imports).then((instance) => done(instance, wasm));
            return {};
          },
        })
      ).raw('null', '.'),
    quickjs_fresh_instance: () => quickJsModule(),
    // The guest prelude (console, process, timers, workspace) engines/javascript.ts evaluates
    // in every context before the program.
    quickjs_guest_prelude_parse_and_run: () => {
      const vm = qjs!.newContext();
      vm.unwrapResult(vm.evalCode(guestSource, 'hearth:guest.js', { type: 'global' })).dispose();
      vm.dispose();
    },
    // What engines/python.ts does around every program: stdin, stdout, stderr set, then reset.
    python_set_streams: () => {
      const discard = { write: (b: Uint8Array) => b.length };
      pyodide!.setStdin({ read: () => 0 });
      pyodide!.setStdout(discard);
      pyodide!.setStderr(discard);
      pyodide!.setStdout(discard);
      pyodide!.setStderr(discard);
    },
  };
  const medianMs: Record<string, number> = {};
  for (const [name, step] of Object.entries(steps)) {
    const times: number[] = [];
    // Batches of 10: the page's clock is coarse (0.1 ms without cross-origin isolation).
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      for (let j = 0; j < 10; j++) await step();
      times.push((performance.now() - start) / 10);
    }
    times.sort((a, b) => a - b);
    medianMs[name] = times[times.length >> 1]!;
  }
  // How large a fresh jq heap grows for the 1 MB input (a warm instance keeps its grown heap).
  const initialJqHeap = (await jqModule(), lastJqMemory!.buffer.byteLength);
  (await jqModule()).raw(jqInput, '.[] | .a');
  const jqHeapBytes = { initial: initialJqHeap, after1mb: lastJqMemory!.buffer.byteLength };
  return { medianMs, pythonFsEntries: walk(em, '/').length, jqHeapBytes };
}

async function handle(message: ToRaw): Promise<FromRaw> {
  switch (message.type) {
    case 'init': {
      jqInput = message.jqInput;
      const time = async (load: () => Promise<unknown>) => {
        const start = performance.now();
        await load();
        return performance.now() - start;
      };
      const loadMs = {
        jq: await time(async () => (warmJq = await jqModule())),
        quickjs: await time(async () => (qjs = await quickJsModule())),
        python: await time(async () => (pyodide = await python())),
      };
      return { type: 'ready', id: message.id, loadMs };
    }
    case 'shell':
      return { type: 'shell', id: message.id, timing: await shellPath(message.request) };
    case 'raw':
      return { type: 'raw', id: message.id, ...(await raw(message.name, message.fresh)) };
    case 'pieces':
      return { type: 'pieces', id: message.id, ...(await pieces(message.request, message.runs)) };
  }
}

let queue = Promise.resolve();
scope.addEventListener('message', (event: MessageEvent<ToRaw>) => {
  const message = event.data;
  queue = queue.then(() =>
    handle(message).then(post, (e: unknown) =>
      post({
        type: 'error',
        id: message.id,
        message: e instanceof Error ? (e.stack ?? e.message) : JSON.stringify(e),
      }),
    ),
  );
});
