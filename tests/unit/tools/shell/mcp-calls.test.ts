import { describe, expect, it } from 'vitest';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { McpCallHooks, ShellMcpResult } from '$lib/ports/sandbox';
import { mcpCalls } from '$lib/tools/shell/mcp-calls';
import type { ShellMcp, ToolContext } from '$lib/tools/tool';

const TOOLS: ShellMcp['tools'] = [{ serverId: 's1', server: 'Everything', tool: 'echo', approval: 'allow' }];
const call = { serverId: 's1', tool: 'echo', arguments: {} };
const hooks = (signal = new AbortController().signal): McpCallHooks => ({ signal, hold: () => () => {} });
const ctx = (signal = new AbortController().signal) => ({ signal }) as ToolContext;

describe("a shell call's mcp.invoke calls", () => {
  it('waits for the calls the command left running and names them: they may have run', async () => {
    let answer!: (r: ShellMcpResult) => void;
    const mcp: ShellMcp = { tools: TOOLS, invoke: () => new Promise((resolve) => (answer = resolve)) };
    const calls = mcpCalls(mcp, ctx());
    void calls.call(call, hooks());
    const settled = calls.settled();
    let done = false;
    void settled.then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    answer({ exitCode: 124, text: 'no answer' });
    expect(await settled).toEqual(['`echo` on Everything']);
  });

  it('names none when every call answered before the command ended', async () => {
    const calls = mcpCalls({ tools: TOOLS, invoke: async () => ({ exitCode: 0, text: 'ok' }) }, ctx());
    expect(await calls.call(call, hooks())).toEqual({ exitCode: 0, text: 'ok' });
    expect(await calls.settled()).toEqual([]);
  });

  it('a system failure of a call ends the run after the command, unless the run was stopped', async () => {
    const broken = new HearthFailure(hearthError('agent.internal_error', 'the journal broke'));
    const mcp: ShellMcp = { tools: TOOLS, invoke: () => Promise.reject(broken) };
    const calls = mcpCalls(mcp, ctx());
    await expect(calls.call(call, hooks())).rejects.toBe(broken);
    await expect(calls.settled()).rejects.toBe(broken);

    const stop = new AbortController();
    const stopped = mcpCalls(mcp, ctx(stop.signal));
    await expect(stopped.call(call, hooks())).rejects.toBe(broken);
    stop.abort();
    expect(await stopped.settled()).toEqual([]);
  });
});
