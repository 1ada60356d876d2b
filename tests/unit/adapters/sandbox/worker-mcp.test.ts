import { describe, expect, it } from 'vitest';
import type { ToSandbox } from '$lib/adapters/sandbox/protocol';
import type { SandboxSpawner } from '$lib/adapters/sandbox/sandbox-host';
import { WorkerSandbox } from '$lib/adapters/sandbox/worker-sandbox';
import { shellMounts } from '$lib/domain/shell-mounts';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { CallMcp, ShellMcpCall } from '$lib/ports/sandbox';

/**
 * `mcp.invoke` through the sandbox worker adapter, with a fake worker that runs one command: it
 * asks for `call` and exits with the answer's code. The budget is 200 ms here.
 */
const BUDGET_MS = 200;
const never = <T>() => new Promise<T>(() => {});
const engines = { bundle: async () => 'code', files: never } as never;

/** `busyMs`: how long the worker is busy (a warm-up) before it takes up the call. */
function fakeWorker(call: ShellMcpCall, busyMs = 0): SandboxSpawner {
  return {
    spawn: async () => {
      const { port1, port2 } = new MessageChannel();
      port2.onmessage = ({ data }: MessageEvent<ToSandbox>) => {
        if (data.type === 'boot') port2.postMessage({ type: 'ready' });
        if (data.type === 'run') {
          const id = data.id;
          setTimeout(() => {
            port2.postMessage({ type: 'started', id });
            port2.postMessage({ type: 'mcp', id, requestId: 1, call });
          }, busyMs);
        }
        if (data.type === 'mcp-result') {
          const outcome = {
            kind: 'exited',
            exitCode: data.exitCode,
            stdout: data.text,
            stderr: '',
            outputTruncated: false,
          };
          port2.postMessage({ type: 'done', id: data.id, outcome, changes: [], retire: false });
        }
      };
      return { port: port1, terminate: () => (port1.close(), port2.close()), crashed: never() };
    },
  };
}

const ECHO = { serverId: 's1', server: 'Everything', tool: 'echo', approval: 'ask' as const };
const run = (call: ShellMcpCall, callMcp: CallMcp, busyMs = 0) =>
  new WorkerSandbox(fakeWorker(call, busyMs), engines, { timeoutMs: BUDGET_MS }).run(
    {
      workspace: 'sessions/a',
      command: 'mcp.invoke --name Everything echo',
      workdir: '/',
      mounts: shellMounts(sessionRoots()),
      files: [],
      builtins: [],
      mcp: [ECHO],
    },
    { signal: new AbortController().signal, callMcp },
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const call: ShellMcpCall = { serverId: 's1', tool: 'echo', arguments: {} };

describe('mcp.invoke through the worker sandbox', () => {
  it('a wait for the person holds the budget; the call itself does not', async () => {
    const done = await run(call, async (_call, hooks) => {
      const resume = hooks.hold();
      await sleep(BUDGET_MS * 2);
      resume();
      return { exitCode: 0, text: 'approved and done' };
    });
    expect(done.outcome).toMatchObject({ kind: 'exited', exitCode: 0, stdout: 'approved and done' });

    let signal: AbortSignal | undefined;
    const late = await run(call, async (_call, hooks) => {
      signal = hooks.signal;
      await sleep(BUDGET_MS * 2);
      return { exitCode: 0, text: 'too late' };
    });
    expect(late.outcome).toEqual({ kind: 'timeout' });
    // The command is over: a call still running learns it.
    expect(signal?.aborted).toBe(true);
  });

  it('the budget starts when the worker takes up the call, not while it was busy before', async () => {
    const done = await run(call, async () => ({ exitCode: 0, text: 'ran' }), BUDGET_MS * 2);
    expect(done.outcome).toMatchObject({ kind: 'exited', exitCode: 0, stdout: 'ran' });
  });

  it('answers a tool the shell was not given without asking the runtime', async () => {
    let asked = false;
    const done = await run(
      { ...call, tool: 'rm-rf' },
      async () => ((asked = true), { exitCode: 0, text: '' }),
    );
    expect(done.outcome).toMatchObject({ exitCode: 2, stdout: 'rm-rf is not an MCP tool of this run.' });
    expect(asked).toBe(false);
  });
});
