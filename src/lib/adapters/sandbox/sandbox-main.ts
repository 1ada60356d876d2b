/// <reference lib="webworker" />
import jqScript from 'jq-web/jq.js?raw';
import type { PyodideInterface } from 'pyodide';
import type { CallBuiltin } from '$lib/ports/sandbox';
import { engineCommands } from './engine-commands';
import { loadQuickJs } from './engines/javascript';
import { loadPython, pythonEngine, pythonUsable } from './engines/python';
import type { InvokeMcp } from './mcp-commands';
import type { EngineFiles, EngineName, FromSandbox, ToSandbox } from './protocol';
import { SandboxFs } from './sandbox-fs';
import { runShell, type ShellExit } from './shell';
import { tripwire } from './tripwire';

/** While a call runs, its changes so far are sent this often (kept if the call is stopped). */
const CHANGES_INTERVAL_MS = 500;

/**
 * The sandbox's code (built as one ES module with no imports; `boot.js` imports it from its text
 * once the worker's isolation is checked). Runs shell calls one at a time for one workspace.
 * Engines load on first use from files the runtime sends: this worker cannot fetch anything.
 */
export function start(port: MessagePort): void {
  const post = (message: FromSandbox) => port.postMessage(message);
  const wire = tripwire(globalThis);

  const delivered = new Map<EngineName, (files: never) => void>();
  const need = <E extends EngineName>(engine: E) =>
    new Promise<EngineFiles[E]>((resolve) => {
      delivered.set(engine, resolve as (files: never) => void);
      post({ type: 'need', engine });
    });
  /** Loads once; a failed load is tried again by the next command that needs it. */
  const engine = <E extends EngineName, T>(
    name: E,
    load: (files: EngineFiles[E]) => Promise<T>,
    reachable: (loaded: T) => object[] = () => [],
  ) => {
    let loading: Promise<T> | undefined;
    let ready = false;
    const get = () =>
      (loading ??= need(name)
        .then(load)
        .then((loaded) => {
          wire.trust(reachable(loaded));
          ready = true;
          post({ type: 'loaded', engine: name });
          return loaded;
        })
        .catch((e: unknown) => {
          loading = undefined;
          throw e;
        }));
    /** A command's load: one still in progress from a warm-up tells the runtime it is waited for. */
    const forCommand = () => {
      if (loading && !ready) post({ type: 'waiting', engine: name });
      return get();
    };
    return Object.assign(forCommand, { warm: get });
  };
  let python: PyodideInterface | null = null;
  const loaders = {
    jq: engine('jq', async ({ wasm }) => ({
      script: jqScript,
      wasm: await WebAssembly.compile(wasm as Uint8Array<ArrayBuffer>),
    })),
    quickJs: engine('javascript', ({ wasm }) => loadQuickJs(wasm)),
    // Programs reach Pyodide's API object (`import pyodide_js`) and its filesystem.
    python: engine(
      'python',
      async (files) => (python = await loadPython(await pythonEngine(files))),
      (pyodide) => [pyodide, pyodide.FS],
    ),
  };

  /** The call running now; builtin requests and changes belong to it. */
  let current: { id: number; fs: SandboxFs } | null = null;

  /** Sends the call's changes so far: a call stopped later keeps them. */
  async function flush(): Promise<void> {
    const call = current;
    if (!call) return;
    const changes = await call.fs.changes();
    if (changes.length > 0) post({ type: 'changes', id: call.id, changes });
  }

  const commands = engineCommands(loaders, { flush, watch: wire.watch });

  const answers = new Map<number, (answer: never) => void>();
  let nextRequest = 1;
  /** `builtin.<name>` and `mcp.invoke` ask the runtime, which runs the tool and answers. */
  const ask = <T>(question: (requestId: number) => FromSandbox) =>
    new Promise<T>((resolve) => {
      const requestId = nextRequest++;
      answers.set(requestId, resolve as (answer: never) => void);
      post(question(requestId));
    });
  const callBuiltin: CallBuiltin = (name, args) =>
    ask((requestId) => ({ type: 'builtin', id: current?.id ?? 0, requestId, name, args }));
  const callMcp: InvokeMcp = (call) =>
    ask((requestId) => ({ type: 'mcp', id: current?.id ?? 0, requestId, call }));

  async function run({ id, request }: Extract<ToSandbox, { type: 'run' }>): Promise<void> {
    post({ type: 'started', id });
    const fs = new SandboxFs(request.mounts, request.files);
    current = { id, fs };
    const ticker = setInterval(() => void flush(), CHANGES_INTERVAL_MS);
    let outcome: ShellExit;
    try {
      outcome = await runShell(fs, request, commands, { callBuiltin, callMcp });
    } catch (e) {
      outcome = { kind: 'failed', message: e instanceof Error ? e.message : String(e) };
    } finally {
      clearInterval(ticker);
      current = null;
    }
    // A Python runtime that crashed cannot be reloaded here; a touched realm is not clean.
    const retire = (python !== null && !pythonUsable(python)) || wire.tripped();
    post({ type: 'done', id, outcome, changes: await fs.changes(), retire });
  }

  let queue = Promise.resolve();
  port.onmessage = ({ data: message }: MessageEvent<ToSandbox>) => {
    if (message.type === 'engine') {
      delivered.get(message.engine)?.(message.files as never);
      delivered.delete(message.engine);
    } else if (message.type === 'builtin-result' || message.type === 'mcp-result') {
      answers.get(message.requestId)?.(message as never);
      answers.delete(message.requestId);
    } else if (message.type === 'warm') {
      if (message.engine === 'python') void loaders.python.warm().catch(() => {});
    } else if (message.type === 'run') {
      queue = queue.then(() => run(message));
    }
  };
  post({ type: 'ready' });
  // jq and QuickJS are small: load them while the first command is on its way.
  void loaders.jq.warm().catch(() => {});
  void loaders.quickJs.warm().catch(() => {});
}
