import { z } from 'zod';
import type { TaskResult } from '$lib/domain/delegation';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { resolveVisiblePath } from '../workspace/paths';

const strings = (what: string) => z.array(z.string()).optional().describe(what);

const parameters = z.strictObject({
  summary: z
    .string()
    .trim()
    .min(1, 'summary is required')
    .describe('What you did and found, for the agent that asked.'),
  status: z
    .union([z.enum(['completed', 'failed']), z.literal('')])
    .optional()
    .describe('`failed` when the task could not be done (default `completed`).'),
  confidence: z.enum(['low', 'medium', 'high']).optional(),
  artifacts: z
    .array(z.strictObject({ path: z.string(), kind: z.string(), role: z.string() }))
    .optional()
    .describe('Files you made or used: their workspace path, kind (notes, data, draft…) and role.'),
  findings: z.array(z.record(z.string(), z.unknown())).optional(),
  warnings: strings('What the caller should be careful about.'),
  suggestedNextActions: strings('What the caller could do next.'),
  questionsForCaller: strings('What you could not decide alone.'),
});

const DESCRIPTION = `Finish your delegated task and hand the result to the agent that asked for it. This is the only way to finish: make it the last call of your turn. Name the files you wrote in \`artifacts\`.`;

/**
 * `task.return` (tools.md §13.16): the completion tool of delegated tasks. The tool checks its
 * arguments and that each artifact is a path this agent can see; the runtime records the result.
 */
export const taskReturnTool = defineTool({
  name: 'task.return',
  description: DESCRIPTION,
  parameters,
  execute: taskReturn,
});

async function taskReturn(input: z.infer<typeof parameters>, ctx: ToolContext): Promise<ToolOutcome> {
  const artifacts: NonNullable<TaskResult['artifacts']> = [];
  for (const artifact of input.artifacts ?? []) {
    const path = resolveVisiblePath(ctx.roots, artifact.path);
    if (!path.ok) return failure(path.error.code, `Artifact \`${artifact.path}\`: ${path.error.message}`);
    artifacts.push({ ...artifact, path: path.value });
  }
  const { status, artifacts: _, ...rest } = input;
  const result: TaskResult = {
    ...rest,
    status: status === 'failed' ? 'failed' : 'completed',
    ...(artifacts.length ? { artifacts } : {}),
  } as TaskResult;
  return success('', { effects: [{ type: 'task_return', result }] });
}
