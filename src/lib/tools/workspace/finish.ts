import { z } from 'zod';
import { defineTool, success, type ToolContext, type ToolOutcome } from '../tool';
import { optionalNullableString } from './params';

const NAME = 'workspace.finish';

const parameters = z.strictObject({
  reason: optionalNullableString('reason').describe(
    'A short note on how the run ended (kept in the run record).',
  ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `End this run. Call this tool once the reply is published: at least one successful \`workspace_commit\` must come first, and this must be the last call of your turn.
Nothing more can be written or committed afterwards, and plain text you write after it is not shown to the user.`;

/**
 * `workspace.finish` (tools.md §13.11, runtime.md §1.10). The tool only reads its arguments and
 * returns a `finish` effect. The checks that can refuse it belong to the runtime, which sees the
 * run: a return-mode child gets `agent.child_finish_denied`, a foreground run without a
 * successful commit gets `agent.foreground_commit_required`, and calls after it in the same turn
 * get `agent.tool_after_finish` (see `ToolEffect`).
 */
export const finishTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: finish,
});

async function finish(input: Input, _ctx: ToolContext): Promise<ToolOutcome> {
  const reason = (input.reason ?? '').trim() || undefined;
  return success('Finished the Agent run.', {
    structured: { reason: reason ?? null },
    effects: [reason !== undefined ? { type: 'finish', reason } : { type: 'finish' }],
  });
}
