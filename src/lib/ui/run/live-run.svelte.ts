import type { HearthClient } from '$lib/client/hearth';
import type { HearthError } from '$lib/domain/errors';
import { isTerminal, type RunId, type RunRecord } from '$lib/domain/run';
import type { EngineProgress, RunUpdate } from '$lib/domain/run-update';
import { describeError } from '../errors';
import { foldDelegation, NO_DELEGATION, type DelegationProgress } from '../session/delegated-tasks';
import { applyStreamPart, emptyTurn, type StreamingTurn } from './streaming-turn';
import { foldApprovals, type PendingApprovalView } from './timeline';

/**
 * What a conversation page (a session's or a chat's) follows of its runs: their records, the live
 * run's streamed working output, a shell engine loading for it, the calls waiting for approval,
 * its delegated tasks, and errors. Each page's state extends it with its messages and with what
 * its own updates add (`applyMore`, `afterRun`).
 */
export abstract class LiveRunState {
  runs = $state<RunRecord[]>([]);
  streaming = $state<StreamingTurn | null>(null);
  /** A shell engine loading for the agent (the first Python call). */
  engineProgress = $state<EngineProgress | null>(null);
  error = $state<HearthError | null>(null);
  now = $state(Date.now());
  /** Calls of the live run waiting for the person's approval. */
  approvals = $state.raw<PendingApprovalView[]>([]);
  /** The live run's delegated tasks, folded from its events. */
  delegation = $state.raw<DelegationProgress>(NO_DELEGATION);

  readonly activeRun = $derived(this.runs.find((r) => !isTerminal(r.status)) ?? null);
  readonly busy = $derived(this.activeRun !== null);

  #ticker: ReturnType<typeof setInterval> | null = null;

  constructor(protected readonly client: HearthClient) {}

  /** Continues an interrupted or retryably failed run (D10), as the same run. */
  async resume(runId: RunId): Promise<void> {
    this.error = null;
    await this.follow(this.client.runs.resume(runId));
  }

  /** Adds an instruction to the working run; the agent takes it in before its next request. */
  async guide(text: string): Promise<void> {
    const run = this.activeRun;
    if (!run) return;
    try {
      await this.client.runs.guide(run.id, text);
    } catch (e) {
      this.error = describeError(e);
    }
  }

  async stop(): Promise<void> {
    const run = this.activeRun;
    if (!run) return;
    try {
      await this.client.runs.cancel(run.id);
    } catch (e) {
      this.error = describeError(e);
    }
  }

  dispose(): void {
    if (this.#ticker) clearInterval(this.#ticker);
    this.#ticker = null;
  }

  apply(update: RunUpdate): void {
    switch (update.type) {
      case 'run': {
        const i = this.runs.findIndex((r) => r.id === update.run.id);
        if (i >= 0) this.runs[i] = update.run;
        else this.runs.push(update.run);
        if (update.run.status === 'failed' && update.run.error) this.error = null;
        break;
      }
      case 'round-reset':
        this.streaming = null;
        break;
      case 'part':
        // Each round's working output replaces the last one's (the run view keeps them all).
        if (this.streaming?.round !== update.round) this.startRound(update.round);
        applyStreamPart(this.streaming!, update.part);
        break;
      case 'engine-progress':
        this.engineProgress = update.progress.done ? null : update.progress;
        break;
      case 'event':
        this.approvals = foldApprovals(this.approvals, update.event);
        this.delegation = foldDelegation(this.delegation, update.event);
        break;
    }
    this.applyMore(update);
  }

  /** What the page's own state takes from an update, after the common part. */
  protected abstract applyMore(update: RunUpdate): void;

  /** After a followed run's updates ended (or failed) and the live state was cleared. */
  protected abstract afterRun(): void | Promise<void>;

  protected startRound(round: number): void {
    this.streaming = emptyTurn(round);
  }

  /** Applies a run's updates until they end, then clears what was live. */
  protected async follow(updates: AsyncIterable<RunUpdate>): Promise<void> {
    this.#ticker ??= setInterval(() => (this.now = Date.now()), 1000);
    try {
      for await (const update of updates) this.apply(update);
    } catch (e) {
      this.error = describeError(e);
    } finally {
      this.streaming = null;
      this.engineProgress = null;
      this.approvals = [];
      this.delegation = NO_DELEGATION;
      if (this.#ticker && !this.busy) {
        clearInterval(this.#ticker);
        this.#ticker = null;
      }
      await this.afterRun();
    }
  }
}
