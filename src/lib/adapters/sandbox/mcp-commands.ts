import { defineCommand, type Command } from 'just-bash/browser';
import type { ShellMcpCall, ShellMcpResult, ShellMcpTool } from '$lib/ports/sandbox';
import { MCP_USAGE, mcpServers, parseMcpCommand, selectServer, type McpCommandName } from './mcp-args';

/** Asks the runtime to make one `mcp.invoke` call. */
export type InvokeMcp = (call: ShellMcpCall) => Promise<ShellMcpResult>;

type Output = { stdout: string; stderr: string; exitCode: number };

const out = (stdout: string, exitCode = 0): Output => ({ stdout, stderr: '', exitCode });
const fail = (command: string, message: string, exitCode: number): Output => ({
  stdout: '',
  stderr: `${command}: ${message}\n`,
  exitCode,
});

const HELP = `MCP tools of this run, as shell commands:
  ${MCP_USAGE.list}
      the servers and tools this run has (no network)
  ${MCP_USAGE.check}
      whether each tool is available (exit 0 when all are, 1 otherwise; no network)
  ${MCP_USAGE.invoke}
      call a tool: its result on stdout (exit 0); a tool set to Ask waits for the person
--name is the server's display name, --id its id, --server either; exactly one server must match.
Exit status: 0 ok, 1 the call failed (run it again only if the message says it was not sent),
124 no answer in time (the tool may have run: check before calling it again), 2 usage.
`;

/**
 * `mcp.list`, `mcp.check` and `mcp.invoke` (tools.md §13.12). Listing and checking read the
 * tools the shell was given (the invocation's frozen snapshot); only `invoke` asks the runtime.
 */
export function mcpCommands(tools: readonly ShellMcpTool[], invoke: InvokeMcp | undefined): Command[] {
  const servers = mcpServers(tools);
  const run = async (name: McpCommandName, args: string[]): Promise<Output> => {
    const command = `mcp.${name}`;
    const parsed = parseMcpCommand(name, args);
    if (!parsed.ok) return fail(command, parsed.message, 2);
    const request = parsed.value;
    if (request.kind === 'help') return out(HELP);
    if (request.kind === 'list') return out(listing(servers));
    const selected = selectServer(servers, request.selector);
    if (!selected.ok) return fail(command, selected.message, 2);
    const server = selected.value;
    const has = (tool: string) => server.tools.find((t) => t.tool === tool);
    if (request.kind === 'check') {
      const lines = request.tools.map((tool) => {
        const found = has(tool);
        return found
          ? `${tool}: available on ${server.server} (${found.approval})`
          : `${tool}: not available on ${server.server}`;
      });
      return out(`${lines.join('\n')}\n`, request.tools.every(has) ? 0 : 1);
    }
    if (!has(request.tool)) {
      const names = server.tools.map((t) => t.tool).join(', ');
      return fail(
        command,
        `${server.server} has no tool ${request.tool} in this run. Its tools: ${names}.`,
        2,
      );
    }
    if (!invoke) return fail(command, 'MCP calls are not available here', 1);
    const result = await invoke({
      serverId: server.serverId,
      tool: request.tool,
      arguments: request.arguments,
      ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
    });
    return result.exitCode === 0 ? out(`${result.text}\n`) : fail(command, result.text, result.exitCode);
  };
  return (['list', 'check', 'invoke'] as const).map((name) =>
    defineCommand(`mcp.${name}`, (args) => run(name, args)),
  );
}

function listing(servers: ReturnType<typeof mcpServers>): string {
  if (servers.length === 0) return 'This run has no MCP tools.\n';
  const blocks = servers.map(
    (s) => `${s.server} (--id ${s.serverId})\n${s.tools.map((t) => `  ${t.tool}  ${t.approval}`).join('\n')}`,
  );
  return `${blocks.join('\n')}\n(ask: the person approves each call first; allow: it runs at once)\n`;
}
