import { hearthError, type HearthError } from './errors';
import { err, ok, type Result } from './result';
import { builtinCallName, type ToolId } from './tool-id';

/**
 * Model call names (aliases) for one invocation (D1, tools.md §3). `name` is the tool's native
 * name; an MCP tool also names its server (the registration's display name).
 */
export type CallNameEntry =
  | { toolId: ToolId; source: 'builtin' | 'extension'; name: string }
  | { toolId: ToolId; source: 'mcp'; name: string; serverName: string };

export interface CallNameBinding {
  toolId: ToolId;
  callName: string;
}

export const CALL_NAME_MAX_BYTES = 64;
const CALL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Added after discovery for return-mode invocations, so no external tool may take it. */
const RESERVED_CALL_NAMES = ['task_return'];
const MCP_PREFIX = 'mcp__';
const MCP_SEPARATOR = '__';
const MCP_BUDGET = CALL_NAME_MAX_BYTES - MCP_PREFIX.length - MCP_SEPARATOR.length;
const MCP_SERVER_SHARE = 20;

export function validateCallName(name: string): Result<string, HearthError> {
  if (name === '') return err(hearthError('tool.snapshot_alias_empty', 'A tool call name cannot be empty.'));
  if (!CALL_NAME.test(name))
    return err(
      hearthError(
        'tool.snapshot_alias_invalid',
        `Tool call name "${name}" must be 1 to 64 characters from A-Z, a-z, 0-9, "_" and "-".`,
      ),
    );
  return ok(name);
}

/** Every call name valid, and each tool id and call name used once (tools.md §3.4). */
export function checkCallNameBindings(bindings: readonly CallNameBinding[]): Result<void, HearthError> {
  const ids = new Set<ToolId>();
  const names = new Set<string>();
  for (const { toolId, callName } of bindings) {
    const valid = validateCallName(callName);
    if (!valid.ok) return valid;
    if (ids.has(toolId))
      return err(hearthError('tool.snapshot_duplicate_id', `The tool snapshot lists "${toolId}" twice.`));
    if (names.has(callName))
      return err(
        hearthError(
          'tool.snapshot_duplicate_alias',
          `Two tools in the snapshot have the call name "${callName}".`,
        ),
      );
    ids.add(toolId);
    names.add(callName);
  }
  return ok(undefined);
}

// Per code point (`u`), as the reference's per-`char` replacement: an emoji becomes one `_`.
export const normalizeExternalName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/gu, '_');

const normalizeMcpSegment = (segment: string, fallback: string): string =>
  segment
    .replace(/[^A-Za-z0-9-]/gu, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '') || fallback;

/** `mcp__<server>__<tool>` within 64 bytes, before collision suffixes (tools.md §3.3). */
export function mcpCallNameBase(serverName: string, toolName: string): string {
  const server = normalizeMcpSegment(serverName, 'server');
  const tool = normalizeMcpSegment(toolName, 'tool');
  let serverLength = server.length;
  let toolLength = tool.length;
  if (serverLength + toolLength > MCP_BUDGET) {
    serverLength = Math.min(server.length, MCP_SERVER_SHARE);
    toolLength = Math.min(tool.length, MCP_BUDGET - serverLength);
    serverLength = Math.min(server.length, MCP_BUDGET - toolLength);
  }
  // Segments are ASCII after normalization, so string length is byte length.
  return `${MCP_PREFIX}${server.slice(0, serverLength)}${MCP_SEPARATOR}${tool.slice(0, toolLength)}`;
}

/** The first of `base`, `base__2`, `base__3`… (base cut to fit 64 bytes) not yet in `used` (§3.2). */
function firstFreeCallName(base: string, used: ReadonlySet<string>): string {
  for (let ordinal = 1; ; ordinal++) {
    const suffix = ordinal === 1 ? '' : `__${ordinal}`;
    const candidate = base.slice(0, CALL_NAME_MAX_BYTES - suffix.length) + suffix;
    if (!used.has(candidate)) return candidate;
  }
}

const externalBase = (entry: CallNameEntry): string =>
  entry.source === 'mcp' ? mcpCallNameBase(entry.serverName, entry.name) : normalizeExternalName(entry.name);

/**
 * Allocates every entry's call name: builtins first with their fixed names, then external tools
 * in the given order (the profile's `tools.allow` order), each taking the first free suffix.
 * The same entries in the same order always get the same names. The map follows entry order.
 */
export function allocateCallNames(
  entries: readonly CallNameEntry[],
): Result<Map<ToolId, string>, HearthError> {
  const callNames = entries.map((entry) =>
    entry.source === 'builtin' ? builtinCallName(entry.name) : undefined,
  );
  const used = new Set<string>(RESERVED_CALL_NAMES);
  for (const name of callNames) if (name !== undefined) used.add(name);
  entries.forEach((entry, i) => {
    if (entry.source === 'builtin') return;
    const callName = firstFreeCallName(externalBase(entry), used);
    callNames[i] = callName;
    used.add(callName);
  });
  const bindings = entries.map(({ toolId }, i) => ({ toolId, callName: callNames[i]! }));
  const checked = checkCallNameBindings(bindings);
  if (!checked.ok) return checked;
  return ok(new Map(bindings.map((b) => [b.toolId, b.callName])));
}
