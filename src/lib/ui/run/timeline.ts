import type { TaskStatus } from '$lib/domain/delegation';
import type { InvocationPayload, RunEventPayloads, ToolHints } from '$lib/domain/events';
import type { RunEvent } from '$lib/domain/events';
import { ROOT_INVOCATION } from '$lib/domain/run';

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
  /** Tasks this round delegated (`agent_task_registered`); their work is under the child. */
  delegated: { taskId: string; agentId: string; title: string | null }[];
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
          delegated: [],
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
      case 'agent_task_registered':
        current()?.delegated.push({
          taskId: e.payload.taskId,
          agentId: e.payload.agentId,
          title: e.payload.title,
        });
        break;
    }
  }
  return rounds;
}

/** A delegated task as its events tell it: who, what, and how it ended. */
export interface TaskView {
  taskId: string;
  agentId: string;
  title: string | null;
  workspaceKey: string;
  callerInvocationId: string;
  status: TaskStatus;
  /** What the child handed back with `task_return`. */
  result?: { status: 'completed' | 'failed'; resultRef: string };
  /** Why the child failed (`agent_child_invocation_failed`) or was cancelled. */
  error?: string;
}

export type WithheldTool = NonNullable<RunEventPayloads['context_assembled']['withheld']>[number];

/** One invocation of a run: its own rounds, the tools it was not given, and those it called. */
export interface InvocationView {
  invocationId: string;
  parentInvocationId: string | null;
  /** From `agent_invocation_created`; null for runs that did not journal it. */
  profileId: string | null;
  kind: InvocationPayload['kind'] | null;
  status: InvocationPayload['status'] | null;
  /** The task that started this invocation; null for the root (and handoffs). */
  task: TaskView | null;
  rounds: RoundView[];
  withheld: WithheldTool[];
  /** Invocations it started, in the order it started them. */
  children: InvocationView[];
}

interface Node {
  id: string;
  parent: string | null;
  profileId: string | null;
  kind: InvocationPayload['kind'] | null;
  status: InvocationPayload['status'] | null;
  task: TaskView | null;
  events: RunEvent[];
}

const INVOCATION_EVENTS = new Set([
  'agent_invocation_created',
  'agent_invocation_started',
  'agent_invocation_completed',
  'agent_invocation_failed',
  'agent_invocation_cancelled',
  // Handoffs (in the works): the invocation that hands the run on ends as transferred.
  'agent_invocation_transferred',
]);

/**
 * Groups a run's journal by invocation (each child's rounds are numbered from 1 on their own):
 * the root, with each child under the invocation that delegated to it. Events without an
 * invocation (the run's own), and those of the root, make the root's rounds, so a run without
 * children groups exactly as `toRounds` does.
 */
export function toInvocations(events: readonly RunEvent[]): InvocationView {
  const nodes = new Map<string, Node>();
  const node = (id: string, parent: string | null = ROOT_INVOCATION): Node => {
    let n = nodes.get(id);
    if (!n) {
      n = {
        id,
        parent: id === ROOT_INVOCATION ? null : parent,
        profileId: null,
        kind: null,
        status: null,
        task: null,
        events: [],
      };
      nodes.set(id, n);
    }
    return n;
  };
  node(ROOT_INVOCATION);
  const byTask = new Map<string, TaskView>();
  const byChild = (childId: string) => nodes.get(childId)?.task ?? undefined;
  for (const e of events) {
    node(e.invocationId ?? ROOT_INVOCATION).events.push(e);
    if (e.type === 'agent_task_registered') {
      const p = e.payload;
      const child = node(p.childInvocationId, p.callerInvocationId);
      child.parent = p.callerInvocationId;
      child.profileId ??= p.agentId;
      child.task = {
        taskId: p.taskId,
        agentId: p.agentId,
        title: p.title,
        workspaceKey: p.workspaceKey,
        callerInvocationId: p.callerInvocationId,
        status: 'queued',
      };
      byTask.set(p.taskId, child.task);
    } else if (INVOCATION_EVENTS.has(e.type)) {
      const p = e.payload as InvocationPayload;
      const n = node(p.invocationId, p.parentInvocationId);
      if (!n.task && p.parentInvocationId !== null && n.id !== ROOT_INVOCATION)
        n.parent = p.parentInvocationId;
      n.profileId = p.profileId;
      n.kind = p.kind;
      n.status = p.status;
    } else if (e.type === 'agent_task_started') {
      const task = byTask.get(e.payload.taskId) ?? byChild(e.payload.childInvocationId);
      if (task?.status === 'queued') task.status = 'running';
    } else if (e.type === 'task_return_completed') {
      const task = byTask.get(e.payload.taskId) ?? byChild(e.payload.childInvocationId);
      if (task) {
        task.status = e.payload.status;
        task.result = { status: e.payload.status, resultRef: e.payload.resultRef };
      }
    } else if (e.type === 'agent_child_invocation_failed') {
      const task = byTask.get(e.payload.taskId) ?? byChild(e.payload.childInvocationId);
      if (task) {
        task.status = 'failed';
        task.error = e.payload.message;
      }
    } else if (e.type === 'agent_task_cancelled') {
      const task = byTask.get(e.payload.taskId);
      if (task) {
        task.status = 'cancelled';
        task.error = e.payload.reason;
      }
    }
  }
  // Children under their parents, in the order they appeared; a parent never seen (or a loop)
  // puts the child under the root, so no invocation is lost.
  const kids = new Map<string, Node[]>();
  const reaches = (n: Node): boolean => {
    const seen = new Set<string>();
    for (let at: Node | undefined = n; at; at = at.parent ? nodes.get(at.parent) : undefined) {
      if (at.id === ROOT_INVOCATION) return true;
      if (seen.has(at.id)) return false;
      seen.add(at.id);
    }
    return false;
  };
  for (const n of nodes.values()) {
    if (n.id === ROOT_INVOCATION) continue;
    const parent = n.parent && nodes.has(n.parent) && reaches(n) ? n.parent : ROOT_INVOCATION;
    kids.set(parent, [...(kids.get(parent) ?? []), n]);
  }
  const view = (n: Node): InvocationView => ({
    invocationId: n.id,
    parentInvocationId: n.parent,
    profileId: n.profileId,
    kind: n.kind,
    status: n.status,
    task: n.task,
    rounds: toRounds(n.events),
    withheld: n.events.flatMap((e) => (e.type === 'context_assembled' ? (e.payload.withheld ?? []) : [])),
    children: (kids.get(n.id) ?? []).map(view),
  });
  return view(nodes.get(ROOT_INVOCATION)!);
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
