import { z } from 'zod';
import { BRIEF_FIELD_MAX, type HandoffBrief } from '$lib/domain/delegation';
import { defineTool, success, type ToolContext, type ToolOutcome } from '../tool';

const text = (what: string) =>
  z.string().max(BRIEF_FIELD_MAX, `${what} is over ${BRIEF_FIELD_MAX} characters`);

const parameters = z.strictObject({
  agentId: z
    .string()
    .trim()
    .min(1, 'agentId is required')
    .describe('The id of an agent from the directory in your instructions.'),
  handoff: z
    .looseObject({
      objective: text('handoff.objective')
        .trim()
        .min(1, 'handoff.objective is required')
        .describe('What the next agent must do.'),
      title: text('handoff.title').optional(),
      reason: text('handoff.reason').optional().describe('Why another agent should continue.'),
      contextSummary: text('handoff.contextSummary')
        .optional()
        .describe('What happened so far that it must know.'),
      workspaceRefs: z.array(z.string()).optional().describe('Workspace paths to read first.'),
      mustPreserve: z.array(z.string()).optional().describe('Decisions and text that must not change.'),
      completionCriteria: z.array(z.string()).optional().describe('When the run is done.'),
    })
    .describe('The brief: the next agent sees none of your conversation, only this and the workspace.'),
  pendingTaskPolicy: z.enum(['denyIfPending']).optional(),
});

const DESCRIPTION = `Hand the rest of this run to another agent from the directory in your instructions: it continues in the shared workspace from your brief, and your part ends with this call (make it the last call of your turn). Call it instead of saying that someone else will take over: announcing a handoff does nothing. Tasks you delegated must be finished first.`;

/** `agent.handoff` (tools.md §13.15). The runtime checks the policy, depth and pending tasks. */
export const handoffTool = defineTool({
  name: 'agent.handoff',
  description: DESCRIPTION,
  parameters,
  execute: handoff,
});

async function handoff(input: z.infer<typeof parameters>, _ctx: ToolContext): Promise<ToolOutcome> {
  return success('', {
    effects: [{ type: 'handoff', agentId: input.agentId, brief: input.handoff as HandoffBrief }],
  });
}
