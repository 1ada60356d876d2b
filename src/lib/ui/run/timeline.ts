import type { ToolHints } from '$lib/domain/events';
import type { RunEvent } from '$lib/domain/events';

/** What the person was asked about a call set to Ask, and what they answered. */
export type ApprovalState = 'waiting' | 'approved' | 'always' | 'denied';

export interface CallView {
  callId: string;
  callName: string;
  toolId: string | null;
  argumentsRef: string;
  resultRef?: string;
  approval?: ApprovalState;
  outcome?: Extract<RunEvent, { type: 'tool_call_completed' | 'tool_call_failed' }>['payload'];
}

export interface FileChange {
  path: string;
  kind: 'written' | 'patched';
  chars: number;
  sha256: string;
  checkpointId?: string;
}

export interface RoundView {
  round: number;
  responsePath?: string;
  completed?: Extract<RunEvent, { type: 'model_completed' }>['payload'];
  attemptsFailed: Extract<RunEvent, { type: 'model_call_attempt_failed' }>['payload'][];
  calls: CallView[];
  files: FileChange[];
  startedAt: string;
}

/** Groups a run's journal into rounds: the model call, its tool calls and the files they changed. */
export function toRounds(events: readonly RunEvent[]): RoundView[] {
  const rounds: RoundView[] = [];
  const current = () => rounds.at(-1);
  let lastFile: FileChange | undefined;
  for (const e of events) {
    switch (e.type) {
      case 'model_request_created':
        rounds.push({
          round: e.payload.round,
          attemptsFailed: [],
          calls: [],
          files: [],
          startedAt: e.timestamp,
        });
        break;
      case 'model_call_attempt_failed':
        current()?.attemptsFailed.push(e.payload);
        break;
      case 'model_response_stored':
        if (current()) current()!.responsePath = e.payload.path;
        break;
      case 'model_completed':
        if (current()) current()!.completed = e.payload;
        break;
      case 'tool_call_requested':
        current()?.calls.push({
          callId: e.payload.callId,
          callName: e.payload.callName,
          toolId: e.payload.toolId,
          argumentsRef: e.payload.argumentsRef,
        });
        break;
      case 'tool_call_awaiting_approval':
      case 'tool_call_approved':
      case 'tool_call_denied': {
        const call = current()?.calls.find((c) => c.callId === e.payload.callId);
        if (call) call.approval = approvalState(e);
        break;
      }
      case 'tool_result_stored': {
        const call = current()?.calls.find((c) => c.callId === e.payload.callId);
        if (call) call.resultRef = e.payload.path;
        break;
      }
      case 'tool_call_completed':
      case 'tool_call_failed': {
        const call = current()?.calls.find((c) => c.callId === e.payload.callId);
        if (call) call.outcome = e.payload;
        break;
      }
      case 'workspace_file_written':
      case 'workspace_patch_applied':
        lastFile = {
          path: e.payload.path,
          kind: e.type === 'workspace_file_written' ? 'written' : 'patched',
          chars: e.payload.chars,
          sha256: e.payload.sha256,
        };
        current()?.files.push(lastFile);
        break;
      case 'checkpoint_created':
        if (lastFile) lastFile.checkpointId = e.payload.checkpointId;
        break;
    }
  }
  return rounds;
}

const approvalState = (
  e: Extract<RunEvent, { type: 'tool_call_awaiting_approval' | 'tool_call_approved' | 'tool_call_denied' }>,
): ApprovalState =>
  e.type === 'tool_call_awaiting_approval'
    ? 'waiting'
    : e.type === 'tool_call_denied'
      ? 'denied'
      : e.payload.always
        ? 'always'
        : 'approved';

/** A call waiting for the person, as the approval card shows it. */
export interface PendingApprovalView {
  approvalId: string;
  callId: string;
  callName: string;
  toolId: string;
  source: string;
  argumentsRef: string;
  /** An MCP tool's endpoint host and the hints its server claims. */
  hints?: ToolHints;
}

const SETTLED_RUN = new Set([
  'run_completed',
  'run_failed',
  'run_partial_success',
  'run_cancelled',
  'run_interrupted',
]);

/**
 * The calls of a run still waiting for approval, after one more of its events: a question adds
 * one, an answer removes it, the run's end (a stop, a closed tab) removes them all.
 */
export function foldApprovals(pending: readonly PendingApprovalView[], e: RunEvent): PendingApprovalView[] {
  if (e.type === 'tool_call_awaiting_approval') {
    const { approvalId, callId, callName, toolId, source, argumentsRef, hints } = e.payload;
    return [
      ...pending.filter((p) => p.approvalId !== approvalId),
      { approvalId, callId, callName, toolId, source, argumentsRef, ...(hints ? { hints } : {}) },
    ];
  }
  if (e.type === 'tool_call_approved' || e.type === 'tool_call_denied')
    return pending.filter((p) => p.approvalId !== e.payload.approvalId);
  if (SETTLED_RUN.has(e.type)) return [];
  return [...pending];
}
