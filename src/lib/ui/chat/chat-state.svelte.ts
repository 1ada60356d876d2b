import type { HearthClient } from '$lib/client/hearth';
import type { HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import type { ImageRef } from '$lib/domain/model';
import { isTerminal, type RunId, type RunRecord } from '$lib/domain/run';
import type { EngineProgress, RunUpdate } from '$lib/domain/run-update';
import type { ChatMessageRow, ChatView } from '$lib/worker/protocol';
import { describeError } from '../errors';
import { ACTIVATION_PATH, asActivation } from '../run/activation-view';
import { applyStreamPart, emptyTurn, type StreamingTurn } from '../run/streaming-turn';
import { foldApprovals, type PendingApprovalView } from '../run/timeline';
import {
  DELEGATE_TOOL,
  delegatedTaskItems,
  foldDelegation,
  NO_DELEGATION,
  type DelegationProgress,
} from '../session/delegated-tasks';
import { delegateInputs, foldHandoff, type LiveHandoff } from './chat-model';

/** What a message's badge shows of its run's lore activation. */
export interface LoreSummary {
  /** Display names of the activated entries, in prompt order. */
  names: string[];
}

/**
 * The state of one chat page, fed by the client: the chat, its messages and runs, the live run's
 * streamed working output, and errors. In a Chat run the streamed text is the agent's working
 * text; the reply is the message it commits (a `chat-message` update).
 */
export class ChatState {
  view = $state<ChatView | null>(null);
  messages = $state<ChatMessageRow[]>([]);
  runs = $state<RunRecord[]>([]);
  streaming = $state<StreamingTurn | null>(null);
  /** A shell engine loading for the agent (the first Python call). */
  engineProgress = $state<EngineProgress | null>(null);
  /** The run the streamed output belongs to (for its link). */
  streamingRunId = $state<string | null>(null);
  error = $state<HearthError | null>(null);
  loading = $state(true);
  /** The person's message as sent, shown until the saved message arrives. */
  outgoing = $state<string | null>(null);
  /** An edit, delete or swipe is being saved. */
  saving = $state(false);
  now = $state(Date.now());
  /** Calls of the live run waiting for the person's approval. */
  approvals = $state.raw<PendingApprovalView[]>([]);
  /** The live run's delegated tasks, folded from its events. */
  delegation = $state.raw<DelegationProgress>(NO_DELEGATION);
  /** The agent the live run was last handed to, if it was. */
  handoff = $state.raw<LiveHandoff | null>(null);
  /** Arguments of the live run's streamed `agent_delegate` calls (the objective names a task). */
  delegateCalls = $state.raw<Readonly<Record<string, JsonObject>>>({});

  readonly activeRun = $derived(this.runs.find((r) => !isTerminal(r.status)) ?? null);
  readonly busy = $derived(this.activeRun !== null);
  /** What the chat page lists of the live run's delegated tasks. */
  readonly delegatedTasks = $derived(
    delegatedTaskItems(this.delegation, (callId) => this.delegateCalls[callId]),
  );

  #ticker: ReturnType<typeof setInterval> | null = null;
  // A cache of pending reads, not state: nothing renders from it.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  #lore = new Map<string, Promise<LoreSummary | null>>();
  #disposed = false;

  constructor(
    private readonly client: HearthClient,
    readonly chatId: string,
  ) {}

  async load(): Promise<void> {
    this.loading = true;
    try {
      await this.#refresh();
      const active = this.activeRun;
      if (active) void this.#follow(this.client.runs.watch(active.id));
    } catch (e) {
      this.error = describeError(e);
    } finally {
      this.loading = false;
    }
  }

  /** Sends the person's message (and their normalized `images`); an agent run writes the reply. */
  async send(text: string, images: ImageRef[] = []): Promise<void> {
    this.error = null;
    this.outgoing = images.length
      ? `${text}${text ? '\n' : ''}(${images.length === 1 ? 'an image' : `${images.length} images`})`
      : text;
    await this.#follow(this.client.chats.send(this.chatId, text, images));
  }

  /** A new swipe on the last assistant message (or a reply to the person's last message). */
  async regenerate(): Promise<void> {
    this.error = null;
    await this.#follow(this.client.chats.regenerate(this.chatId));
  }

  /** Extends the last reply in place; the agent continues from its end. */
  async continue(): Promise<void> {
    this.error = null;
    await this.#follow(this.client.chats.continue(this.chatId));
  }

  /** Continues an interrupted or retryably failed reply (D10), as the same run. */
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

  selectSwipe(index: number, swipeId: number): Promise<boolean> {
    return this.#save(async () =>
      this.#put(await this.client.chats.selectSwipe(this.chatId, index, swipeId)),
    );
  }

  /** Saves `text` as the shown swipe of message `index`; true when it was saved. */
  editMessage(index: number, text: string): Promise<boolean> {
    return this.#save(async () => this.#put(await this.client.chats.editMessage(this.chatId, index, text)));
  }

  /** The plain text a failed run wrote instead of committing, made the reply. */
  useDirectOutput(runId: RunId): Promise<boolean> {
    return this.#save(async () => this.#put(await this.client.chats.useDirectOutput(runId)));
  }

  /** Deletes message `index` (later messages move up: the chat is read again). */
  deleteMessage(index: number): Promise<boolean> {
    return this.#save(async () => {
      await this.client.chats.deleteMessage(this.chatId, index);
      await this.#refresh();
    });
  }

  /** null: the default persona. */
  setPersona(personaId: string | null): Promise<boolean> {
    return this.#save(async () => {
      await this.client.chats.update(this.chatId, { personaId });
      await this.#refresh();
    });
  }

  setConnection(connectionId: string): Promise<boolean> {
    return this.#save(async () => {
      const chat = await this.client.chats.update(this.chatId, { connectionId });
      if (this.view) this.view.chat = chat;
    });
  }

  /** The agent profile that replies in this chat from its next run on. */
  setProfile(profileId: string): Promise<boolean> {
    return this.#save(async () => {
      const chat = await this.client.chats.update(this.chatId, { profileId });
      if (this.view) this.view.chat = chat;
    });
  }

  /** The lorebooks attached to this chat only (global and character books are attached elsewhere). */
  setLorebooks(lorebookIds: string[]): Promise<boolean> {
    return this.#save(async () => {
      const chat = await this.client.chats.update(this.chatId, { lorebookIds });
      if (this.view) this.view.chat = chat;
    });
  }

  /**
   * The lore entries a run activated, read from its activation file once per run (null: none
   * recorded or unreadable). The chat view asks for a message's run when the message is seen.
   */
  loreOf(runId: string): Promise<LoreSummary | null> {
    let known = this.#lore.get(runId);
    if (!known) {
      known = this.client.runs
        .file(runId as RunId, ACTIVATION_PATH)
        .then((file) => {
          const activation = asActivation(JSON.parse(new TextDecoder().decode(file.bytes)));
          return activation ? { names: activation.entries.map((e) => e.displayName) } : null;
        })
        .catch(() => null);
      this.#lore.set(runId, known);
    }
    return known;
  }

  dispose(): void {
    this.#disposed = true;
    if (this.#ticker) clearInterval(this.#ticker);
    this.#ticker = null;
  }

  apply(update: RunUpdate): void {
    switch (update.type) {
      case 'run': {
        const i = this.runs.findIndex((r) => r.id === update.run.id);
        if (i >= 0) this.runs[i] = update.run;
        else this.runs.push(update.run);
        if (!isTerminal(update.run.status)) this.streamingRunId = update.run.id;
        if (update.run.status === 'failed' && update.run.error) this.error = null;
        break;
      }
      case 'chat-message':
        if (update.message.chatId !== this.chatId) break;
        this.#put(update.message);
        if (update.message.isUser) this.outgoing = null;
        // The committed reply replaces the working preview.
        else this.#endTurn();
        break;
      case 'round-reset':
        this.streaming = null;
        break;
      case 'part':
        this.#applyPart(update);
        break;
      case 'engine-progress':
        this.engineProgress = update.progress.done ? null : update.progress;
        break;
      case 'event': {
        const e = update.event;
        // The call's arguments are whole once it is requested; its task registers next.
        if (e.type === 'tool_call_requested' && e.payload.name === DELEGATE_TOOL && this.streaming)
          this.#keepDelegateCalls(this.streaming);
        this.approvals = foldApprovals(this.approvals, e);
        this.delegation = foldDelegation(this.delegation, e);
        this.handoff = foldHandoff(this.handoff, e);
        break;
      }
      case 'message':
        break;
    }
  }

  /** Puts a saved message in its place (replacing the one with its index). */
  #put(message: ChatMessageRow): void {
    const i = this.messages.findIndex((m) => m.index === message.index);
    if (i >= 0) this.messages[i] = message;
    else {
      const at = this.messages.findIndex((m) => m.index > message.index);
      if (at < 0) this.messages.push(message);
      else this.messages.splice(at, 0, message);
    }
  }

  async #refresh(): Promise<void> {
    const view = await this.client.chats.get(this.chatId);
    if (this.#disposed) return;
    this.view = view;
    this.messages = view.messages;
    // Keep what a live run reported if the read raced it.
    this.runs = view.runs.map((r) => {
      const known = this.runs.find((k) => k.id === r.id);
      return known && known.updatedAt > r.updatedAt ? known : r;
    });
  }

  async #save(work: () => Promise<void>): Promise<boolean> {
    this.error = null;
    this.saving = true;
    try {
      await work();
      return true;
    } catch (e) {
      this.error = describeError(e);
      return false;
    } finally {
      this.saving = false;
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
      this.handoff = null;
      this.delegateCalls = {};
      this.streamingRunId = null;
      if (this.#ticker && !this.busy) {
        clearInterval(this.#ticker);
        this.#ticker = null;
      }
      // The stored chat is the truth: read it again (messages the stream did not carry, run records).
      if (!this.#disposed) {
        try {
          await this.#refresh();
        } catch (e) {
          this.error ??= describeError(e);
        }
      }
      this.outgoing = null;
    }
  }

  #applyPart({ round, part }: Extract<RunUpdate, { type: 'part' }>): void {
    // Each round's working output replaces the last one's (the run view keeps them all).
    if (this.streaming?.round !== round) {
      this.#endTurn();
      this.streaming = emptyTurn(round);
    }
    applyStreamPart(this.streaming, part);
  }

  /** Clears the working preview, keeping the delegate calls it streamed (they name tasks). */
  #endTurn(): void {
    if (this.streaming) this.#keepDelegateCalls(this.streaming);
    this.streaming = null;
  }

  #keepDelegateCalls(turn: StreamingTurn): void {
    const found = delegateInputs(turn.toolCalls);
    if (Object.keys(found).length) this.delegateCalls = { ...this.delegateCalls, ...found };
  }
}
