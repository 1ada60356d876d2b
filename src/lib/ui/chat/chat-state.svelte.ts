import { memoryFromBudget } from '$lib/chat/prompt/budget';
import type { HearthClient } from '$lib/client/hearth';
import type { JsonObject } from '$lib/domain/json';
import type { ImageRef } from '$lib/domain/model';
import { isTerminal, type RunId } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { AuthorsNote, ChatMessageRow, ChatView } from '$lib/worker/protocol';
import { describeError } from '../errors';
import { ACTIVATION_PATH, asActivation } from '../run/activation-view';
import { LiveRunState } from '../run/live-run.svelte';
import type { StreamingTurn } from '../run/streaming-turn';
import { DELEGATE_TOOL, delegatedTaskItems } from '../session/delegated-tasks';
import { delegateInputs, foldHandoff, type LiveHandoff } from './chat-model';

/** How many messages one read from storage brings (the conversation reads pages as it scrolls). */
export const PAGE_SIZE = 50;

/** What a message's badge shows of its run's lore activation. */
export interface LoreSummary {
  /** Display names of the activated entries, in prompt order. */
  names: string[];
}

/**
 * The state of one chat page, fed by the client: the chat, the loaded window of its messages (a
 * run of consecutive indexes, read a page at a time around what the person reads, never the
 * whole chat), its runs, the live run's streamed working output, and errors. In a Chat run the streamed text is the agent's working
 * text; the reply is the message it commits (a `chat-message` update).
 */
export class ChatState extends LiveRunState {
  view = $state<ChatView | null>(null);
  /** The loaded window of the chat's messages, in index order, without gaps. */
  messages = $state<ChatMessageRow[]>([]);
  /** How many messages the chat has. */
  total = $state(0);
  /**
   * The last change to `messages` put older ones in front: the view keeps the reading position
   * from the end (a virtual list's "shift" mode) for exactly that change.
   */
  prepended = $state(false);
  /** A page is being read. */
  paging = $state(false);
  readonly hasOlder = $derived((this.messages[0]?.index ?? 0) > 0);
  /** The window reaches the chat's newest message. */
  readonly atEnd = $derived((this.messages.at(-1)?.index ?? -1) >= this.total - 1);
  /** Where the model's memory begins: the oldest message the newest reply's prompt held (null: all). */
  memoryFrom = $state<number | null>(null);
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
    // A reply goes after the newest message: show it, wherever the person was reading.
    if (!this.atEnd) await this.showLatest();
    this.outgoing = images.length
      ? `${text}${text ? '\n' : ''}(${images.length === 1 ? 'an image' : `${images.length} images`})`
      : text;
    await this.follow(this.client.chats.send(this.chatId, text, images));
  }

  /** Reads the page before the window; false when there is none or a read is under way. */
  loadOlder(): Promise<boolean> {
    const first = this.messages[0]?.index ?? 0;
    if (first <= 0) return Promise.resolve(false);
    return this.#page(Math.max(0, first - PAGE_SIZE), first, (rows) => {
      this.prepended = true;
      this.messages = [...rows, ...this.messages];
    });
  }

  /** Reads the page after the window; false when it reaches the end or a read is under way. */
  loadNewer(): Promise<boolean> {
    if (this.atEnd) return Promise.resolve(false);
    const next = (this.messages.at(-1)?.index ?? -1) + 1;
    return this.#page(next, next + PAGE_SIZE, (rows) => {
      this.prepended = false;
      this.messages = [...this.messages, ...rows];
    });
  }

  /** Replaces the window with the page around message `index` (a find hit, the first message). */
  showAround(index: number): Promise<boolean> {
    const from = Math.max(0, Math.min(index - PAGE_SIZE / 2, this.total - PAGE_SIZE));
    return this.#page(from, from + PAGE_SIZE, (rows) => {
      this.prepended = false;
      this.messages = rows;
    });
  }

  /** Replaces the window with the newest page. */
  async showLatest(): Promise<void> {
    const view = await this.client.chats.get(this.chatId);
    if (this.#disposed) return;
    this.#show(view, view.messages);
  }

  /** Indexes of the messages whose shown text contains `text`, oldest first. */
  find(text: string): Promise<number[]> {
    return this.client.chats.find(this.chatId, text);
  }

  async #page(from: number, to: number, apply: (rows: ChatMessageRow[]) => void): Promise<boolean> {
    if (this.paging) return false;
    this.paging = true;
    try {
      const rows = await this.client.chats.messages(this.chatId, from, to);
      if (this.#disposed || rows.length === 0) return false;
      apply(rows);
      return true;
    } catch (e) {
      this.error = describeError(e);
      return false;
    } finally {
      this.paging = false;
    }
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

  /** The preset that builds this chat's replies' prompts from its next run on. */
  setPreset(presetId: string): Promise<boolean> {
    return this.#save(async () => {
      const chat = await this.client.chats.update(this.chatId, { presetId });
      if (this.view) this.view.chat = chat;
    });
  }

  /** The chat's author's note from its next reply on; resolves to the error's message, or null. */
  async setAuthorsNote(note: AuthorsNote): Promise<string | null> {
    try {
      const chat = await this.client.chats.setAuthorsNote(this.chatId, note);
      if (this.view) this.view.chat = chat;
      return null;
    } catch (e) {
      return describeError(e).message;
    }
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
        if (e.type === 'chat_prompt_assembled') this.memoryFrom = memoryFromBudget(e.payload.history);
        break;
      }
    }
  }

  /**
   * Puts a saved message in its place: replacing the one with its index, or after the window's
   * last when it is the next (a message beyond the loaded window is read when scrolled to).
   */
  #put(message: ChatMessageRow): void {
    this.total = Math.max(this.total, message.index + 1);
    const first = this.messages[0]?.index ?? 0;
    const i = message.index - first;
    if (i >= 0 && i < this.messages.length) this.messages[i] = message;
    else if (i === this.messages.length) {
      this.prepended = false;
      this.messages.push(message);
    }
  }

  /**
   * Reads the chat again: the newest page and the same older messages the window held, when it
   * reached the end; the same range otherwise (a delete moves later messages up).
   */
  async #refresh(): Promise<void> {
    const view = await this.client.chats.get(this.chatId);
    const newest = view.messages[0]?.index ?? 0;
    const wasAtEnd = this.atEnd;
    const from = Math.min(this.messages[0]?.index ?? newest, newest);
    const to = wasAtEnd ? newest : Math.min((this.messages.at(-1)?.index ?? 0) + 1, view.messageCount);
    const rows: ChatMessageRow[] = [];
    for (let at = from; at < to; at += PAGE_SIZE * 4)
      rows.push(...(await this.client.chats.messages(this.chatId, at, Math.min(to, at + PAGE_SIZE * 4))));
    if (this.#disposed) return;
    this.#show(view, wasAtEnd ? [...rows, ...view.messages] : rows);
  }

  #show(view: ChatView, messages: ChatMessageRow[]): void {
    this.view = view;
    this.memoryFrom = view.memoryFrom;
    this.total = view.messageCount;
    this.prepended = false;
    this.messages = messages;
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
