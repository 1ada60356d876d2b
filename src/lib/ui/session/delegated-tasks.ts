import type { TaskStatus } from '$lib/domain/delegation';
import type { RunEvent } from '$lib/domain/events';
import type { JsonObject } from '$lib/domain/json';
import { isJsonObject } from '$lib/domain/json';

/** One delegated task of the live run, as its events tell it so far. */
export interface TaskProgress {
  taskId: string;
  agentId: string;
  title: string | null;
  childInvocationId: string;
  /** The caller's `agent_delegate` call that started it (its arguments hold the objective). */
  delegateCallId: string | null;
  status: TaskStatus;
  /** The call name of the child's last `tool_call_requested`. */
  lastTool: string | null;
  /** Why it failed or was cancelled. */
  error?: string;
}

export interface DelegationProgress {
  tasks: readonly TaskProgress[];
  /** `agent_delegate` calls not yet answered, per calling invocation (a task registers during one). */
  openCalls: readonly { invocationId: string; callId: string }[];
}

export const NO_DELEGATION: DelegationProgress = { tasks: [], openCalls: [] };

/** The native name of the tool that delegates a task. */
export const DELEGATE_TOOL = 'agent.delegate';

const update = (
  state: DelegationProgress,
  match: (t: TaskProgress) => boolean,
  change: (t: TaskProgress) => Partial<TaskProgress>,
): DelegationProgress =>
  state.tasks.some(match)
    ? { ...state, tasks: state.tasks.map((t) => (match(t) ? { ...t, ...change(t) } : t)) }
    : state;

/**
 * The delegated tasks of a run after one more of its events. Pure: a new value when something
 * changed, the same one otherwise (events that say nothing about tasks are most of them).
 */
export function foldDelegation(state: DelegationProgress, e: RunEvent): DelegationProgress {
  switch (e.type) {
    case 'tool_call_requested': {
      const child = (t: TaskProgress) => t.childInvocationId === e.invocationId;
      if (e.invocationId && state.tasks.some(child))
        return update(state, child, () => ({ lastTool: e.payload.callName }));
      if (e.payload.name !== DELEGATE_TOOL) return state;
      const invocationId = e.invocationId ?? e.payload.invocationId;
      return { ...state, openCalls: [...state.openCalls, { invocationId, callId: e.payload.callId }] };
    }
    case 'tool_call_completed':
    case 'tool_call_failed':
      if (!state.openCalls.some((c) => c.callId === e.payload.callId)) return state;
      return { ...state, openCalls: state.openCalls.filter((c) => c.callId !== e.payload.callId) };
    case 'agent_task_registered': {
      const p = e.payload;
      const call = state.openCalls.findLast((c) => c.invocationId === p.callerInvocationId);
      const task: TaskProgress = {
        taskId: p.taskId,
        agentId: p.agentId,
        title: p.title,
        childInvocationId: p.childInvocationId,
        delegateCallId: call?.callId ?? null,
        status: 'queued',
        lastTool: null,
      };
      return {
        tasks: [...state.tasks.filter((t) => t.taskId !== p.taskId), task],
        openCalls: call ? state.openCalls.filter((c) => c !== call) : state.openCalls,
      };
    }
    case 'agent_task_started':
      return update(
        state,
        (t) => t.taskId === e.payload.taskId && t.status === 'queued',
        () => ({ status: 'running' }),
      );
    case 'task_return_completed':
      return update(
        state,
        (t) => t.taskId === e.payload.taskId,
        () => ({ status: e.payload.status }),
      );
    case 'agent_child_invocation_failed':
      return update(
        state,
        (t) => t.taskId === e.payload.taskId,
        () => ({ status: 'failed', error: e.payload.message }),
      );
    case 'agent_task_cancelled':
      return update(
        state,
        (t) => t.taskId === e.payload.taskId,
        () => ({ status: 'cancelled', error: e.payload.reason }),
      );
    default:
      return state;
  }
}

/** A task as the Session and Chat pages list it. */
export interface DelegatedTaskItem {
  taskId: string;
  agentId: string;
  title: string;
  status: TaskStatus;
  statusText: string;
  /** One line: what it is doing (its last tool), or why it is not. */
  progress: string;
}

const STATUS_TEXT: Record<TaskStatus, string> = {
  queued: 'Queued',
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** The first `count` words of `text`, with an ellipsis when there were more. */
export function firstWords(text: string, count = 8): string {
  const words = text.trim().split(/\s+/).filter(Boolean);
  return words.length > count ? `${words.slice(0, count).join(' ')}…` : words.join(' ');
}

/** The objective of an `agent_delegate` call's arguments, when they have one. */
export function objectiveOf(input: JsonObject | undefined): string | null {
  const task = input?.task;
  if (!isJsonObject(task)) return null;
  const objective = task.objective;
  return typeof objective === 'string' && objective.trim() ? objective : null;
}

/**
 * The list the Session and Chat pages show while their run has delegated tasks. `callInput` gives
 * the arguments of the caller's `agent_delegate` call (from the session's messages, or a chat
 * run's streamed calls): a task without a title is named by its objective's first words, or
 * "Task" when there is neither.
 */
export function delegatedTaskItems(
  state: DelegationProgress,
  callInput: (callId: string) => JsonObject | undefined = () => undefined,
): DelegatedTaskItem[] {
  return state.tasks.map((t) => {
    const objective = t.delegateCallId ? objectiveOf(callInput(t.delegateCallId)) : null;
    return {
      taskId: t.taskId,
      agentId: t.agentId,
      title: t.title?.trim() || (objective ? firstWords(objective) : 'Task'),
      status: t.status,
      statusText: STATUS_TEXT[t.status],
      progress: progressLine(t),
    };
  });
}

function progressLine(t: TaskProgress): string {
  switch (t.status) {
    case 'queued':
      return 'waiting to start';
    case 'running':
      return t.lastTool ? `last tool: ${t.lastTool}` : 'starting';
    case 'completed':
      return t.lastTool ? `returned its result (last tool: ${t.lastTool})` : 'returned its result';
    case 'failed':
      return t.error ?? (t.lastTool ? `returned a failure (last tool: ${t.lastTool})` : 'returned a failure');
    case 'cancelled':
      return t.error ? `stopped: ${t.error}` : 'stopped';
  }
}
