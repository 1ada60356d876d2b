import type { BuiltinToolName } from '../builtin-tools';

/**
 * The top-level parameters of every builtin as tools.md §13 gives them, for checking profile
 * description overrides: `tools.toolDescriptions[<ToolId>].properties` may only name a parameter
 * of the tool (`agent.profile_unknown_tool_property`). The worker passes the parameters of the
 * implemented builtins in `ProfileValidationContext.toolParameters`, which win over this table;
 * the table covers builtins not implemented yet. The delegate `budget` was retired in schema 5.
 */
export const BUILTIN_TOOL_PARAMETERS: Readonly<Record<BuiltinToolName, readonly string[]>> = {
  'chat.search': ['query', 'limit', 'role', 'start_message', 'end_message', 'scan_limit'],
  'chat.read_messages': ['messages'],
  'worldinfo.read_activated': ['entries'],
  'workspace.list_files': ['path', 'depth'],
  'workspace.search_files': ['query', 'path', 'limit', 'context_lines'],
  'workspace.read_file': ['path', 'start_line', 'line_count', 'start_char', 'max_chars'],
  'workspace.write_file': ['path', 'content', 'mode'],
  'workspace.apply_patch': ['path', 'old_string', 'new_string', 'replace_all'],
  'workspace.shell': ['command', 'workdir'],
  'workspace.commit': ['path', 'mode', 'reason', 'finish'],
  'workspace.finish': ['reason'],
  'agent.delegate': ['agentId', 'task'],
  'agent.await': ['taskIds', 'mode', 'timeoutMs'],
  'agent.handoff': ['agentId', 'handoff', 'pendingTaskPolicy'],
  'task.return': [
    'summary',
    'status',
    'confidence',
    'artifacts',
    'findings',
    'warnings',
    'suggestedNextActions',
    'questionsForCaller',
  ],
  'dice.roll': ['formula'],
};
