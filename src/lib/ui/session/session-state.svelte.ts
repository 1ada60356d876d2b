import type { HearthClient } from '$lib/client/hearth';
import type { HearthError } from '$lib/domain/errors';
import type { ContentPart, ImageRef, Usage } from '$lib/domain/model';
import { addUsage, isTerminal, type RunId, type RunRecord } from '$lib/domain/run';
import type { EngineProgress, RunUpdate } from '$lib/domain/run-update';
import type { SessionMessage, SessionRecord } from '$lib/domain/session';
import { describeError } from '../errors';
import { applyStreamPart, emptyTurn, type StreamingTurn } from '../run/streaming-turn';
import { foldApprovals, type PendingApprovalView } from '../run/timeline';
import {
  delegatedTaskItems,
  foldDelegation,
  NO_DELEGATION,
  type DelegationProgress,
} from './delegated-tasks';

type ToolResultPart = Extract<ContentPart, { type: 'tool-result' }>;

/** Journal events after which the workspace panel reloads. */
const CHANGES_FILES = new Set([
  'workspace_file_written',
  'workspace_patch_applied',
  'workspace_shell_changed',
]);

/** The state of one session page, fed by the client: history, the live run, and errors. */
export class SessionState {
  session = $state<SessionRecord | null>(null);
  messages = $state<SessionMessage[]>([]);
  runs = $state<RunRecord[]>([]);
  streaming = $state<StreamingTurn | null>(null);
  error = $state<HearthError | null>(null);
  loading = $state(true);
  /** Bumped whenever workspace files may have changed. */
  workspaceVersion = $state(0);
  /** A shell engine downloading for the agent (the first Python call). */
  engineProgress = $state<EngineProgress | null>(null);
  now = $state(Date.now());
  /** Calls of the live run waiting for the person's approval. */
  approvals = $state.raw<PendingApprovalView[]>([]);
  /** The live run's delegated tasks, folded from its events. */
  delegation = $state.raw<DelegationProgress>(NO_DELEGATION);

  readonly activeRun = $derived(this.runs.find((r) => !isTerminal(r.status)) ?? null);
  readonly busy = $derived(this.activeRun !== null);
  /** Token usage summed over every run of the session. */
  readonly usage = $derived(this.runs.reduce((sum, r) => addUsage(sum, r.usage), {} as Usage));
  readonly results = $derived(
    // Rebuilt whole on every change, never mutated: a plain Map is enough.
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    new Map(
      this.messages.flatMap((m) =>
        m.parts
          .filter((p): p is ToolResultPart => p.type === 'tool-result')
          .map((p) => [p.callId, p] as const),
      ),
    ),
  );
  /** What the Session page lists of the live run's delegated tasks. */
  readonly delegatedTasks = $derived(
    delegatedTaskItems(this.delegation, (callId) => {
      for (let i = this.messages.length - 1; i >= 0; i--) {
        const part = this.messages[i]!.parts.find((p) => p.type === 'tool-call' && p.callId === callId);
        if (part?.type === 'tool-call') return part.input;
      }
      return undefined;
    }),
  );

  #ticker: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly client: HearthClient,
    readonly sessionId: string,
  ) {}

  async load(): Promise<void> {
    this.loading = true;
    try {
      const { session, messages, runs } = await this.client.sessions.get(this.sessionId);
      this.session = session;
      this.messages = messages;
      this.runs = runs;
      const active = this.activeRun;
      if (active) void this.#follow(this.client.runs.watch(active.id));
    } catch (e) {
      this.error = describeError(e);
    } finally {
      this.loading = false;
    }
  }

  /** `images`: the person's, normalized (`images.normalize`). */
  async send(text: string, images: ImageRef[] = []): Promise<void> {
    this.error = null;
    await this.#follow(this.client.sessions.send(this.sessionId, text, images));
  }

  /** Continues an interrupted or retryably failed run (D10). */
  async resume(runId: RunId): Promise<void> {
    this.error = null;
    await this.#follow(this.client.runs.resume(runId));
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

  async setConnection(connectionId: string): Promise<void> {
    try {
      this.session = await this.client.sessions.update(this.sessionId, { connectionId });
    } catch (e) {
      this.error = describeError(e);
    }
  }

  /** An empty title is refused by keeping the one there is. */
  async rename(title: string): Promise<boolean> {
    if (!title.trim()) return false;
    try {
      this.session = await this.client.sessions.update(this.sessionId, { title: title.trim() });
      return true;
    } catch (e) {
      this.error = describeError(e);
      return false;
    }
  }

  dispose(): void {
    if (this.#ticker) clearInterval(this.#ticker);
  }

  /** The session record again: a run's start titles a new session after its first message. */
  async #reloadRecord(): Promise<void> {
    try {
      this.session = (await this.client.sessions.get(this.sessionId)).session;
    } catch (e) {
      this.error ??= describeError(e);
    }
  }

  async #follow(updates: AsyncIterable<RunUpdate>): Promise<void> {
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
      this.workspaceVersion++;
      void this.#reloadRecord();
      if (this.#ticker && !this.busy) {
        clearInterval(this.#ticker);
        this.#ticker = null;
      }
    }
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
      case 'message':
        if (!this.messages.some((m) => m.index === update.message.index)) this.messages.push(update.message);
        if (update.message.role === 'assistant') {
          this.streaming = null;
          void this.#reloadRecord();
        }
        break;
      case 'round-reset':
        this.streaming = null;
        break;
      case 'part':
        this.#applyPart(update);
        break;
      case 'event':
        if (CHANGES_FILES.has(update.event.type)) this.workspaceVersion++;
        this.approvals = foldApprovals(this.approvals, update.event);
        this.delegation = foldDelegation(this.delegation, update.event);
        break;
      case 'engine-progress':
        this.engineProgress = update.progress.done ? null : update.progress;
        break;
    }
  }

  #applyPart({ round, part }: Extract<RunUpdate, { type: 'part' }>): void {
    // Each round's working output replaces the last one's (the run view keeps them all).
    if (this.streaming?.round !== round) this.streaming = emptyTurn(round);
    applyStreamPart(this.streaming, part);
  }
}
