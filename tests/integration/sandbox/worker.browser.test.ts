import { afterAll, describe, expect, it } from 'vitest';
import { FetchedEngines } from '$lib/adapters/sandbox/engine-files';
import { SandboxHost, type SandboxSpawner } from '$lib/adapters/sandbox/sandbox-host';
import { WorkerSandbox } from '$lib/adapters/sandbox/worker-sandbox';
import { startSandboxHost } from '$lib/client/sandbox-host';
import { shellMounts } from '$lib/domain/shell-mounts';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { EngineProgress } from '$lib/domain/run-update';
import type { SandboxFile, ShellRun } from '$lib/ports/sandbox';

/**
 * The real sandbox in Chromium: workers started by the page's sandbox host in its no-network
 * frame, the engines' files from the dev server as in the app, and timeouts and Stop ending
 * calls with terminate().
 */
const host = new SandboxHost(Promise.resolve(startSandboxHost(document)));
const engines = new FetchedEngines();
/** The host, counting the workers it starts. */
const counted = () => {
  const spawner = { started: 0, spawn: () => (spawner.started++, host.spawn()) };
  return spawner satisfies SandboxSpawner;
};
const sandbox = new WorkerSandbox(host, engines, { timeoutMs: 20_000 });
const workspaces = new Set<string>();
afterAll(() => workspaces.forEach((w) => sandbox.release(w)));

const encode = (text: string) => new TextEncoder().encode(text);
const file = (path: string, text: string): SandboxFile => ({
  path: path as WorkspacePath,
  bytes: encode(text),
});

async function run(
  command: string,
  options: {
    files?: SandboxFile[];
    signal?: AbortSignal;
    on?: WorkerSandbox;
    workspace?: string;
    progress?: EngineProgress[];
  } = {},
): Promise<ShellRun> {
  const workspace = options.workspace ?? 'sessions/a';
  workspaces.add(workspace);
  return (options.on ?? sandbox).run(
    {
      workspace,
      command,
      workdir: '/',
      mounts: shellMounts(sessionRoots()),
      files: options.files ?? [],
      builtins: [],
    },
    { signal: options.signal ?? new AbortController().signal, onProgress: (p) => options.progress?.push(p) },
  );
}

const exited = (r: ShellRun) => {
  if (r.outcome.kind !== 'exited') throw new Error(`expected an exit, got ${JSON.stringify(r.outcome)}`);
  return r.outcome;
};

describe('the sandbox worker', () => {
  it('runs bash, jq, Python and JavaScript over the workspace copy', { timeout: 120_000 }, async () => {
    const progress: EngineProgress[] = [];
    const r = await run(
      [
        'echo \'[{"a":1},{"a":2}]\' | jq -c "map(.a)"',
        'python3 -c "import json; print(sum(json.load(open(\'/work/n.json\'))))"',
        'js -e "console.log(workspace.readFile(\'/work/n.json\').trim())"',
        "python -c \"open('/work/py.txt','w').write('from python')\"",
      ].join('; '),
      { files: [file('work/n.json', '[1,2,3]\n')], progress },
    );
    expect(exited(r)).toMatchObject({ exitCode: 0, stdout: '[1,2]\n6\n[1,2,3]\n' });
    expect(r.changes.map((c) => [c.path, new TextDecoder().decode(c.bytes!)])).toEqual([
      ['work/py.txt', 'from python'],
    ]);
    // The first Python call downloaded the runtime and said so.
    expect(progress.at(-1)).toMatchObject({ engine: 'python', done: true });
  });

  it(
    "gives user code nothing of the worker's realm: JavaScript has no host globals, Python's routes are refused",
    { timeout: 60_000 },
    async () => {
      const js = await run(
        "js -e 'console.log([typeof fetch, typeof XMLHttpRequest, typeof importScripts, typeof WebSocket, typeof indexedDB].join())'",
      );
      expect(exited(js).stdout).toBe('undefined,undefined,undefined,undefined,undefined\n');

      // Any JS object leads to the realm's Function constructor, which the sandbox's policy refuses.
      const ffi = await run(
        `python3 -c "from pyodide.ffi import to_js; to_js([]).constructor.constructor('return globalThis')()"`,
      );
      expect(exited(ffi).exitCode).toBe(1);
      expect(exited(ffi).stderr).toContain('EvalError');

      const bridge = await run('python3 -c "import js; js.fetch"');
      expect(exited(bridge).exitCode).toBe(1);
      expect(exited(bridge).stderr).toMatch(/AttributeError|ImportError/);

      const http = await run(
        'python3 -c "from pyodide.http import open_url; open_url(\'http://127.0.0.1:9/x\')"',
      );
      expect(exited(http).exitCode).toBe(1);
    },
  );

  it('ends a runaway Python loop at the deadline and replaces the worker', { timeout: 90_000 }, async () => {
    const short = new WorkerSandbox(host, engines, { timeoutMs: 3_000 });
    await run('python3 -c "print(1)"', { on: short });
    const r = await run('echo kept > /work/before.txt; python3 -c "while True: pass"', { on: short });
    expect(r.outcome).toEqual({ kind: 'timeout' });
    // What the command completed before Python started was sent while it ran, and is kept.
    expect(r.changes.map((c) => c.path)).toEqual(['work/before.txt']);
    const after = await run('python3 -c "print(2)"', { on: short });
    expect(exited(after).stdout).toBe('2\n');
  });

  it(
    'survives a Python memory bomb: MemoryError or the deadline, then a fresh start',
    { timeout: 90_000 },
    async () => {
      const short = new WorkerSandbox(host, engines, { timeoutMs: 5_000 });
      const huge = await run('python3 -c "b = bytearray(2**31 - 1)"', { on: short });
      expect(exited(huge).exitCode).toBe(1);
      expect(exited(huge).stderr).toContain('MemoryError');
      const bomb = await run('python3 -c "l = []\nwhile True: l.append(bytearray(10**7))"', { on: short });
      if (bomb.outcome.kind !== 'timeout') expect(exited(bomb).stderr).toContain('MemoryError');
      expect(exited(await run('python3 -c "print(3)"', { on: short })).stdout).toBe('3\n');
    },
  );

  it('Stop ends a long Python loop at once', { timeout: 90_000 }, async () => {
    await run('python3 -c "print(1)"');
    const stop = new AbortController();
    const pending = run('python3 -c "import time\nwhile True: time.sleep(0.01)"', { signal: stop.signal });
    setTimeout(() => stop.abort(), 500);
    const r = await pending;
    expect(r.outcome).toEqual({ kind: 'cancelled' });
    expect(exited(await run('echo after')).stdout).toBe('after\n');
  });

  it(
    'a worker serves one workspace: another workspace gets its own, release ends it, Python that touched the realm ends it',
    { timeout: 90_000 },
    async () => {
      const spawner = counted();
      const own = new WorkerSandbox(spawner, engines);
      await run('echo warm', { on: own, workspace: 'sessions/one' });
      await run('echo reused', { on: own, workspace: 'sessions/one' });
      expect(spawner.started).toBe(1);

      await run('echo other', { on: own, workspace: 'sessions/two' });
      expect(spawner.started).toBe(2);

      own.release('sessions/one');
      await run('echo again', { on: own, workspace: 'sessions/one' });
      expect(spawner.started).toBe(3);

      // A plain program keeps its worker warm; one that leaves work behind in the realm does not.
      await run('python3 -c "print(1)"', { on: own, workspace: 'sessions/one' });
      await run('python3 -c "print(2)"', { on: own, workspace: 'sessions/one' });
      expect(spawner.started).toBe(3);
      const touched = await run(
        `python3 -c "from pyodide.ffi import create_proxy; import pyodide_js; pyodide_js.setInterrupt = 1"`,
        { on: own, workspace: 'sessions/one' },
      );
      expect(exited(touched).exitCode).toBe(0);
      await run('echo fresh', { on: own, workspace: 'sessions/one' });
      expect(spawner.started).toBe(4);
      own.release('sessions/one');
      own.release('sessions/two');
    },
  );

  it('gives each call on a warm worker the workspace as it is now, and nothing of the last call', async () => {
    const list = `python3 -c "import os; print(sorted(os.listdir('/work')), open('/work/a.txt').read())"`;
    const first = await run(`${list}; js -e 'globalThis.leak = 1'`, {
      files: [file('work/a.txt', 'one'), file('work/gone.txt', 'x')],
    });
    expect(exited(first).stdout).toBe("['a.txt', 'gone.txt'] one\n");
    const second = await run(`${list}; js -e 'console.log(typeof leak)'`, {
      files: [file('work/a.txt', 'two'), file('work/new.txt', 'n')],
    });
    expect(exited(second).stdout).toBe("['a.txt', 'new.txt'] two\nundefined\n");
  });

  it('answers builtin.<name> commands through the runtime', async () => {
    const asked: unknown[] = [];
    const r = await sandbox.run(
      {
        workspace: 'sessions/a',
        command: `builtin.dice.roll '{"formula":"2d6"}' | tr a-z A-Z`,
        workdir: '/',
        mounts: shellMounts(sessionRoots()),
        files: [],
        builtins: ['dice.roll'],
      },
      {
        signal: new AbortController().signal,
        callBuiltin: async (name, args) => {
          asked.push([name, args]);
          return { text: 'rolled 7', isError: false };
        },
      },
    );
    expect(exited(r).stdout).toBe('ROLLED 7\n');
    expect(asked).toEqual([['dice.roll', { formula: '2d6' }]]);
  });

  it('bounds JavaScript: an endless loop, a memory bomb, deep recursion', { timeout: 60_000 }, async () => {
    const bomb = await run('js -e \'const a = []; for (;;) a.push("x".repeat(1e6))\'');
    expect(exited(bomb).exitCode).not.toBe(0);
    const recursion = await run("js -e 'const f = () => f(); f()'");
    expect(exited(recursion).exitCode).not.toBe(0);
    expect(exited(await run('echo still here')).stdout).toBe('still here\n');
  });
});
