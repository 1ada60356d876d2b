import { z } from 'zod';
import { BRIEF_FIELD_MAX, type DelegatedTask } from '$lib/domain/delegation';
import { defineTool, success, type ToolContext, type ToolOutcome } from '../tool';

const field = (what: string) =>
  z.string().max(BRIEF_FIELD_MAX, `${what} is over ${BRIEF_FIELD_MAX} characters`);

const parameters = z.strictObject({
  agentId: z
    .string()
    .trim()
    .min(1, 'agentId is required')
    .describe('The id of an agent from the directory in your instructions.'),
  task: z
    .looseObject({
      objective: field('task.objective')
        .trim()
        .min(1, 'task.objective is required')
        .describe('What the agent must do, self-contained: it sees none of your conversation.'),
      title: field('task.title').nullish().describe('A few words naming the task.'),
      context: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('What it needs to know: relevant workspace paths, decisions, constraints.'),
      expectedOutput: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('What to hand back, and which files to write.'),
    })
    .describe('The brief. Name the workspace paths it should read and the artifacts you expect.'),
});

const DESCRIPTION = `Start a focused task with another agent from the directory in your instructions. It works in the background in the same workspace; you keep working and call \`agent_await\` when you need its result.
The agent sees none of your conversation: the brief must say everything it needs (objective, relevant paths, expected output). Results you do not await arrive after your next tool call.`;

/**
 * `agent.delegate` (tools.md §13.13). The tool reads its arguments only; the runtime checks the
 * target's policy, creates the task and schedules it (`runtime/delegation.ts`).
 */
export const delegateTool = defineTool({
  name: 'agent.delegate',
  description: DESCRIPTION,
  parameters,
  execute: delegate,
});

async function delegate(input: z.infer<typeof parameters>, _ctx: ToolContext): Promise<ToolOutcome> {
  return success('', {
    effects: [{ type: 'delegate', agentId: input.agentId, task: input.task as DelegatedTask }],
  });
}
