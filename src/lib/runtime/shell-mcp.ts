import type { ErrorCode } from '$lib/domain/errors';
import { parseToolId } from '$lib/domain/tool-id';
import type { McpCallHooks, ShellMcpCall, ShellMcpResult, ShellMcpTool } from '$lib/ports/sandbox';
import type { ShellMcp, ToolContext, ToolOutcome } from '$lib/tools/tool';
import type { SnapshotBinding, ToolSnapshot } from './tool-snapshot';

/** The server answered: the tool may have done its work, so the call is not safe to repeat. */
const SENT: readonly ErrorCode[] = ['mcp.tool_error', 'mcp.server_error', 'mcp.unsupported_response'];

interface Entry {
  binding: SnapshotBinding;
  tool: ShellMcpTool;
}

/**
 * `mcp.*` inside the shell (tools.md §13.12): the invocation's bound MCP tools, from its frozen
 * snapshot. `invoke` is a nested call of the shell call, so it goes the way a direct call goes:
 * journaled, asked about when the tool is set to Ask, executed by the MCP provider (which reads
 * the registration again and maps the result).
 */
export function shellMcp(snapshot: ToolSnapshot): ShellMcp {
  const entries = snapshot.bindings.flatMap((binding): Entry[] => {
    const id = parseToolId(binding.tool.toolId);
    if (!id.ok || id.value.source !== 'mcp' || !binding.tool.facts.fromShell) return [];
    const server = binding.tool.serverName ?? binding.tool.origin;
    const tool = {
      serverId: id.value.registrationId,
      server,
      tool: id.value.nativeName,
      approval: binding.approval,
    };
    return [{ binding, tool }];
  });
  return {
    tools: entries.map((e) => e.tool),
    invoke(call, hooks, ctx) {
      const entry = entries.find((e) => e.tool.serverId === call.serverId && e.tool.tool === call.tool);
      if (!entry)
        return Promise.resolve({ exitCode: 2, text: `${call.tool} is not an MCP tool of this run.` });
      return invoke(entry, call, hooks, ctx);
    },
  };
}

async function invoke(
  { binding, tool }: Entry,
  call: ShellMcpCall,
  hooks: McpCallHooks,
  ctx: ToolContext,
): Promise<ShellMcpResult> {
  if (!ctx.callTool) return { exitCode: 1, text: 'MCP calls are not available here.' };
  // `--timeout` counts the call itself: not a wait for the person, which holds the shell's budget too.
  const limit = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (call.timeoutMs !== undefined) timer = setTimeout(() => limit.abort(), call.timeoutMs);
  };
  let resume: (() => void) | undefined;
  arm();
  try {
    const outcome = await ctx.callTool({
      callName: binding.callName,
      arguments: call.arguments,
      signal: AbortSignal.any([ctx.signal, hooks.signal, limit.signal]),
      waiting(pending) {
        clearTimeout(timer);
        resume?.();
        resume = pending ? hooks.hold() : undefined;
        if (!pending) arm();
      },
    });
    const timedOut = limit.signal.aborted ? (call.timeoutMs ?? null) : null;
    return shellResult(outcome, `\`${tool.tool}\` on ${tool.server}`, timedOut);
  } finally {
    clearTimeout(timer);
    resume?.();
  }
}

/** What `mcp.invoke` prints and exits with, saying whether running it again is safe. */
function shellResult(outcome: ToolOutcome, what: string, timedOutMs: number | null): ShellMcpResult {
  if (!outcome.isError) return { exitCode: 0, text: outcome.content };
  const code = outcome.errorCode;
  if (code === 'mcp.call_outcome_unknown') {
    const why =
      timedOutMs === null
        ? outcome.content
        : `${what} sent no answer within ${timedOutMs / 1000} s: it may have run, and it is not repeated.`;
    return { exitCode: 124, text: `${why} Check whether it took effect before calling it again.` };
  }
  if (code === 'tool.denied') return { exitCode: 1, text: outcome.content };
  const note =
    code && SENT.includes(code)
      ? 'The call reached the server: check what it did before running it again.'
      : 'It was not sent: running it again is safe once the cause is fixed.';
  return { exitCode: 1, text: `${outcome.content}\n${note}` };
}
