import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SandboxSpawner } from '$lib/adapters/sandbox/sandbox-host';
import { WorkerSandbox } from '$lib/adapters/sandbox/worker-sandbox';
import { shellMounts } from '$lib/domain/shell-mounts';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { ShellRun } from '$lib/ports/sandbox';

/**
 * A sandbox that never starts (the page's host gone, its code never arriving) fails the call
 * with what it waited for, instead of leaving the shell "Running…" for good. Fake timers: the
 * boot limit is 30 s.
 */
const never = <T>() => new Promise<T>(() => {});
const engines = (bundle: () => Promise<string>) => ({ bundle, files: never }) as never;

const run = (sandbox: WorkerSandbox): Promise<ShellRun> =>
  sandbox.run(
    {
      workspace: 'sessions/a',
      command: 'echo hi',
      workdir: '/',
      mounts: shellMounts(sessionRoots()),
      files: [],
      builtins: [],
    },
    { signal: new AbortController().signal },
  );

afterEach(() => vi.useRealTimers());

describe('a sandbox that does not start', () => {
  it('names the host when it never starts a worker', async () => {
    vi.useFakeTimers();
    const host: SandboxSpawner = { spawn: never };
    const done = run(
      new WorkerSandbox(
        host,
        engines(async () => 'code'),
      ),
    );
    await vi.advanceTimersByTimeAsync(30_000);
    expect((await done).outcome).toEqual({
      kind: 'failed',
      message: 'The sandbox did not start: the sandbox host did not start a worker within 30 s',
    });
  });

  it("names the sandbox's code when it never arrives", async () => {
    vi.useFakeTimers();
    const { port1 } = new MessageChannel();
    const host: SandboxSpawner = {
      spawn: async () => ({ port: port1, terminate: () => port1.close(), crashed: never() }),
    };
    const done = run(new WorkerSandbox(host, engines(never)));
    await vi.advanceTimersByTimeAsync(30_000);
    expect((await done).outcome).toMatchObject({
      kind: 'failed',
      message: "The sandbox did not start: the sandbox's code did not arrive within 30 s",
    });
  });

  it('names the worker when it never answers, and ends it', async () => {
    vi.useFakeTimers();
    const { port1 } = new MessageChannel();
    const terminate = vi.fn(() => port1.close());
    const host: SandboxSpawner = { spawn: async () => ({ port: port1, terminate, crashed: never() }) };
    const done = run(
      new WorkerSandbox(
        host,
        engines(async () => 'code'),
      ),
    );
    await vi.advanceTimersByTimeAsync(30_000);
    expect((await done).outcome).toMatchObject({
      kind: 'failed',
      message: 'The sandbox did not start: the sandbox worker did not answer within 30 s',
    });
    expect(terminate).toHaveBeenCalled();
  });
});

it('Stop ends a call whose sandbox is still starting', async () => {
  const stop = new AbortController();
  const sandbox = new WorkerSandbox(
    { spawn: never },
    engines(async () => 'code'),
  );
  const done = sandbox.run(
    {
      workspace: 'sessions/a',
      command: 'echo hi',
      workdir: '/',
      mounts: shellMounts(sessionRoots()),
      files: [],
      builtins: [],
    },
    { signal: stop.signal },
  );
  stop.abort();
  expect((await done).outcome).toEqual({ kind: 'cancelled' });
});
