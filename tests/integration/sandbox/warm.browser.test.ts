import { afterAll, describe, expect, it } from 'vitest';
import { FetchedEngines } from '$lib/adapters/sandbox/engine-files';
import { SandboxHost, type SandboxSpawner } from '$lib/adapters/sandbox/sandbox-host';
import { WorkerSandbox } from '$lib/adapters/sandbox/worker-sandbox';
import { startSandboxHost } from '$lib/client/sandbox-host';
import { shellMounts } from '$lib/domain/shell-mounts';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { EngineProgress } from '$lib/domain/run-update';
import type { ShellRun } from '$lib/ports/sandbox';

/**
 * Python's start in the real sandbox (Chromium, engine files from the dev server): each engine
 * file is fetched once per tab, however many sandboxes load it, and `warm()` starts Python in a
 * spare worker before any call, which the first workspace to call then gets.
 */

const PYODIDE_FILES = ['pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'];

/** Every fetch of this page by file name; `wasmFetched` resolves on the first of Pyodide's wasm. */
const fetched = new Map<string, number>();
let wasmFetched: () => void = () => {};
const firstWasm = new Promise<void>((resolve) => (wasmFetched = resolve));
/** Resolved at the next fetch of Pyodide's wasm. */
let nextWasm: (() => void)[] = [];
const nextWasmFetch = () => new Promise<void>((resolve) => nextWasm.push(resolve));
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  const name = new URL(url, location.href).pathname.split('/').pop() ?? '';
  fetched.set(name, (fetched.get(name) ?? 0) + 1);
  if (name === 'pyodide.asm.wasm') {
    wasmFetched();
    nextWasm.forEach((resolve) => resolve());
    nextWasm = [];
  }
  return realFetch(input, init);
};
afterAll(() => void (globalThis.fetch = realFetch));

const host = new SandboxHost(Promise.resolve(startSandboxHost(document)));
/** The host, counting the workers it starts. */
const spawner: SandboxSpawner & { started: number } = {
  started: 0,
  spawn: () => (spawner.started++, host.spawn()),
};
const sandbox = new WorkerSandbox(spawner, new FetchedEngines());
afterAll(() => ['sessions/warm-a', 'sessions/warm-b'].forEach((w) => sandbox.release(w)));

function python(workspace: string, progress: EngineProgress[]): Promise<ShellRun> {
  return runOn(sandbox, workspace, "python3 -c 'print(6 * 7)'", progress);
}

function runOn(on: WorkerSandbox, workspace: string, command: string, progress: EngineProgress[] = []) {
  return on.run(
    { workspace, command, workdir: '/', mounts: shellMounts(sessionRoots()), files: [], builtins: [] },
    { signal: new AbortController().signal, onProgress: (p) => progress.push(p) },
  );
}

const stdout = (r: ShellRun) => (r.outcome.kind === 'exited' ? r.outcome.stdout : JSON.stringify(r.outcome));

describe('Python in the sandbox', () => {
  it(
    'warms once before any call, shows its start to the first call, and fetches each engine file once',
    { timeout: 120_000 },
    async () => {
      sandbox.warm();
      sandbox.warm();
      expect(spawner.started).toBe(1);
      // Nothing has called the shell yet: the warm-up alone asks for Pyodide's files.
      await firstWasm;

      const first: EngineProgress[] = [];
      expect(stdout(await python('sessions/warm-a', first))).toBe('42\n');
      expect(spawner.started).toBe(1);
      // The call came while Python was still starting: it says so, then that Python is ready.
      expect(first.at(0)).toMatchObject({ engine: 'python', done: false });
      expect(first.at(-1)).toMatchObject({ engine: 'python', done: true });

      // Another workspace: its own worker and its own Python, from the files read already.
      const second: EngineProgress[] = [];
      expect(stdout(await python('sessions/warm-b', second))).toBe('42\n');
      expect(spawner.started).toBe(2);
      expect(second.at(-1)).toMatchObject({ engine: 'python', done: true });

      expect(PYODIDE_FILES.map((f) => [f, fetched.get(f)])).toEqual(PYODIDE_FILES.map((f) => [f, 1]));
    },
  );

  it(
    'a command that does not name Python does not wait for the spare to start Python; the next Python command moves to it',
    { timeout: 120_000 },
    async () => {
      // Each worker this sandbox starts, in order, and whether it was ended.
      const workers: { ended: boolean }[] = [];
      const tracking: SandboxSpawner = {
        async spawn() {
          const process = await host.spawn();
          const record = { ended: false };
          workers.push(record);
          return {
            port: process.port,
            crashed: process.crashed,
            terminate: () => ((record.ended = true), process.terminate()),
          };
        },
      };
      const sandbox = new WorkerSandbox(tracking, new FetchedEngines());
      try {
        const spareAsks = nextWasmFetch();
        sandbox.warm();
        // The spare has started and asked for Python's files.
        await spareAsks;
        const waited: EngineProgress[] = [];
        // The spare is starting Python: `echo` gets a worker of its own and waits for nothing.
        expect(stdout(await runOn(sandbox, 'sessions/warm-c', 'echo hi', waited))).toBe('hi\n');
        expect(workers).toEqual([{ ended: false }, { ended: false }]);
        expect(waited).toEqual([]);
        // Python goes to the spare, where it is starting; the worker without it ends.
        expect(stdout(await runOn(sandbox, 'sessions/warm-c', "python3 -c 'print(1)'"))).toBe('1\n');
        expect(workers).toEqual([{ ended: false }, { ended: true }]);
        // And the workspace stays there.
        expect(stdout(await runOn(sandbox, 'sessions/warm-c', 'echo again'))).toBe('again\n');
        expect(workers).toEqual([{ ended: false }, { ended: true }]);
      } finally {
        sandbox.release('sessions/warm-c');
      }
    },
  );
});
