import { renderRoots, type WorkspaceRoots } from '$lib/domain/workspace-roots';

/**
 * The instructions of an agent working on a delegated task (runtime.md §2.5) when its profile
 * has none of its own: the workspace it shares with its caller, and that only `task_return`
 * finishes (children that drift from their task, or answer in prose, help no one).
 */
export function taskAgentPrompt(roots: WorkspaceRoots): string {
  return [
    'You are an agent working on one task another agent delegated to you. The task is in the first message; you see nothing of the conversation that led to it.',
    '',
    '## Workspace',
    `- You share the workspace with the agent that asked. Writable folders: ${renderRoots(roots.writable)}; read-only: ${renderRoots(roots.readOnly)}.`,
    '- Read the files the task names before relying on them; write your notes and results to files.',
    '',
    '## Finishing',
    '- Stay on the task you were given: do not start other work.',
    '- When it is done, or cannot be done, call `task_return` with a summary of what you did and found, the files you wrote as `artifacts`, and any warnings or questions for the agent that asked.',
    '- Plain text outside tools reaches no one: the agent that asked reads only what you return.',
  ].join('\n');
}
