import { hearthError, HearthFailure, type HearthError } from '$lib/domain/errors';
import { isTerminal, ROOT_INVOCATION, type InvocationId, type RunId, type RunRecord } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { RunEvent } from '$lib/domain/events';
import type { Clock, Ids } from '$lib/ports/clock';
import type { Journal } from '$lib/ports/journal';
import type { Locks } from '$lib/ports/locks';
import type { RunBus } from '$lib/ports/run-bus';
import type { Sandbox } from '$lib/ports/sandbox';
import type { RunStore } from '$lib/ports/stores';
import { ApprovalDesk, type ApprovalAnswer, type ApprovalRequest } from './approvals';
import { checkpointer } from './checkpoints';
import type { CommitRecord } from './control';
import { GuidanceMailbox } from './guidance';
import { Delegation, type ChildFactory, type Handoff } from './delegation';
import { endInvocation, startInvocation, type Invocation } from './invocation';
import {
  runInvocation,
  type InvocationDeps,
  type InvocationEnd,
  type InvocationScenario,
} from './invocation-runner';
import { AsyncQueue, RunFeed } from './run-feed';
import { RunRecorder, type RunLog } from './run-recorder';

/** What the run service gives a run while it prepares: where the person's input arrives. */
export interface RunInbox {
  guidance: GuidanceMailbox;
  approvals: ApprovalDesk;
}

/** A run's root invocation ready to go, as a kind of run (Session, Chat) prepares it. */
export interface PreparedRun {
  invocation: Invocation;
  scenario: InvocationScenario;
  deps: Omit<InvocationDeps, 'log' | 'approvals' | 'checkpoint' | 'delegation'>;
  /** Runs whose agents may delegate: how a delegated task's agent is prepared. */
  children?: ChildFactory;
  /** A resumed run's journal: its tasks and handoffs so far (runtime.md §1.15). */
  resumed?: readonly RunEvent[];
  /** After the invocation completed, the kind's own finishing (a Chat publishes its persist/). */
  finish?: (recorder: RunRecorder) => Promise<void>;
}

/** One run to execute: a new one or a resumed one, of any kind. */
export interface RunPlan {
  run: RunRecord;
  /** The lock that keeps one active run per session or chat, across tabs. */
  lock: string;
  /** The refusal when another run holds the lock. */
  busy: string;
  /** The workspace whose sandbox ends with the run. */
  workspaceKey: string;
  /** Journals how the run starts (its creation and the person's message, or its resumption). */
  begin(recorder: RunRecorder): Promise<void>;
  prepare(recorder: RunRecorder, inbox: RunInbox): Promise<PreparedRun>;
}

/** The page of this tab: told when one of its runs waits for the person, and when it stops waiting. */
export interface PageNotices {
  approvalRequested(runId: RunId, target: RunRecord['target'], request: ApprovalRequest): void;
  approvalSettled(runId: RunId, approvalId: string): void;
}

export interface RunServiceDeps {
  runs: RunStore;
  journal: Journal;
  locks: Locks;
  clock: Clock;
  ids: Ids;
  feed?: RunFeed;
  /** Other tabs: optional (a single tab, or Node tests, need none). */
  bus?: RunBus;
  /** Ends each workspace's sandbox with its run. */
  sandbox?: Sandbox;
  page?: PageNotices;
  /** Told after each run of this tab settles (retention follows finished runs). */
  onSettled?: () => void;
}

interface ActiveRun {
  controller: AbortController;
  recorder: RunRecorder;
  inbox: RunInbox;
  done: Promise<void>;
  /** The foreground invocation: the root, or the agent a handoff gave the run to. */
  holder: InvocationId;
}

const TERMINAL_EVENTS = new Set([
  'run_completed',
  'run_failed',
  'run_partial_success',
  'run_cancelled',
  'run_interrupted',
]);

/** Errors that end a run but are the person's to retry, never the runtime's (runtime.md §1.11). */
const DRIFT_CODES = new Set(['model.tool_call_required', 'agent.tool_after_finish']);

/**
 * Every kind of run, executed the same way (runtime.md §1): one active run per session or chat
 * across tabs (a named lock held for the run's life), the root invocation through the one runner,
 * its progress fanned out live and to other tabs, Stop, guidance and approvals routed to the tab
 * that runs it, watch and resume, and one finalization.
 */
export class RunService {
  readonly #deps: RunServiceDeps;
  readonly #feed: RunFeed;
  readonly #active = new Map<string, ActiveRun>();
  readonly #resumers = new Map<RunRecord['target']['kind'], (run: RunRecord) => Promise<RunPlan>>();

  constructor(deps: RunServiceDeps) {
    this.#deps = deps;
    this.#feed = deps.feed ?? new RunFeed();
    // Another tab's runs: follow their updates; stop them or answer their approvals when ours.
    deps.bus?.listen((m) => {
      if (m.type === 'update' && !this.#active.has(m.runId)) this.#feed.publish(m.runId, m.update);
      if (m.type === 'cancel' && this.#active.has(m.runId)) void this.cancel(m.runId as RunId);
      if (m.type === 'decide' && this.#active.has(m.runId))
        void this.decide(m.runId as RunId, m.approvalId, m.answer).catch(() => {});
    });
  }

  get feed(): RunFeed {
    return this.#feed;
  }

  /** How runs of a kind resume: the kind rebuilds its plan from the stored run. */
  resumeWith(kind: RunRecord['target']['kind'], plan: (run: RunRecord) => Promise<RunPlan>): void {
    this.#resumers.set(kind, plan);
  }

  isActive(runId: string): boolean {
    return this.#active.has(runId);
  }

  /** Starts a run; its updates flow until it ends. Leaving the iteration early detaches, it does not stop. */
  start(plan: () => Promise<RunPlan>): AsyncIterable<RunUpdate> {
    let detached = false;
    let release = () => {};
    const queue = new AsyncQueue<RunUpdate>(() => {
      detached = true;
      release();
    });
    const onRelease = (unsubscribe: () => void) => {
      release = unsubscribe;
      if (detached) unsubscribe();
    };
    void (async () => this.#execute(await plan(), queue, onRelease))().catch((e) => queue.fail(e));
    return queue;
  }

  /**
   * Continues an interrupted run, or a failed one whose error was retryable, as the same run
   * (D10): confirmed tool effects and commits are never replayed.
   */
  resume(runId: RunId): AsyncIterable<RunUpdate> {
    return this.start(async () => {
      const run = await this.run(runId);
      const resumable =
        run.status === 'interrupted' || (run.status === 'failed' && run.error?.retryable === true);
      if (!resumable) {
        throw new HearthFailure(
          hearthError(
            'agent.resume_refused',
            'Only an interrupted reply, or one that failed for a passing reason, can be resumed.',
          ),
        );
      }
      const resumer = this.#resumers.get(run.target.kind);
      if (!resumer)
        throw new HearthFailure(hearthError('agent.resume_refused', 'This kind of run cannot be resumed.'));
      return resumer(run);
    });
  }

  async run(runId: RunId): Promise<RunRecord> {
    const run = await this.#deps.runs.get(runId);
    if (!run) throw new HearthFailure(hearthError('agent.not_found', 'This run no longer exists.'));
    return run;
  }

  /** Replays a run's journal, then follows it live while a tab runs it. */
  watch(runId: RunId): AsyncIterable<RunUpdate> {
    let unsubscribe = () => {};
    const queue = new AsyncQueue<RunUpdate>(() => unsubscribe());
    const buffered: RunUpdate[] = [];
    let live = false;
    const deliver = (u: RunUpdate) => {
      queue.push(u);
      if (u.type === 'event' && TERMINAL_EVENTS.has(u.event.type)) {
        unsubscribe();
        queue.close();
      }
    };
    unsubscribe = this.#feed.subscribe(runId, (u) => (live ? deliver(u) : buffered.push(u)));
    void (async () => {
      const run = await this.run(runId);
      let lastSeq = 0;
      for (;;) {
        const page = await this.#deps.journal.read(runId, { afterSeq: lastSeq, limit: 500 });
        for (const event of page) queue.push({ type: 'event', event });
        lastSeq = page.at(-1)?.seq ?? lastSeq;
        if (page.length < 500) break;
      }
      live = true;
      for (const u of buffered) if (u.type !== 'event' || u.event.seq > lastSeq) deliver(u);
      const latest = (await this.#deps.runs.get(runId)) ?? run;
      if (!this.#active.has(runId)) queue.push({ type: 'run', run: latest });
      // A finished run ends the stream; an unfinished one is followed until it settles.
      if (isTerminal(latest.status)) {
        unsubscribe();
        queue.close();
      }
    })().catch((e) => {
      unsubscribe();
      queue.fail(e);
    });
    return queue;
  }

  /** Stops a run of this tab: the stream is aborted at once and everything written is kept. */
  async cancel(runId: RunId): Promise<void> {
    const active = this.#active.get(runId);
    if (!active) {
      // Running in another tab: that tab stops it (its lock keeps everyone else out).
      this.#deps.bus?.post({ type: 'cancel', runId });
      return;
    }
    if (active.controller.signal.aborted) return;
    await active.recorder.step((s) => {
      s.emit({ type: 'run_cancel_requested', payload: null });
      s.status('cancelling');
    });
    active.controller.abort();
    await active.done;
  }

  /** Adds an instruction to a run this tab is working on (runtime.md §1.13). */
  async guide(
    runId: RunId,
    text: string,
    clientGuidanceId?: string,
  ): Promise<{ guidanceId: string; pendingCount: number }> {
    const active = this.#active.get(runId);
    if (!active) {
      throw new HearthFailure(
        hearthError('agent.guidance_active_run_missing', 'This reply is not running in this tab any more.'),
      );
    }
    const { guidance } = active.inbox;
    const submitted = guidance.submit({
      text,
      clientGuidanceId,
      guidanceId: this.#deps.ids.contentId('guidance'),
      now: this.#deps.clock.now(),
    });
    if (!submitted.ok) throw new HearthFailure(submitted.error);
    const item = submitted.value;
    // Stamped with the agent that will apply it: after a handoff, the one holding the run.
    await active.recorder.emit({
      type: 'user_guidance_submitted',
      invocationId: active.holder,
      payload: {
        guidanceId: item.guidanceId,
        clientGuidanceId: item.clientGuidanceId,
        invocationId: active.holder,
        status: 'queued',
        submittedAt: item.submittedAt,
        text: item.text,
        chars: item.chars,
        words: item.words,
        preview: item.preview,
      },
    });
    return { guidanceId: item.guidanceId, pendingCount: guidance.pending };
  }

  /**
   * The person's answer to a call waiting for approval (`runs.decide`). A run of another tab gets
   * it through the bus; an approval that is no longer pending is refused.
   */
  async decide(runId: RunId, approvalId: string, answer: ApprovalAnswer): Promise<void> {
    const active = this.#active.get(runId);
    if (!active) {
      this.#deps.bus?.post({ type: 'decide', runId, approvalId, answer });
      return;
    }
    if (!active.inbox.approvals.decide(approvalId, answer)) {
      throw new HearthFailure(
        hearthError('agent.approval_not_pending', 'This call is not waiting for approval any more.'),
      );
    }
  }

  /**
   * Marks runs left unfinished by a closed or crashed tab as `interrupted`. Each waits for its
   * lock: a live tab holds it while its run works, a closed tab's lock is released as its worker
   * goes away. Whoever gets the lock and still finds the run unfinished owns the verdict.
   */
  async recoverInterrupted(lockOf: (run: RunRecord) => string): Promise<void> {
    const orphans = (await this.#deps.runs.listActive()).filter((r) => !this.#active.has(r.id));
    await Promise.all(
      orphans.map((run) =>
        this.#deps.locks.withLock(lockOf(run), async () => {
          const current = await this.#deps.runs.get(run.id);
          if (!current || isTerminal(current.status) || this.#active.has(run.id)) return;
          const reason = 'The tab running this reply was closed before it finished.';
          await this.#recorder(current).step((s) => {
            s.status('interrupted', reason);
            s.emit({ type: 'run_interrupted', payload: { message: reason } });
          });
        }),
      ),
    );
  }

  #recorder(run: RunRecord, workspaceKey?: string): RunRecorder {
    return new RunRecorder(run, {
      workspaceKey,
      journal: this.#deps.journal,
      clock: this.#deps.clock,
      publish: (u) => this.#publish(run.id, u),
    });
  }

  /** Local subscribers first, then other tabs; the page hears of approvals its runs wait for. */
  #publish(runId: RunId, update: RunUpdate): void {
    this.#feed.publish(runId, update);
    this.#deps.bus?.post({ type: 'update', runId, update });
    const page = this.#deps.page;
    if (!page || update.type !== 'event') return;
    const { event } = update;
    if (event.type === 'tool_call_awaiting_approval') {
      const { round: _round, source, ...rest } = event.payload;
      const target = this.#active.get(runId)?.recorder.run.target;
      if (!target) return;
      page.approvalRequested(runId, target, {
        ...rest,
        origin: source,
        toolId: rest.toolId as ApprovalRequest['toolId'],
      });
    } else if (event.type === 'tool_call_approved' || event.type === 'tool_call_denied') {
      page.approvalSettled(runId, event.payload.approvalId);
    }
  }

  async #execute(
    plan: RunPlan,
    queue: AsyncQueue<RunUpdate>,
    onRelease: (release: () => void) => void,
  ): Promise<void> {
    const { run } = plan;
    const held = await this.#deps.locks.tryWithLock(plan.lock, async () => {
      await this.#deps.runs.put(run);
      const unsubscribe = this.#feed.subscribe(run.id, (u) => queue.push(u));
      onRelease(unsubscribe);
      const recorder = this.#recorder(run, plan.workspaceKey);
      const controller = new AbortController();
      const inbox: RunInbox = { guidance: new GuidanceMailbox(), approvals: new ApprovalDesk() };
      let finished!: () => void;
      const done = new Promise<void>((resolve) => (finished = resolve));
      const active: ActiveRun = { controller, recorder, inbox, done, holder: ROOT_INVOCATION };
      this.#active.set(run.id, active);
      let ledger: readonly CommitRecord[] = [];
      try {
        recorder.publish({ type: 'run', run });
        await plan.begin(recorder);
        const prepared = await plan.prepare(recorder, inbox);
        ledger = prepared.deps.control.ledger;
        const { invocation } = prepared;
        const log = recorder.invocation(invocation.id, true);
        const checkpoint = checkpointer({
          workspace: prepared.deps.workspace,
          runDir: invocation.audit.runDir,
          runId: run.id,
          clock: this.#deps.clock,
        });
        const runOne = (
          inv: Invocation,
          scenario: InvocationScenario,
          deps: PreparedRun['deps'],
          invLog: RunLog,
          signal: AbortSignal,
          delegation?: Delegation,
        ) =>
          runInvocation(
            inv,
            scenario,
            { ...deps, log: invLog, approvals: inbox.approvals, checkpoint, delegation },
            signal,
          );
        // Children return through the same tasks that started them.
        const delegation: Delegation | undefined = prepared.children
          ? new Delegation({
              factory: prepared.children,
              log: (id, foreground) => recorder.invocation(id, foreground),
              runId: run.id,
              workspace: prepared.deps.workspace,
              newId: (prefix) => this.#deps.ids.contentId(prefix),
              run: (child, childLog, signal) =>
                runOne(child.invocation, child.scenario, child.deps, childLog, signal, delegation),
              signal: controller.signal,
            })
          : undefined;
        if (prepared.resumed) await delegation?.restore(prepared.resumed);
        // A run handed off before its tab closed goes on with the agent that held it.
        const held = prepared.resumed ? heldBy(prepared.resumed) : null;
        let end: InvocationEnd;
        let holder = invocation;
        active.holder = holder.id;
        if (held) {
          end = { kind: 'transferred', to: await resumedHolder(prepared, held) };
        } else {
          await startInvocation(log, invocation);
          end = await runOne(
            invocation,
            prepared.scenario,
            prepared.deps,
            log,
            controller.signal,
            delegation,
          );
          await endInvocation(log, invocation, end.kind);
        }
        // A handoff hands the rest of the run to another agent, in the foreground (runtime.md §2.10).
        while (end.kind === 'transferred') {
          const nextLog = recorder.invocation(end.to.invocationId, true);
          const next = await prepared.children!.prepareHandoff!({
            profile: end.to.profile,
            invocationId: end.to.invocationId,
            parentId: held?.parentId ?? holder.id,
            brief: end.to.brief,
            log: nextLog,
            ...(held?.invocationId === end.to.invocationId ? { resumed: prepared.resumed } : {}),
          });
          holder = next.invocation;
          active.holder = holder.id;
          await startInvocation(nextLog, holder);
          end = await runOne(holder, next.scenario, next.deps, nextLog, controller.signal, delegation);
          await endInvocation(nextLog, holder, end.kind);
        }
        // A child cannot outlive its run (runtime.md §2.9).
        await delegation?.cancelAll(
          end.kind === 'completed' ? 'the caller finished the run' : 'the run stopped',
        );
        let settled: Exclude<InvocationEnd, { kind: 'transferred' }> = end;
        if (settled.kind === 'completed' && prepared.finish) {
          settled = await prepared.finish(recorder).then(
            () => settled,
            (e: unknown) => ({ kind: 'failed' as const, error: errorOf(e) }),
          );
        }
        await this.#finalize(recorder, settled, inbox, ledger);
      } catch (e) {
        const error = errorOf(e);
        await this.#finalize(recorder, { kind: 'failed', error }, inbox, ledger).catch(() =>
          recorder.publishUnrecorded(error),
        );
      } finally {
        // Whatever the run's shell left in its sandbox ends with the run.
        this.#deps.sandbox?.release?.(plan.workspaceKey);
        for (const pending of inbox.approvals.pending())
          this.#deps.page?.approvalSettled(run.id, pending.approvalId);
        this.#active.delete(run.id);
        unsubscribe();
        queue.close();
        finished();
        this.#deps.onSettled?.();
      }
    });
    if (!held.acquired) throw new HearthFailure(hearthError('agent.session_busy', plan.busy));
  }

  /** The run's terminal record (runtime.md §1.11): one place for every kind of run. */
  async #finalize(
    recorder: RunRecorder,
    end: Exclude<InvocationEnd, { kind: 'transferred' }>,
    inbox: RunInbox,
    ledger: readonly CommitRecord[],
  ): Promise<void> {
    const leftovers = inbox.guidance.close();
    const outcome = end.kind === 'failed' && ledger.length > 0 ? 'partial_success' : end.kind;
    if (leftovers.length > 0) {
      await recorder.emit({
        type: 'user_guidance_discarded',
        payload: {
          guidanceIds: leftovers.map((g) => g.guidanceId),
          count: leftovers.length,
          reason: `run_${outcome}_before_next_model_request`,
        },
      });
    }
    if (end.kind === 'completed') {
      await recorder.step((s) => {
        s.status('completed');
        s.emit({ type: 'run_completed', payload: null });
      });
    } else if (end.kind === 'cancelled') {
      await recorder.step((s) => {
        s.status('cancelled');
        s.emit({ type: 'run_cancelled', payload: { message: 'Stopped by the person.' } });
      });
    } else if (outcome === 'partial_success') {
      // A failure after a confirmed commit keeps the committed reply.
      await recorder.step((s) => {
        s.update({ error: end.error });
        s.status('partial_success');
        s.emit({
          type: 'run_partial_success',
          level: 'warn',
          payload: {
            code: end.error.code,
            message: end.error.message,
            retryable: false,
            userRetryable: false,
            preservedCommitCount: ledger.length,
          },
        });
      });
    } else {
      const { code, message } = end.error;
      const retryable = end.error.retryable === true;
      await recorder.step((s) => {
        s.update({ error: end.error });
        s.status('failed');
        s.emit({
          type: 'run_failed',
          payload: { code, message, retryable, userRetryable: retryable || DRIFT_CODES.has(code) },
        });
      });
    }
  }
}

const errorOf = (e: unknown): HearthError =>
  e instanceof HearthFailure
    ? e.error
    : hearthError('agent.internal_error', e instanceof Error ? e.message : String(e));

/** The agent a resumed run was handed to and that had not finished, from its journal. */
function heldBy(
  events: readonly RunEvent[],
): { invocationId: InvocationId; agentId: string; parentId: InvocationId } | null {
  const last = events.findLast((e) => e.type === 'agent_handoff_accepted');
  if (last?.type !== 'agent_handoff_accepted') return null;
  const target = last.payload.targetInvocationId;
  const ended = events.some(
    (e) =>
      e.invocationId === target &&
      (e.type === 'agent_invocation_completed' ||
        e.type === 'agent_invocation_failed' ||
        e.type === 'agent_invocation_cancelled' ||
        e.type === 'agent_invocation_transferred'),
  );
  return ended
    ? null
    : {
        invocationId: target as InvocationId,
        agentId: last.payload.agentId,
        parentId: last.payload.invocationId as InvocationId,
      };
}

/** The handoff a resumed run continues: its agent's profile as runs resolve it, its kept transcript. */
async function resumedHolder(
  prepared: PreparedRun,
  held: { invocationId: InvocationId; agentId: string },
): Promise<Handoff> {
  const profile = await prepared.children?.profile(held.agentId);
  if (!profile || !prepared.children?.prepareHandoff)
    throw new HearthFailure(
      hearthError(
        'agent.resume_refused',
        `The agent this run was handed to (${held.agentId}) is not there any more.`,
      ),
    );
  return { taskId: '', invocationId: held.invocationId, profile, brief: '' };
}
