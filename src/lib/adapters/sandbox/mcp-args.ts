import { isJsonObject, type JsonObject } from '$lib/domain/json';
import { SHELL_TIMEOUT_MS, type ShellMcpTool } from '$lib/ports/sandbox';

/** How a command names its server: `--name` the display name, `--id` the id, `--server` either. */
export interface ServerSelector {
  by: 'server' | 'name' | 'id';
  value: string;
}

export type McpCommand =
  | { kind: 'help' }
  | { kind: 'list' }
  | { kind: 'check'; selector: ServerSelector; tools: string[] }
  | { kind: 'invoke'; selector: ServerSelector; tool: string; arguments: JsonObject; timeoutMs?: number };

export type McpCommandName = 'list' | 'check' | 'invoke';

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export const MCP_USAGE: Record<McpCommandName, string> = {
  list: 'mcp.list',
  check: 'mcp.check --server|--name|--id <server> <tool>...',
  invoke: `mcp.invoke --server|--name|--id <server> <tool> '<json-object>' [--timeout <seconds, under ${SHELL_TIMEOUT_MS / 1000}>]`,
};

const SELECTORS = ['server', 'name', 'id'] as const;

/** The arguments of `mcp.<command>` (tools.md §13.12); a message for a usage error (exit 2). */
export function parseMcpCommand(command: McpCommandName, args: readonly string[]): Parsed<McpCommand> {
  const usage = (problem: string): Parsed<McpCommand> => ({
    ok: false,
    message: `${problem}. Usage: ${MCP_USAGE[command]}`,
  });
  let selector: ServerSelector | undefined;
  let timeout: string | undefined;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') return { ok: true, value: { kind: 'help' } };
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = arg.slice(2, eq < 0 ? undefined : eq);
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    const known =
      (SELECTORS as readonly string[]).includes(flag) || (flag === 'timeout' && command === 'invoke');
    if (!known || command === 'list') return usage(`unknown option --${flag}`);
    if (value === undefined || value === '') return usage(`--${flag} needs a value`);
    if (flag === 'timeout') timeout = value;
    else if (selector) return usage('name the server once, with one of --server, --name or --id');
    else selector = { by: flag as ServerSelector['by'], value };
  }

  if (command === 'list') {
    return positional.length === 0
      ? { ok: true, value: { kind: 'list' } }
      : usage('mcp.list takes no arguments');
  }
  if (!selector) return usage('name the server with --server, --name or --id');
  const [tool, ...rest] = positional;
  if (tool === undefined) return usage('name the tool');
  if (command === 'check') return { ok: true, value: { kind: 'check', selector, tools: positional } };

  const text = rest.join(' ').trim();
  const input = text === '' ? {} : parseObject(text);
  if (input === null) return usage('the arguments must be one JSON object, quoted, such as \'{"a": 1}\'');
  const value: McpCommand = { kind: 'invoke', selector, tool, arguments: input };
  if (timeout === undefined) return { ok: true, value };
  const seconds = /^\d+(\.\d+)?$/.test(timeout) ? Number(timeout) : NaN;
  if (!(seconds > 0 && seconds * 1000 < SHELL_TIMEOUT_MS)) {
    return usage(
      `--timeout must be a number of seconds above 0 and under ${SHELL_TIMEOUT_MS / 1000} (the whole command has ${SHELL_TIMEOUT_MS / 1000} s)`,
    );
  }
  return { ok: true, value: { ...value, timeoutMs: Math.round(seconds * 1000) } };
}

function parseObject(text: string): JsonObject | null {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : null;
  } catch {
    return null;
  }
}

export interface McpServerEntry {
  serverId: string;
  server: string;
  tools: ShellMcpTool[];
}

/** The snapshot's MCP tools grouped by server, in the order they come. */
export function mcpServers(tools: readonly ShellMcpTool[]): McpServerEntry[] {
  const servers = new Map<string, McpServerEntry>();
  for (const tool of tools) {
    const entry = servers.get(tool.serverId) ?? { serverId: tool.serverId, server: tool.server, tools: [] };
    entry.tools.push(tool);
    servers.set(tool.serverId, entry);
  }
  return [...servers.values()];
}

const candidate = (s: McpServerEntry) => `${s.server} (--id ${s.serverId})`;

/**
 * The one server the selector names. Display names compare without regard to case; none or
 * several matching is a usage error that lists the candidates.
 */
export function selectServer(
  servers: readonly McpServerEntry[],
  selector: ServerSelector,
): Parsed<McpServerEntry> {
  const name = selector.value.toLowerCase();
  const matches = servers.filter(
    (s) =>
      (selector.by !== 'name' && s.serverId === selector.value) ||
      (selector.by !== 'id' && s.server.toLowerCase() === name),
  );
  if (matches.length === 1) return { ok: true, value: matches[0]! };
  const flag = `--${selector.by} ${selector.value}`;
  if (matches.length > 1) {
    return {
      ok: false,
      message: `${matches.length} MCP servers match ${flag}: ${matches.map(candidate).join(', ')}. Pick one with --id.`,
    };
  }
  if (servers.length === 0) return { ok: false, message: 'This run has no MCP tools.' };
  return {
    ok: false,
    message: `No MCP server of this run matches ${flag}. Servers: ${servers.map(candidate).join(', ')}.`,
  };
}
