import { z } from 'zod';
import { AWAIT_DEFAULT_MS, AWAIT_MAX_MS } from '$lib/domain/delegation';
import { defineTool, success, type ToolContext, type ToolOutcome } from '../tool';

const parameters = z.strictObject({
  taskIds: z
    .array(z.string().trim().min(1, 'a task id is blank'))
    .min(1, 'taskIds is empty: leave it out to select every task you started')
    .refine((ids) => new Set(ids).size === ids.length, 'taskIds lists a task twice')
    .optional()
    .describe('Tasks to wait for (default: every task you started).'),
  mode: z
    .enum(['nextCompleted', 'allCompleted', 'statusOnly'])
    .optional()
    .describe('Return when one selected task ends, when all have, or at once with their status.'),
  timeoutMs: z
    .number()
    .int()
    .min(0)
    .max(AWAIT_MAX_MS, `timeoutMs is at most ${AWAIT_MAX_MS}`)
    .optional()
    .describe(`How long to wait (default ${AWAIT_DEFAULT_MS}, at most ${AWAIT_MAX_MS}).`),
});

const DESCRIPTION = `Wait for tasks you started with \`agent_delegate\` and read their results (summary, findings, artifacts). Call it only when your next decision needs a result; on a timeout, unfinished tasks keep running.`;

/** `agent.await` (tools.md §13.14): waiting happens in the runtime, which owns the tasks. */
export const awaitTool = defineTool({
  name: 'agent.await',
  description: DESCRIPTION,
  parameters,
  execute: awaitTasks,
});

async function awaitTasks(input: z.infer<typeof parameters>, _ctx: ToolContext): Promise<ToolOutcome> {
  return success('', {
    effects: [
      {
        type: 'await',
        mode: input.mode ?? 'nextCompleted',
        timeoutMs: input.timeoutMs ?? AWAIT_DEFAULT_MS,
        ...(input.taskIds ? { taskIds: input.taskIds } : {}),
      },
    ],
  });
}
