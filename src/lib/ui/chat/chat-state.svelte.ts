import type { HearthClient } from '$lib/client/hearth';
import type { JsonObject } from '$lib/domain/json';
import type { ImageRef } from '$lib/domain/model';
import { isTerminal, type RunId } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { ChatMessageRow, ChatView } from '$lib/worker/protocol';
import { describeError } from '../errors';
import { ACTIVATION_PATH, asActivation } from '../run/activation-view';
import { LiveRunState } from '../run/live-run.svelte';
import type { StreamingTurn } from '../run/streaming-turn';
import { DELEGATE_TOOL, delegatedTaskItems } from '../session/delegated-tasks';
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
export class ChatState extends LiveRunState {
  view = $state<ChatView | null>(null);
  messages = $state<ChatMessageRow[]>([]);
  /** The run the streamed output belongs to (for its link). */
  streamingRunId = $state<string | null>(null);
  loading = $state(true);
  /** The person's message as sent, shown until the saved message arrives. */
  outgoing = $state<string | null>(null);
  /** An edit, delete or swipe is being saved. */
  saving = $state(false);
  /** The agent the live run was last handed to, if it was. */
  handoff = $state.raw<LiveHandoff | null>(null);
  /** Arguments of the live run's streamed `agent_delegate` calls (the objective names a task). */
  delegateCalls = $state.raw<Readonly<Record<string, JsonObject>>>({});

  /** What the chat page lists of the live run's delegated tasks. */
  readonly delegatedTasks = $derived(
    delegatedTaskItems(this.delegation, (callId) => this.delegateCalls[callId]),
  );

  // A cache of pending reads, not state: nothing renders from it.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  #lore = new Map<string, Promise<LoreSummary | null>>();
  #disposed = false;

  constructor(
    client: HearthClient,
    readonly chatId: string,
  ) {
    super(client);
  }

  async load(): Promise<void> {
    this.loading = true;
    try {
      await this.#refresh();
      const active = this.activeRun;
      if (active) void this.follow(this.client.runs.watch(active.id));
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
    await this.follow(this.client.chats.send(this.chatId, text, images));
  }

  /** A new swipe on the last assistant message (or a reply to the person's last message). */
  async regenerate(): Promise<void> {
    this.error = null;
    await this.follow(this.client.chats.regenerate(this.chatId));
  }

  /** Extends the last reply in place; the agent continues from its end. */
  async continue(): Promise<void> {
    this.error = null;
    await this.follow(this.client.chats.continue(this.chatId));
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

  override dispose(): void {
    this.#disposed = true;
    super.dispose();
  }

  protected applyMore(update: RunUpdate): void {
    switch (update.type) {
      case 'run':
        if (!isTerminal(update.run.status)) this.streamingRunId = update.run.id;
        break;
      case 'chat-message':
        if (update.message.chatId !== this.chatId) break;
        this.#put(update.message);
        if (update.message.isUser) this.outgoing = null;
        // The committed reply replaces the working preview.
        else this.#endTurn();
        break;
      case 'event': {
        const e = update.event;
        // The call's arguments are whole once it is requested; its task registers next.
        if (e.type === 'tool_call_requested' && e.payload.name === DELEGATE_TOOL && this.streaming)
          this.#keepDelegateCalls(this.streaming);
        this.handoff = foldHandoff(this.handoff, e);
        break;
      }
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
    // Until the conversation view pages: the older pages too.
    let older: ChatMessageRow[] = [];
    for (let to = view.messages[0]?.index ?? 0; to > 0; to -= 200)
      older = [...(await this.client.chats.messages(this.chatId, Math.max(0, to - 200), to)), ...older];
    if (this.#disposed) return;
    this.view = view;
    this.messages = [...older, ...view.messages];
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

  protected async afterRun(): Promise<void> {
    this.handoff = null;
    this.delegateCalls = {};
    this.streamingRunId = null;
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

  protected override startRound(round: number): void {
    this.#endTurn();
    super.startRound(round);
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
