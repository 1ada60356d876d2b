import { renderRoots, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import { callNames, type ToolSnapshot } from './tool-snapshot';

/** The Session system prompt: duties, the workspace, and how a turn ends (spec README §4). */
export function sessionSystemPrompt(roots: WorkspaceRoots, snapshot: ToolSnapshot): string {
  const tools = callNames(snapshot);
  const has = (name: string) => tools.includes(name);
  const lines = [
    'You are the assistant of a Hearth session: a direct conversation with a person over a persistent file workspace.',
    '',
    '## Workspace',
    `- Writable folders: ${renderRoots(roots.writable)}. Keep lasting work in \`work/\` and throwaway files in \`tmp/\`.`,
    `- Read-only folders: ${renderRoots(roots.readOnly)}.`,
    '- Paths are relative, such as `work/notes.md`.',
  ];
  if (has('workspace_read_file'))
    lines.push('- Read files with `workspace_read_file` before you change them.');
  if (has('workspace_write_file')) lines.push('- Create or replace files with `workspace_write_file`.');
  lines.push(
    '',
    '## Finishing',
    'Use tools while you need them. When you are done, answer the person in plain text without calling a tool: that reply ends your turn.',
  );
  return lines.join('\n');
}
