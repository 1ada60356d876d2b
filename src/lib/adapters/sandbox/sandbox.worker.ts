/// <reference lib="webworker" />
import jqScript from 'jq-web/jq.js?raw';
import jqWasmURL from 'jq-web/jq.wasm?url';
import { pyodideIndexURL } from 'virtual:hearth-engines';
import type { PyodideInterface } from 'pyodide';
import type { EngineProgress } from '$lib/domain/run-update';
import type { CallBuiltin } from '$lib/ports/sandbox';
import { engineCommands } from './engine-commands';
import { downloadWithProgress } from './engine-download';
import { loadQuickJs } from './engines/javascript';
import { loadPython, pythonUsable } from './engines/python';
import { lockdown } from './lockdown';
import type { FromSandbox, ToSandbox } from './protocol';
import { SandboxFs } from './sandbox-fs';
import { runShell, type ShellExit } from './shell';

/**
 * The sandbox worker (DESIGN.md Threads): runs shell calls one at a time. Network, storage and
 * channels are removed from the global scope before anything else happens; engines load with
 * the network briefly back, and never after Python has run.
 */
const scope = self as unknown as DedicatedWorkerGlobalScope;
const post = scope.postMessage.bind(scope) as (message: FromSandbox) => void;
const guard = lockdown(scope);

/** While a call runs, its changes so far are sent this often (kept if the call is stopped). */
const CHANGES_INTERVAL_MS = 500;

/** The call running now; progress and builtin requests belong to it. */
let current: { id: number; fs: SandboxFs } | null = null;
let loadedPython: PyodideInterface | null = null;
const report = (progress: EngineProgress) => post({ type: 'progress', id: current?.id ?? 0, progress });

/** Loads once; a failed load is tried again by the next command that needs it. */
const once = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((e: unknown) => {
      loading = undefined;
      throw e;
    }));
};

// Small engines load at once, so no load needs the network after Python has run. A failure here
// fails only the command that needs that engine (it tries again while the network window is open).
const jq = once(() =>
  guard.withNetwork(async () => ({
    script: jqScript,
    wasm: await WebAssembly.compile(await (await fetch(jqWasmURL)).arrayBuffer()),
  })),
);
const quickJs = once(() => guard.withNetwork(loadQuickJs));
const engines = Promise.allSettled([jq(), quickJs()]);

const python = once(async (): Promise<PyodideInterface> => {
  const pyodide = await guard.withNetwork(async () => {
    await downloadWithProgress(
      ['pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide.asm.mjs'].map((f) => pyodideIndexURL + f),
      report,
    );
    return loadPython({ indexURL: pyodideIndexURL });
  });
  guard.seal();
  report({ engine: 'python', loadedBytes: 1, totalBytes: 1, done: true });
  return (loadedPython = pyodide);
});

/** Sends the call's changes so far: a call stopped later keeps them. */
async function flush(): Promise<void> {
  const call = current;
  if (!call) return;
  const changes = await call.fs.changes();
  if (changes.length > 0) post({ type: 'changes', id: call.id, changes });
}

const commands = engineCommands({ jq, python, quickJs }, flush);

const builtinAnswers = new Map<number, (result: { text: string; isError: boolean }) => void>();
let nextBuiltinRequest = 1;

/** A `builtin.<name>` command asks the runtime, which runs the tool and answers. */
const callBuiltin: CallBuiltin = (name, args) =>
  new Promise((resolve) => {
    const requestId = nextBuiltinRequest++;
    builtinAnswers.set(requestId, resolve);
    post({ type: 'builtin', id: current?.id ?? 0, requestId, name, args });
  });

let queue = Promise.resolve();
scope.addEventListener('message', (event: MessageEvent<ToSandbox>) => {
  const message = event.data;
  if (message.type === 'builtin-result') {
    builtinAnswers.get(message.requestId)?.(message);
    builtinAnswers.delete(message.requestId);
  } else {
    queue = queue.then(() => run(message));
  }
});

async function run({ id, request }: Extract<ToSandbox, { type: 'run' }>): Promise<void> {
  const fs = new SandboxFs(request.mounts, request.files);
  current = { id, fs };
  const ticker = setInterval(() => void flush(), CHANGES_INTERVAL_MS);
  let outcome: ShellExit;
  try {
    await engines;
    outcome = await runShell(fs, request, commands, { callBuiltin });
  } catch (e) {
    outcome = { kind: 'failed', message: e instanceof Error ? e.message : String(e) };
  } finally {
    clearInterval(ticker);
    current = null;
  }
  // A Python runtime that crashed cannot be reloaded here (the network is gone for good).
  const retire = loadedPython !== null && !pythonUsable(loadedPython);
  post({ type: 'done', id, outcome, changes: await fs.changes(), retire });
}
