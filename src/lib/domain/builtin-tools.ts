import type { ToolScope } from './tool-scope';

/**
 * Every builtin tool's native name (tools.md §13), with the scopes it can be bound in. The
 * call name is fixed: the native name with `.` replaced by `_` (D1). `task.return` is added by
 * the runtime to return-mode children only and never appears in a profile.
 */
export const BUILTIN_TOOLS = {
  'chat.search': ['chat'],
  'chat.read_messages': ['chat'],
  'worldinfo.read_activated': ['chat'],
  'workspace.list_files': ['chat', 'session'],
  'workspace.search_files': ['chat', 'session'],
  'workspace.read_file': ['chat', 'session'],
  'workspace.write_file': ['chat', 'session'],
  'workspace.apply_patch': ['chat', 'session'],
  'workspace.shell': ['chat', 'session'],
  'workspace.commit': ['chat'],
  'workspace.finish': ['chat'],
  'agent.delegate': ['chat'],
  'agent.await': ['chat'],
  'agent.handoff': ['chat'],
  'task.return': ['chat'],
  'dice.roll': ['chat', 'session'],
} as const satisfies Record<string, readonly ToolScope[]>;

export type BuiltinToolName = keyof typeof BUILTIN_TOOLS;

export const BUILTIN_TOOL_NAMES = Object.keys(BUILTIN_TOOLS) as BuiltinToolName[];

export const isBuiltinToolName = (name: string): name is BuiltinToolName =>
  Object.hasOwn(BUILTIN_TOOLS, name);

/** Completion tools end a run stage and must be the last call of their turn (D6). */
export const COMPLETION_TOOLS: readonly BuiltinToolName[] = [
  'workspace.finish',
  'agent.handoff',
  'task.return',
];

/** Removed from return-mode children's snapshots (tools.md §4.2). */
export const CHILD_EXCLUDED_TOOLS: readonly BuiltinToolName[] = [
  'workspace.commit',
  'workspace.finish',
  'agent.delegate',
  'agent.handoff',
  'agent.await',
];
