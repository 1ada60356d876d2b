import {
  allocateWorkspaceKey,
  backgroundResults,
  delegatedBrief,
  handoffBrief,
  isTerminal,
  MAX_HANDOFF_DEPTH,
  MAX_RUNNING_CHILDREN,
  resultsCapsule,
  resultSummary,
  type AwaitMode,
  type AwaitTaskView,
  type ContinueAdvice,
  type DelegatedTask,
  type HandoffBrief,
  type TaskResult,
  type TaskStatus,
} from '$lib/domain/delegation';
import { hearthError, HearthFailure, type ErrorCode, type HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import type { ProfileV5 } from '$lib/domain/profile';
import type { InvocationId } from '$lib/domain/run';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';
import { failure, success, type ToolOutcome } from '$lib/tools/tool';
import { endInvocation, startInvocation, type Invocation } from './invocation';
import type { InvocationDeps, InvocationEnd, InvocationScenario } from './invocation-runner';
import type { RunLog } from './run-recorder';
import { WorkspaceTranscript } from './transcript';
import { unstartedCalls } from './resume';
import type { ModelMessage } from '$lib/domain/model';
import type { RunEvent } from '$lib/domain/events';

/**
 * An agent's own conversation (a delegated task's, a handoff's) under `dir`, its brief the first
 * message, kept as a record so a resumed run finds it again.
 */
export async function agentTranscript(
  workspace: Workspace,
  dir: string,
  brief: string,
  log: RunLog,
): Promise<WorkspaceTranscript> {
  const transcript = await WorkspaceTranscript.open(workspace, dir, []);
  if (transcript.messages().length === 0)
    await log.step((s) => transcript.add(s, { role: 'user', parts: [{ type: 'text', text: brief }] }));
  return transcript;
}

/** Where an agent goes on in a resumed run: after its last round, making the calls it never started. */
export function resumePoint(
  invocationId: InvocationId,
  messages: readonly ModelMessage[],
  resumed?: readonly RunEvent[],
): { startRound: number; unstarted: ReturnType<typeof unstartedCalls> } {
  if (!resumed) return { startRound: 1, unstarted: null };
  const own = resumed.filter((e) => e.invocationId === invocationId);
  const last = own.reduce(
    (n, e) => (e.type === 'model_request_created' ? Math.max(n, e.payload.round) : n),
    0,
  );
  return { startRound: last + 1, unstarted: unstartedCalls(messages, own) };
}

/** A child ready to run: its invocation (return mode), what it is told, and what it works with. */
export interface PreparedChild {
  invocation: Invocation;
  scenario: InvocationScenario;
  /** The run adds its log, approvals and checkpoints. */
  deps: Omit<InvocationDeps, 'log' | 'approvals' | 'checkpoint'>;
}

/** What a run's kind provides so its agents can delegate (Sessions, Chats). */
export interface ChildFactory {
  /**
   * Where task results are written (`agent-results/`, `summaries/` below it): a Chat run's own
   * workspace (`''`), or a Session run's folder (`runs/<id>/`) in the session's shared workspace.
   */
  resultsDir: string;
  /** A profile by id as runs resolve it, or undefined. */
  profile(id: string): Promise<ProfileV5 | undefined>;
  /**
   * The invocation a run is handed to (runtime.md §2.10): `profile`'s own foreground tools and
   * model, `brief` as its first message. Absent in runs that cannot hand off (Sessions).
   */
  prepareHandoff?(spec: {
    profile: ProfileV5;
    invocationId: InvocationId;
    parentId: InvocationId;
    brief: string;
    log: RunLog;
    /** A resumed run's journal: the agent goes on where it stopped. */
    resumed?: readonly RunEvent[];
  }): Promise<PreparedChild>;
  /** The child invocation of `profile` with `brief` as its first message (runtime.md §2.5). */
  prepare(spec: {
    profile: ProfileV5;
    invocationId: InvocationId;
    parentId: InvocationId;
    brief: string;
    log: RunLog;
    /** A resumed run's journal: the child goes on where it stopped. */
    resumed?: readonly RunEvent[];
  }): Promise<PreparedChild>;
}

/** An accepted handoff: the agent that takes the run, and what it is told. */
export interface Handoff {
  taskId: string;
  invocationId: InvocationId;
  profile: ProfileV5;
  brief: string;
}

interface Task {
  taskId: string;
  agentId: string;
  callerId: InvocationId;
  childId: InvocationId;
  workspaceKey: string;
  title: string | null;
  brief: string;
  /** Absent for a task a resumed run only remembers (it never runs again). */
  profile?: ProfileV5;
  status: TaskStatus;
  result?: TaskResult;
  error?: string;
  /** The caller read it (through `agent_await`, or injected after a tool turn). */
  seen: boolean;
  controller: AbortController;
  done?: Promise<void>;
}

export interface DelegationDeps {
  factory: ChildFactory;
  /** The run's log: each invocation's own comes from `log(invocationId)`. */
  log: (invocationId: InvocationId, foreground: boolean) => RunLog;
  runId: string;
  workspace: Workspace;
  newId: (prefix: string) => string;
  /** Runs a child through the one loop, with the run's approvals and checkpoints. */
  run: (child: PreparedChild, log: RunLog, signal: AbortSignal) => Promise<InvocationEnd>;
  /** The run's signal: Stop ends every child. */
  signal: AbortSignal;
}

/**
 * The delegated tasks of one run (runtime.md §2.2-2.9, D7): the tasks each invocation started,
 * a scheduler that runs at most `MAX_RUNNING_CHILDREN` per caller at once (the rest wait in
 * order), waiting for results without driving anything, writing what a child returns, and
 * cancelling children with the run. Children are invocations of the one loop, in return mode.
 */
export class Delegation {
  readonly #tasks = new Map<string, Task>();
  readonly #waiters = new Set<() => void>();
  #handoffs = 0;
  /** A resumed run's journal, for the children it continues. */
  #resumed: readonly RunEvent[] | undefined;

  constructor(private readonly deps: DelegationDeps) {
    deps.signal.addEventListener('abort', () => this.cancelAll('the run stopped'), { once: true });
  }

  /**
   * A resumed run's tasks, from its journal (runtime.md §1.15): finished ones with what they
   * returned (read back from their result files); one still queued or running when the tab
   * closed goes on from its own transcript, without repeating what it had confirmed.
   */
  async restore(events: readonly RunEvent[]): Promise<void> {
    this.#handoffs = events.filter((e) => e.type === 'agent_handoff_accepted').length;
    for (const e of events) {
      if (e.type !== 'agent_task_registered') continue;
      const p = e.payload;
      this.#tasks.set(p.taskId, {
        taskId: p.taskId,
        agentId: p.agentId,
        callerId: p.callerInvocationId as InvocationId,
        childId: p.childInvocationId as InvocationId,
        workspaceKey: p.workspaceKey,
        title: p.title,
        brief: '',
        status: 'queued',
        seen: false,
        controller: new AbortController(),
      });
    }
    for (const e of events) {
      const task =
        e.type === 'task_return_completed' ||
        e.type === 'agent_child_invocation_failed' ||
        e.type === 'agent_task_cancelled'
          ? this.#tasks.get(e.payload.taskId)
          : undefined;
      if (!task) continue;
      if (e.type === 'task_return_completed') {
        task.status = e.payload.status;
        task.result = await this.#readResult(e.payload.resultRef);
      } else if (e.type === 'agent_child_invocation_failed') {
        task.status = 'failed';
        task.error = e.payload.message;
      } else if (e.type === 'agent_task_cancelled') {
        task.status = 'cancelled';
        task.error = e.payload.reason;
      }
    }
    // An unfinished task goes on where its agent stopped (calls it had started without a result
    // are shown to it as of unknown outcome); one whose agent is gone fails with why.
    this.#resumed = events;
    const callers = new Set<InvocationId>();
    for (const task of this.#tasks.values()) {
      if (isTerminal(task.status)) continue;
      task.profile = await this.deps.factory.profile(task.agentId);
      if (!task.profile) {
        const message = `The agent ${task.agentId} is not there any more, so this task was not resumed.`;
        await this.#settle(task, 'failed', message, (log) =>
          log.emit({
            type: 'agent_child_invocation_failed',
            level: 'warn',
            payload: { taskId: task.taskId, childInvocationId: task.childId, message },
          }),
        );
        continue;
      }
      task.status = 'queued';
      callers.add(task.callerId);
    }
    for (const caller of callers) this.#schedule(caller);
  }

  /** `agent_delegate` for `caller` (runtime.md §2.2). */
  async delegate(caller: Invocation, agentId: string, task: DelegatedTask): Promise<ToolOutcome> {
    const callerProfile = await this.deps.factory.profile(caller.profileId);
    if (!callerProfile?.delegation.canDelegate)
      return failure('agent.delegation_policy_denied', 'This agent may not delegate tasks.');
    if (caller.kind === 'subagent')
      return failure('agent.delegation_policy_denied', 'A delegated task cannot delegate again.');
    const target = await this.deps.factory.profile(agentId);
    if (!target)
      return failure(
        'agent.target_profile_not_found',
        `There is no agent "${agentId}". Use an id from the agent directory.`,
      );
    const refusal = eligibility(target, callerProfile.id, 'subagent');
    if (refusal) return failure('agent.delegation_policy_denied', refusal);
    const taskId = this.deps.newId('task');
    const childId = this.deps.newId('inv') as InvocationId;
    const workspaceKey = allocateWorkspaceKey(
      target.id,
      new Set([...this.#tasks.values()].map((t) => t.workspaceKey)),
    );
    const entry: Task = {
      taskId,
      agentId: target.id,
      callerId: caller.id,
      childId,
      workspaceKey,
      title: task.title?.trim() || null,
      brief: delegatedBrief(task),
      profile: target,
      status: 'queued',
      seen: false,
      controller: new AbortController(),
    };
    this.#tasks.set(taskId, entry);
    await this.deps.log(caller.id, true).emit(
      {
        type: 'agent_task_registered',
        payload: {
          taskId,
          agentId: target.id,
          callerInvocationId: caller.id,
          childInvocationId: childId,
          workspaceKey,
          title: entry.title,
        },
      },
      { type: 'agent_delegate_started', payload: { taskId, agentId: target.id, invocationId: caller.id } },
    );
    this.#schedule(caller.id);
    return success(
      `Started delegated task ${taskId} with Agent ${target.id}. Keep working on what does not need its result; call \`agent_await\` when a decision does.`,
      { structured: { taskId, status: entry.status, agentId: target.id } },
    );
  }

  /** `agent_await` (runtime.md §2.7): waits on changes, the timeout or the run's stop. */
  async await(
    caller: Invocation,
    request: { taskIds?: string[]; mode: AwaitMode; timeoutMs: number },
    advice: ContinueAdvice,
    signal: AbortSignal,
  ): Promise<ToolOutcome> {
    const own = [...this.#tasks.values()].filter((t) => t.callerId === caller.id);
    if (own.length === 0)
      return failure('agent.no_child_tasks', 'You have not delegated any task to wait for.');
    const unknown = request.taskIds?.filter((id) => !own.some((t) => t.taskId === id)) ?? [];
    if (unknown.length)
      return failure('agent.await_task_not_found', `No task of yours has the id ${unknown.join(', ')}.`);
    const selected = request.taskIds ? own.filter((t) => request.taskIds!.includes(t.taskId)) : own;
    const ready = () =>
      request.mode === 'statusOnly' ||
      (request.mode === 'nextCompleted'
        ? selected.some((t) => isTerminal(t.status) && !t.seen) || selected.every((t) => isTerminal(t.status))
        : selected.every((t) => isTerminal(t.status)));
    const timedOut = !(await this.#until(ready, request.timeoutMs, signal));
    if (signal.aborted)
      throw new HearthFailure(
        hearthError('agent.cancelled', 'The run was stopped while waiting for delegated tasks.'),
      );
    for (const t of selected) if (isTerminal(t.status)) t.seen = true;
    const views = selected.map(viewOf);
    return success(resultsCapsule(views, { timedOut, advice }), {
      structured: { mode: request.mode, timedOut, tasks: views as unknown as JsonObject[] },
    });
  }

  /** What `caller` did not read yet of its finished tasks, as the single message (runtime.md §2.8). */
  unseenResults(caller: Invocation, advice: ContinueAdvice): string | null {
    const fresh = [...this.#tasks.values()].filter(
      (t) => t.callerId === caller.id && isTerminal(t.status) && !t.seen,
    );
    if (fresh.length === 0) return null;
    for (const t of fresh) t.seen = true;
    return backgroundResults(fresh.map(viewOf), advice);
  }

  /**
   * `agent_handoff` (runtime.md §2.10): the caller may hand off, has no task still running, the
   * run has handed off fewer than `MAX_HANDOFF_DEPTH` times, and the target takes handoffs.
   */
  async handoff(
    caller: Invocation,
    agentId: string,
    brief: HandoffBrief,
  ): Promise<{ outcome: ToolOutcome; transfer?: Handoff }> {
    const refuse = (code: ErrorCode, message: string) => ({ outcome: failure(code, message) });
    const log = this.deps.log(caller.id, true);
    await log.emit({ type: 'agent_handoff_requested', payload: { agentId, invocationId: caller.id } });
    const callerProfile = await this.deps.factory.profile(caller.profileId);
    if (!callerProfile?.delegation.canHandoff || !this.deps.factory.prepareHandoff)
      return refuse('agent.handoff_policy_denied', 'This agent may not hand off the run.');
    if (this.pending(caller.id))
      return refuse(
        'agent.handoff_pending_tasks',
        'Tasks you delegated are still running: wait for them with `agent_await`, then hand off.',
      );
    if (this.#handoffs >= MAX_HANDOFF_DEPTH)
      return refuse(
        'agent.handoff_depth_exhausted',
        `This run was already handed off ${this.#handoffs} times, the most it may be: finish it yourself.`,
      );
    const target = await this.deps.factory.profile(agentId);
    if (!target)
      return refuse(
        'agent.target_profile_not_found',
        `There is no agent "${agentId}". Use an id from the agent directory.`,
      );
    const refusal = eligibility(target, callerProfile.id, 'handoff');
    if (refusal) return refuse('agent.handoff_policy_denied', refusal);
    this.#handoffs++;
    const taskId = this.deps.newId('handoff');
    const invocationId = this.deps.newId('inv') as InvocationId;
    await log.emit({
      type: 'agent_handoff_accepted',
      payload: {
        handoffId: taskId,
        agentId: target.id,
        invocationId: caller.id,
        targetInvocationId: invocationId,
        depth: this.#handoffs,
      },
    });
    return {
      outcome: success(`Handoff accepted for Agent ${target.id}. Your part is complete.`, {
        structured: { handoffId: taskId, taskId, status: 'accepted', agentId: target.id },
      }),
      transfer: { taskId, invocationId, profile: target, brief: handoffBrief(brief) },
    };
  }

  /** Whether `caller` has tasks still queued or running (a handoff must wait for them). */
  pending(callerId: InvocationId): boolean {
    return [...this.#tasks.values()].some((t) => t.callerId === callerId && !isTerminal(t.status));
  }

  /** `task_return` from `child` (runtime.md §2.6): the result files, then the task ends. */
  async taskReturn(child: Invocation, result: TaskResult): Promise<ToolOutcome> {
    const task = [...this.#tasks.values()].find((t) => t.childId === child.id);
    if (!task)
      return failure(
        'agent.task_return_denied',
        '`task_return` finishes delegated tasks, and this agent has none.',
      );
    if (isTerminal(task.status))
      return failure(
        'agent.task_already_finished',
        `Task ${task.taskId} has already ended (${task.status}).`,
      );
    const dir = this.deps.factory.resultsDir;
    const resultPath = `${dir}agent-results/${child.id}.json`;
    const summaryPath = `${dir}summaries/${task.workspaceKey}-result.md`;
    const document = {
      schemaVersion: 1,
      kind: 'tauritavern.agentTaskResult',
      status: result.status,
      summary: result.summary,
      summaryRef: summaryPath,
      result,
      runtime: {
        taskId: task.taskId,
        runId: this.deps.runId,
        parentInvocationId: task.callerId,
        childInvocationId: child.id,
        targetProfileId: task.agentId,
        workspaceKey: task.workspaceKey,
      },
    };
    await this.#write(resultPath, `${JSON.stringify(document, null, 2)}\n`);
    await this.#write(summaryPath, resultSummary(task.taskId, result));
    task.result = result;
    await this.#settle(task, result.status, undefined, (log) =>
      log.emit({
        type: 'task_return_completed',
        payload: {
          taskId: task.taskId,
          childInvocationId: child.id,
          status: result.status,
          resultRef: resultPath,
        },
      }),
    );
    return success(`Returned ${result.status} result for delegated task ${task.taskId}.`, {
      structured: document as unknown as JsonObject,
      resourceRefs: [resultPath, summaryPath],
    });
  }

  /** Stops every unfinished task (the run stopped, failed or finished) and waits for their loops. */
  async cancelAll(reason: string): Promise<void> {
    for (const task of this.#tasks.values()) {
      if (isTerminal(task.status)) continue;
      task.controller.abort();
      if (task.status === 'queued') await this.#settle(task, 'cancelled', reason);
    }
    await Promise.all([...this.#tasks.values()].map((t) => t.done));
  }

  /** Starts the caller's next queued tasks while fewer than `MAX_RUNNING_CHILDREN` run. */
  #schedule(callerId: InvocationId): void {
    const own = [...this.#tasks.values()].filter((t) => t.callerId === callerId);
    let running = own.filter((t) => t.status === 'running').length;
    for (const task of own) {
      if (running >= MAX_RUNNING_CHILDREN) break;
      if (task.status !== 'queued' || this.deps.signal.aborted) continue;
      task.status = 'running';
      running++;
      task.done = this.#runChild(task).finally(() => this.#schedule(callerId));
    }
  }

  async #runChild(task: Task): Promise<void> {
    const log = this.deps.log(task.childId, false);
    const signal = AbortSignal.any([this.deps.signal, task.controller.signal]);
    let end: InvocationEnd;
    let invocation: Invocation | undefined;
    try {
      await log.emit({
        type: 'agent_task_started',
        payload: { taskId: task.taskId, childInvocationId: task.childId },
      });
      if (!task.profile)
        throw new HearthFailure(hearthError('agent.internal_error', 'a remembered task cannot run'));
      const prepared = await this.deps.factory.prepare({
        profile: task.profile,
        invocationId: task.childId,
        parentId: task.callerId,
        brief: task.brief,
        log,
        ...(this.#resumed ? { resumed: this.#resumed } : {}),
      });
      invocation = prepared.invocation;
      await startInvocation(log, invocation);
      end = await this.deps.run(prepared, log, signal);
    } catch (e) {
      end = {
        kind: 'failed',
        error: e instanceof HearthFailure ? e.error : hearthError('agent.internal_error', String(e)),
      };
    }
    if (end.kind === 'completed' && !isTerminal(task.status)) {
      end = {
        kind: 'failed',
        error: hearthError(
          'agent.child_invocation_missing_return',
          'The agent ended without calling `task_return`.',
        ),
      };
    }
    if (invocation) await endInvocation(log, invocation, end.kind).catch(() => {});
    if (isTerminal(task.status)) return this.#wake();
    if (end.kind === 'cancelled') return this.#settle(task, 'cancelled', 'the task was stopped');
    const error: HearthError =
      end.kind === 'failed' ? end.error : hearthError('agent.internal_error', 'unknown end');
    await this.#settle(task, 'failed', error.message, (l) =>
      l.emit({
        type: 'agent_child_invocation_failed',
        level: 'warn',
        payload: { taskId: task.taskId, childInvocationId: task.childId, message: error.message },
      }),
    );
  }

  async #settle(
    task: Task,
    status: TaskStatus,
    error?: string,
    record?: (log: RunLog) => Promise<unknown>,
  ): Promise<void> {
    task.status = status;
    if (error) task.error = error;
    const log = this.deps.log(task.childId, false);
    await record?.(log);
    if (status === 'cancelled')
      await log.emit({
        type: 'agent_task_cancelled',
        payload: { taskId: task.taskId, reason: error ?? 'cancelled' },
      });
    this.#wake();
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /** Resolves true once `ready()` holds, false at the deadline or when `signal` aborts. */
  #until(ready: () => boolean, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        signal.removeEventListener('abort', stop);
        resolve(value);
      };
      const check = () => ready() && done(true);
      const stop = () => done(false);
      const timer = setTimeout(stop, timeoutMs);
      this.#waiters.add(check);
      signal.addEventListener('abort', stop, { once: true });
    });
  }

  async #readResult(raw: string): Promise<TaskResult | undefined> {
    const path = parseWorkspacePath(raw);
    if (!path.ok) return undefined;
    const read = await this.deps.workspace.read(path.value);
    if (!read.ok) return undefined;
    try {
      return (JSON.parse(new TextDecoder().decode(read.value)) as { result?: TaskResult }).result;
    } catch {
      return undefined;
    }
  }

  async #write(raw: string, text: string): Promise<void> {
    const path = parseWorkspacePath(raw);
    if (!path.ok) throw new HearthFailure(path.error);
    const written = await this.deps.workspace.write(path.value, new TextEncoder().encode(text));
    if (!written.ok) throw new HearthFailure(written.error);
  }
}

const viewOf = (t: Task): AwaitTaskView => ({
  taskId: t.taskId,
  agentId: t.agentId,
  status: t.status,
  ...(t.error ? { error: t.error } : {}),
  ...(t.result ? (({ status: _, ...rest }) => rest)(t.result) : {}),
});

/** Why `target` cannot take work from `callerId` (runtime.md §2.11), or null when it can. */
export function eligibility(
  target: ProfileV5,
  callerId: string,
  purpose: 'subagent' | 'handoff',
): string | null {
  const d = target.delegation;
  if (!d.callable) return `${target.displayName} (${target.id}) cannot be called by other agents.`;
  if (purpose === 'subagent' && !d.allowAsSubagent)
    return `${target.displayName} does not take delegated tasks.`;
  if (purpose === 'handoff' && !d.allowAsHandoffTarget)
    return `${target.displayName} does not take handoffs.`;
  if (!d.allowedCallers.includes('*') && !d.allowedCallers.includes(callerId))
    return `${target.displayName} does not take work from this agent.`;
  if (target.model.mode === 'requiresConfiguration')
    return `${target.displayName} has no model configured yet.`;
  return null;
}
