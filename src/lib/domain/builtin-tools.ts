import type { ToolScope } from './tool-scope';

/** What a tool does to the world, for the gate and the person (tools.md §5). */
export type ToolEffectKind = 'read' | 'write' | 'execute' | 'network';

/** The facts of a tool that the runtime decides by; each tool states its own. */
export interface ToolFacts {
  /** The kinds of runs it can be bound in. */
  scopes: readonly ToolScope[];
  effect: ToolEffectKind;
  /** `builtin.<name> '<json>'` inside the shell may call it (tools.md §13.12): read-only tools only. */
  fromShell: boolean;
  /** A return-mode child may have it (tools.md §4.2): never commit, finish or the delegation tools. */
  forChildren: boolean;
}

const chatRead: ToolFacts = { scopes: ['chat'], effect: 'read', fromShell: true, forChildren: true };
const anyRead: ToolFacts = {
  scopes: ['chat', 'session'],
  effect: 'read',
  fromShell: true,
  forChildren: true,
};
const anyWrite: ToolFacts = {
  scopes: ['chat', 'session'],
  effect: 'write',
  fromShell: false,
  forChildren: true,
};

/**
 * Every builtin tool's native name (tools.md §13) with its facts. The call name is fixed: the
 * native name with `.` replaced by `_` (D1). `task.return` is added by the runtime to return-mode
 * children only and never appears in a profile.
 */
export const BUILTIN_TOOLS = {
  'chat.search': chatRead,
  'chat.read_messages': chatRead,
  'worldinfo.read_activated': chatRead,
  'workspace.list_files': anyRead,
  'workspace.search_files': anyRead,
  // Reads record read-state for the write and patch tools, which the shell may not call.
  'workspace.read_file': { ...anyRead, fromShell: false },
  'workspace.write_file': anyWrite,
  'workspace.apply_patch': anyWrite,
  'workspace.shell': { ...anyWrite, effect: 'execute' },
  'workspace.commit': { scopes: ['chat'], effect: 'write', fromShell: false, forChildren: false },
  'workspace.finish': { scopes: ['chat'], effect: 'read', fromShell: false, forChildren: false },
  'agent.delegate': { scopes: ['chat', 'session'], effect: 'execute', fromShell: false, forChildren: false },
  'agent.await': { scopes: ['chat', 'session'], effect: 'read', fromShell: false, forChildren: false },
  'agent.handoff': { scopes: ['chat'], effect: 'execute', fromShell: false, forChildren: false },
  'task.return': { scopes: ['chat', 'session'], effect: 'read', fromShell: false, forChildren: true },
  'dice.roll': anyRead,
} as const satisfies Record<string, ToolFacts>;

export type BuiltinToolName = keyof typeof BUILTIN_TOOLS;

export const BUILTIN_TOOL_NAMES = Object.keys(BUILTIN_TOOLS) as BuiltinToolName[];

export const isBuiltinToolName = (name: string): name is BuiltinToolName =>
  Object.hasOwn(BUILTIN_TOOLS, name);
