import type { HearthError } from '$lib/domain/errors';
import type { ToolChoice } from '$lib/domain/model';
import type { ToolId } from '$lib/domain/tool-id';
import type { ApprovalMode } from './tool-bindings';
import type { SnapshotBinding, ToolSnapshot } from './tool-snapshot';
import { callNames } from './tool-snapshot';

/**
 * The request gate (tools.md §5, E3): stateless. It checks the call against the invocation's
 * snapshot and this turn's tool choice, and says where to dispatch. No counters, no budgets.
 */
export type GateDecision =
  | { kind: 'dispatch'; binding: SnapshotBinding }
  /** A recoverable result the model can correct (D5: an unknown call name). */
  | { kind: 'reject'; code: 'tool.unknown_tool'; message: string }
  /** A system failure that ends the run. */
  | { kind: 'fail'; error: HearthError };

export function gateToolCall(
  callName: string,
  snapshot: ToolSnapshot,
  turn: { snapshotId: string; toolChoice: ToolChoice },
): GateDecision {
  if (turn.snapshotId !== snapshot.id) {
    return {
      kind: 'fail',
      error: {
        code: 'tool.turn_snapshot_mismatch',
        message: 'The turn was built from another tool snapshot.',
      },
    };
  }
  const binding = snapshot.byCallName.get(callName);
  if (!binding) {
    const available = callNames(snapshot)
      .map((n) => `\`${n}\``)
      .join(', ');
    return {
      kind: 'reject',
      code: 'tool.unknown_tool',
      message: `There is no tool named \`${callName}\`. Available tools: ${available || 'none'}.`,
    };
  }
  const choice = turn.toolChoice;
  if (choice === 'none' || (typeof choice === 'object' && choice.name !== callName)) {
    return {
      kind: 'fail',
      error: {
        code: 'model.tool_choice_violation',
        message: `The model called \`${callName}\` although this turn ${choice === 'none' ? 'allowed no tool calls' : `required \`${choice.name}\``}.`,
      },
    };
  }
  return { kind: 'dispatch', binding };
}

/**
 * The gate's second question, once a call's arguments are known good (D20): run it now, or ask
 * the person first. A tool set to Ask asks, unless the person chose Always allow during this run.
 */
export const approvalFor = (
  binding: SnapshotBinding,
  run: { allowed(toolId: ToolId): boolean },
): ApprovalMode => (binding.approval === 'ask' && !run.allowed(binding.tool.toolId) ? 'ask' : 'allow');
