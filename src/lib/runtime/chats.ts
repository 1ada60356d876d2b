import {
  activateWorldInfo,
  type Activation,
  type ActivationBook,
  type LorebookScope,
} from '$lib/chat/activation';
import { exportChatJsonl, messageRole, parseChatJsonl } from '$lib/chat/chat-jsonl';
import type { Sandbox } from '$lib/ports/sandbox';
import type { MacroContext } from '$lib/chat/macros';
import {
  exportFileName,
  type ChatMessageRow,
  type ChatRecord,
  type CharacterRecord,
} from '$lib/chat/records';
import { greetingMessage, scanMessagesOf } from '$lib/chat/transcript';
import { exampleCharacter } from '$lib/chat/example';
import { DEMO_CONNECTION, type Connection } from '$lib/domain/connection';
import { hearthError, HearthFailure, type HearthError } from '$lib/domain/errors';
import { DEFAULT_WRITER_ID, migrateProfile, resolveProfile, type ProfileV5 } from '$lib/domain/profile';
import { ok } from '$lib/domain/result';
import type { RunId, RunRecord } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { ToolId } from '$lib/domain/tool-id';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import { READ_ONLY_MOUNTS } from '$lib/domain/workspace-roots';
import type { CharacterStore, LorebookStore, PersonaStore } from '$lib/ports/characters';
import type { ChatContext, ChatMessage as ToolChatMessage } from '$lib/ports/chat-context';
import type { ChatStore } from '$lib/ports/chats';
import type { Clock, Ids } from '$lib/ports/clock';
import type { Journal } from '$lib/ports/journal';
import type { Locks } from '$lib/ports/locks';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { ProfileStore } from '$lib/ports/profiles';
import type { RunBus } from '$lib/ports/run-bus';
import type { ConnectionStore, RunStore, SettingsStore } from '$lib/ports/stores';
import type { WorkspaceStore } from '$lib/ports/workspace';
import type { BuiltinTool } from '$lib/tools/tool';
import { assembleChatPrompt } from './chat-prompt';
import { rootInvocation } from './invocation';
import { projectPersist, promotePersist } from './persist';
import { runChatLoop, type ChatRunEnd } from './chat-run';
import { AsyncQueue, type RunFeed } from './run-feed';
import { RunRecorder } from './run-recorder';
import { DEFAULT_CONNECTION_KEY, runLock } from './sessions';
import { prepareBindings } from './tool-bindings';
import { buildCatalog, builtinSource } from './tool-catalog';
import { createSnapshot } from './tool-snapshot';

export interface ChatServiceDeps {
  chats: ChatStore;
  characters: CharacterStore;
  personas: PersonaStore;
  lorebooks: LorebookStore;
  runs: RunStore;
  journal: Journal;
  connections: ConnectionStore;
  settings: SettingsStore;
  profiles: ProfileStore;
  workspaces: WorkspaceStore;
  locks: Locks;
  gatewayFor: (connection: Connection) => ModelGateway;
  tools: readonly BuiltinTool[];
  clock: Clock;
  ids: Ids;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Shared with the Session service, so `runs.watch` follows either kind of run. */
  feed: RunFeed;
  bus?: RunBus;
  /** Runs `workspace_shell` calls. */
  sandbox?: Sandbox;
}

const EXAMPLE_SEEDED_KEY = 'exampleCharacterSeeded';

export const chatRunWorkspaceKey = (chatId: string, runId: string) => `chats/${chatId}/runs/${runId}`;

/** Saves what the run answers (the person's message, if any) and says where the reply goes. */
type Prepare = (
  rows: ChatMessageRow[],
  persona: { name: string },
) => Promise<{
  history: ChatMessageRow[];
  published: ChatMessageRow | null;
  target: ReplyTarget;
}>;

/** Where a Chat run's reply goes: a new message, a new swipe of it, or more of it (continue). */
type ReplyTarget = { kind: 'new' } | { kind: 'swipe'; index: number } | { kind: 'continue'; index: number };

interface ActiveChatRun {
  controller: AbortController;
  recorder: RunRecorder;
  done: Promise<void>;
}

/**
 * Chats with characters (spec §1.3): SillyTavern-shaped messages with swipes; each reply is
 * written by a Chat run that drafts in its own workspace and publishes by commit.
 */
export class ChatService {
  readonly #active = new Map<string, ActiveChatRun>();

  constructor(private readonly deps: ChatServiceDeps) {
    deps.bus?.listen((m) => {
      if (m.type === 'cancel' && this.#active.has(m.runId)) void this.cancel(m.runId as RunId);
    });
  }

  /**
   * A fresh install gets one example character with a small lorebook (issue 7 item 9), once:
   * deleting it later does not bring it back.
   */
  async seedExample(): Promise<void> {
    if (await this.deps.settings.get<boolean>(EXAMPLE_SEEDED_KEY)) return;
    const existing = await this.deps.characters.list();
    if (existing.records.length === 0 && existing.issues.length === 0) {
      const { card, lorebook } = exampleCharacter();
      const now = this.deps.clock.now();
      const lorebookId = this.deps.ids.contentId('lb');
      await this.deps.characters.put(
        {
          id: this.deps.ids.contentId('chr'),
          card,
          lorebookIds: [lorebookId],
          createdAt: now,
          updatedAt: now,
        },
        { lorebooks: [{ id: lorebookId, book: lorebook, createdAt: now, updatedAt: now }] },
      );
    }
    await this.deps.settings.set(EXAMPLE_SEEDED_KEY, true);
  }

  async list(characterId: string) {
    const chats = await this.deps.chats.list(characterId);
    return Promise.all(
      chats.map(async (chat) => {
        const messages = await this.deps.chats.messages(chat.id);
        return {
          ...chat,
          messageCount: messages.length,
          lastMessage: messages.at(-1)?.mes.slice(0, 200) ?? null,
        };
      }),
    );
  }

  async create(characterId: string, personaId: string | null = null): Promise<ChatRecord> {
    const character = await this.#character(characterId);
    const persona = await this.#persona(personaId);
    const now = this.deps.clock.now();
    const chat: ChatRecord = {
      id: this.deps.ids.contentId('chat'),
      characterId,
      title: `${character.card.name} · ${new Date(now).toISOString().slice(0, 10)}`,
      personaId,
      lorebookIds: [],
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.chats.put(chat);
    const greeting = greetingMessage(
      character.card,
      this.#macros(character, persona, chat.id, now),
      isoDate(now),
    );
    if (greeting) await this.deps.chats.putMessages([{ ...greeting, chatId: chat.id, index: 0 }]);
    return chat;
  }

  async get(chatId: string) {
    const chat = await this.#chat(chatId);
    const character = await this.#character(chat.characterId);
    const persona = await this.#persona(chat.personaId);
    return {
      chat,
      character: { id: character.id, name: character.card.name, avatar: character.avatar ?? null },
      persona: { id: persona.id, name: persona.name, avatar: persona.avatar ?? null },
      messages: await this.deps.chats.messages(chatId),
      runs: await this.deps.runs.listForChat(chatId),
    };
  }

  async update(
    chatId: string,
    patch: { title?: string; personaId?: string | null; connectionId?: string; lorebookIds?: string[] },
  ): Promise<ChatRecord> {
    const chat = await this.#chat(chatId);
    const next = { ...chat, ...patch, updatedAt: this.deps.clock.now() };
    await this.deps.chats.put(next);
    return next;
  }

  async delete(chatId: string): Promise<void> {
    const held = await this.deps.locks.tryWithLock(runLock({ kind: 'chat', chatId }), async () => {
      await this.deps.chats.delete(chatId);
      const removed = await this.deps.workspaces.delete(`chats/${chatId}`);
      if (!removed.ok) throw new HearthFailure(removed.error);
    });
    if (!held.acquired) throw busy('Stop the reply in progress before deleting this chat.');
  }

  async editMessage(chatId: string, index: number, text: string): Promise<ChatMessageRow> {
    const row = await this.#message(chatId, index);
    const swipes = row.swipes.map((s, i) => (i === row.swipeId ? { ...s, text } : s));
    const next = { ...row, mes: text, swipes };
    await this.deps.chats.putMessages([next]);
    return next;
  }

  async deleteMessage(chatId: string, index: number): Promise<void> {
    await this.#message(chatId, index);
    await this.deps.chats.deleteMessage(chatId, index);
  }

  async selectSwipe(chatId: string, index: number, swipeId: number): Promise<ChatMessageRow> {
    const row = await this.#message(chatId, index);
    const swipe = row.swipes[swipeId];
    if (!swipe)
      throw new HearthFailure(
        hearthError('chat.message_not_found', `Message ${index} has no swipe ${swipeId + 1}.`),
      );
    const next = { ...row, swipeId, mes: swipe.text };
    await this.deps.chats.putMessages([next]);
    return next;
  }

  async importJsonl(characterId: string, fileName: string, bytes: Uint8Array) {
    await this.#character(characterId);
    const parsed = parseChatJsonl(new TextDecoder().decode(bytes));
    if (!parsed.ok) throw new HearthFailure(parsed.error);
    const now = this.deps.clock.now();
    const chat: ChatRecord = {
      id: this.deps.ids.contentId('chat'),
      characterId,
      title: fileName.replace(/\.jsonl$/i, '') || 'Imported chat',
      personaId: null,
      lorebookIds: [],
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.chats.put(chat);
    await this.deps.chats.putMessages(
      parsed.value.transcript.messages.map((m, index) => ({ ...m, chatId: chat.id, index })),
    );
    return { chat, problems: parsed.value.problems };
  }

  async exportJsonl(chatId: string) {
    const chat = await this.#chat(chatId);
    const character = await this.#character(chat.characterId);
    const persona = await this.#persona(chat.personaId);
    const messages = await this.deps.chats.messages(chatId);
    const text = exportChatJsonl({
      header: {
        userName: persona.name,
        characterName: character.card.name,
        createDate: isoDate(chat.createdAt),
        chatMetadata: {},
        unknown: {},
      },
      messages: messages.map(({ chatId: _c, index: _i, ...m }) => m),
    });
    return { fileName: exportFileName(chat.title, 'jsonl', 'chat'), bytes: new TextEncoder().encode(text) };
  }

  /** The person's message, then a Chat run that writes the reply as a new message. */
  send(chatId: string, text: string): AsyncIterable<RunUpdate> {
    return this.#stream(chatId, async (rows, persona) => {
      const now = this.deps.clock.now();
      const row: ChatMessageRow = {
        chatId,
        index: rows.length,
        name: persona.name,
        isUser: true,
        isSystem: false,
        sendDate: isoDate(now),
        mes: text,
        extra: {},
        swipes: [],
        swipeId: 0,
        unknown: {},
      };
      await this.deps.chats.putMessages([row]);
      return { history: [...rows, row], published: row, target: { kind: 'new' } };
    });
  }

  /** D12: a new swipe on the last assistant message (or a reply to the person's last message). */
  regenerate(chatId: string): AsyncIterable<RunUpdate> {
    return this.#stream(chatId, async (rows) => {
      const last = rows.at(-1);
      if (last && !last.isUser && !last.isSystem) {
        return { history: rows.slice(0, -1), published: null, target: { kind: 'swipe', index: last.index } };
      }
      return { history: rows, published: null, target: { kind: 'new' } };
    });
  }

  /** More of the last reply: the run's commit is appended to it (SillyTavern's Continue). */
  continue(chatId: string): AsyncIterable<RunUpdate> {
    return this.#stream(chatId, async (rows) => {
      const last = rows.at(-1);
      if (!last || last.isUser || last.isSystem) {
        throw new HearthFailure(
          hearthError('chat.message_not_found', 'There is no reply of the character to continue.'),
        );
      }
      return { history: rows, published: null, target: { kind: 'continue', index: last.index } };
    });
  }

  async cancel(runId: RunId): Promise<void> {
    const active = this.#active.get(runId);
    if (!active || active.controller.signal.aborted) return;
    await active.recorder.emit({ type: 'run_cancel_requested', payload: null });
    await active.recorder.setStatus('cancelling');
    active.controller.abort();
    await active.done;
  }

  /** A file a chat run stored, from its own workspace (the run view reads these). */
  async runFile(run: RunRecord, path: WorkspacePath): Promise<Uint8Array> {
    if (run.target.kind !== 'chat')
      throw new HearthFailure(hearthError('agent.not_found', 'Not a chat run.'));
    const ws = await this.deps.workspaces.open(chatRunWorkspaceKey(run.target.chatId, run.id));
    if (!ws.ok) throw new HearthFailure(ws.error);
    const read = await ws.value.read(path);
    if (!read.ok) throw new HearthFailure(read.error);
    return read.value;
  }

  #stream(chatId: string, prepare: Prepare): AsyncIterable<RunUpdate> {
    const queue = new AsyncQueue<RunUpdate>();
    void this.#drive(chatId, queue, prepare).catch((e) => queue.fail(e));
    return queue;
  }

  async #drive(chatId: string, queue: AsyncQueue<RunUpdate>, prepare: Prepare): Promise<void> {
    const chat = await this.#chat(chatId);
    const character = await this.#character(chat.characterId);
    const persona = await this.#persona(chat.personaId);
    const connection = await this.#connectionOf(chat);
    const held = await this.deps.locks.tryWithLock(runLock({ kind: 'chat', chatId }), async () => {
      const now = this.deps.clock.now();
      const run: RunRecord = {
        id: this.deps.ids.runId() as RunId,
        target: { kind: 'chat', chatId },
        connectionId: connection.id,
        model: connection.model,
        status: 'created',
        rounds: 0,
        usage: {},
        createdAt: now,
        updatedAt: now,
      };
      await this.deps.runs.put(run);
      const unsubscribe = this.deps.feed.subscribe(run.id, (u) => queue.push(u));
      const recorder = new RunRecorder(run, {
        runs: this.deps.runs,
        journal: this.deps.journal,
        clock: this.deps.clock,
        publish: (u) => {
          this.deps.feed.publish(run.id, u);
          this.deps.bus?.post({ type: 'update', runId: run.id, update: u });
        },
      });
      const controller = new AbortController();
      let finished!: () => void;
      const done = new Promise<void>((resolve) => (finished = resolve));
      this.#active.set(run.id, { controller, recorder, done });
      try {
        recorder.publish({ type: 'run', run });
        await recorder.emit({
          type: 'run_created',
          payload: { target: { ...run.target }, connectionId: connection.id, model: connection.model },
        });
        const rows = await this.deps.chats.messages(chatId);
        const { history, published, target } = await prepare(rows, persona);
        if (published) recorder.publish({ type: 'chat-message', message: published });
        await this.deps.chats.put({ ...chat, updatedAt: now });
        const end = await this.#execute(
          recorder,
          { chat, character, persona, connection, history, target },
          controller.signal,
        );
        await this.#finalize(recorder, end);
      } catch (e) {
        await this.#finalize(recorder, { kind: 'failed', error: toError(e), commits: 0 });
      } finally {
        // Whatever the run's shell left in its sandbox ends with the run.
        this.deps.sandbox?.release?.(chatRunWorkspaceKey(chatId, run.id));
        this.#active.delete(run.id);
        unsubscribe();
        queue.close();
        finished();
      }
    });
    if (!held.acquired) throw busy('This chat already has a reply in progress (perhaps in another tab).');
  }

  async #execute(
    recorder: RunRecorder,
    input: {
      chat: ChatRecord;
      character: CharacterRecord;
      persona: { id: string | null; name: string; description: string };
      connection: Connection;
      history: ChatMessageRow[];
      target: ReplyTarget;
    },
    signal: AbortSignal,
  ): Promise<ChatRunEnd> {
    const run = recorder.run;
    await recorder.setStatus('initializing_workspace');
    const opened = await this.deps.workspaces.open(chatRunWorkspaceKey(input.chat.id, run.id));
    if (!opened.ok) throw new HearthFailure(opened.error);
    const workspace = opened.value;
    await recorder.setStatus('assembling_context');
    const profile = await this.#profile();
    const now = this.deps.clock.now();
    const macros = this.#macros(input.character, input.persona, input.chat.id, now, run.id);
    const activation = activateWorldInfo({
      books: await this.#books(input.character, input.chat),
      messages: scanMessagesOf(input.history),
      seed: run.id,
      timestampMs: now,
      character: { names: [input.character.card.name], tags: input.character.card.tags },
    });
    const write = async (path: string, value: unknown) => {
      const written = await workspace.write(
        path as WorkspacePath,
        new TextEncoder().encode(JSON.stringify(value, null, 2)),
      );
      if (!written.ok) throw new HearthFailure(written.error);
    };
    await write('run/input/resolved_profile.json', profile);
    await write('run/input/worldinfo_activation.json', activation);
    // persist/: the state of the message this reply follows (tools.md §12.4).
    const chatWs = await this.deps.workspaces.open(`chats/${input.chat.id}`);
    if (!chatWs.ok) throw new HearthFailure(chatWs.error);
    const baseStateId = persistStateOf(input.history);
    const baseFiles = await projectPersist(chatWs.value, workspace, baseStateId);
    await recorder.emit({
      type: 'persistent_projection_initialized',
      payload: { roots: ['persist'], baseStateId, files: baseFiles.length },
    });
    await recorder.emit({ type: 'profile_resolved', payload: { profileId: profile.id, source: profile.id } });

    const catalog = buildCatalog([builtinSource(this.deps.tools)]);
    if (!catalog.ok) throw new HearthFailure(catalog.error);
    const { bindings } = prepareBindings(
      catalog.value,
      {
        allow: profile.tools.allow as ToolId[],
        deny: profile.tools.deny as ToolId[],
        toolDescriptions: profile.tools.toolDescriptions,
      },
      'chat',
    );
    const snapshot = createSnapshot(`snapshot_${run.id}`, bindings, 'run_finish_allowed');
    if (!snapshot.ok) throw new HearthFailure(snapshot.error);
    const bodyPath =
      profile.output?.artifacts.find((a) => a.target === 'messageBody')?.path ?? 'output/main.md';
    const prompt = assembleChatPrompt({
      card: input.character.card,
      persona: input.persona,
      history: input.history,
      activation,
      agentSystemPrompt: profile.instructions.agentSystemPrompt,
      historyLimit: profile.context.initialChatHistoryMessages,
      includeActivatedWorldInfo: profile.context.includeActivatedWorldInfo,
      messageBodyPath: bodyPath,
      macros,
      continuation: input.target.kind === 'continue',
    });

    let messageIndex: number | null = null;
    let swipeId = 0;
    /**
     * Puts the committed text in the chat (runtime.md §6.5): a new message, a new swipe, or the
     * continuation of the last message. Each swipe carries the agent metadata of its commit.
     */
    const original =
      input.target.kind === 'continue'
        ? (await this.deps.chats.messages(input.chat.id))[input.target.index]!
        : null;
    const publish = async (text: string, commit: { checkpointId: string; path: string }) => {
      const rows = await this.deps.chats.messages(input.chat.id);
      const sendDate = isoDate(this.deps.clock.now());
      const hearth = {
        runId: run.id,
        profileId: profile.id,
        checkpointId: commit.checkpointId,
        path: commit.path,
      };
      let row: ChatMessageRow;
      if (original) {
        const full = original.mes + text;
        const base = rows[original.index]!;
        const swipes = base.swipes.map((s, i) =>
          i === base.swipeId ? { ...s, text: full, extra: { ...s.extra, hearth } } : s,
        );
        row = { ...base, mes: full, swipes };
        messageIndex = base.index;
        swipeId = base.swipeId;
      } else if (messageIndex === null && input.target.kind === 'swipe') {
        const base = rows[input.target.index]!;
        const swipes = base.swipes.length
          ? base.swipes
          : [{ text: base.mes, sendDate: base.sendDate, extra: base.extra, info: {} }];
        swipeId = swipes.length;
        row = {
          ...base,
          mes: text,
          swipes: [...swipes, { text, sendDate, extra: { hearth }, info: {} }],
          swipeId,
        };
        messageIndex = base.index;
      } else if (messageIndex === null) {
        messageIndex = rows.length;
        row = {
          chatId: input.chat.id,
          index: messageIndex,
          name: input.character.card.name,
          isUser: false,
          isSystem: false,
          sendDate,
          mes: text,
          extra: { hearth },
          swipes: [{ text, sendDate, extra: { hearth }, info: {} }],
          swipeId: 0,
          unknown: {},
        };
      } else {
        const base = rows[messageIndex]!;
        row = {
          ...base,
          mes: text,
          swipes: base.swipes.map((s, i) => (i === swipeId ? { ...s, text, extra: { hearth } } : s)),
        };
      }
      await this.deps.chats.putMessages([row]);
      recorder.publish({ type: 'chat-message', message: row });
      return { messageIndex: messageIndex!, swipeId };
    };

    const invocation = rootInvocation(recorder, profile.id);
    await invocation.start();
    const end = await runChatLoop(
      run,
      {
        gateway: this.deps.gatewayFor(input.connection),
        snapshot: snapshot.value,
        workspace,
        roots: {
          visible: profile.workspace.visibleRoots,
          writable: profile.workspace.writableRoots,
          readOnly: [...READ_ONLY_MOUNTS],
        },
        recorder,
        clock: this.deps.clock,
        retry: profile.run.modelRetry,
        sleep: this.deps.sleep,
        sandbox: this.deps.sandbox,
        system: prompt.system,
        history: prompt.messages,
        chat: chatContext(input.history, activation),
        messageBodyPath: bodyPath,
        publish,
        newCommitId: () => this.deps.ids.contentId('commit'),
      },
      signal,
    );
    await invocation.end(end.kind);
    // Only a run that finished successfully publishes its persist/ (never a failed or stopped one).
    if (end.kind === 'completed' && messageIndex !== null) {
      const promoted = await promotePersist(chatWs.value, workspace, {
        runId: run.id,
        baseStateId,
        base: baseFiles,
      });
      await recorder.emit({
        type: 'persistent_changes_committed',
        payload: {
          stateId: promoted.stateId,
          baseStateId,
          changed: promoted.changed.map((f) => f.path),
          removed: promoted.removed,
        },
      });
      if (promoted.stateId) {
        const row = (await this.deps.chats.messages(input.chat.id))[messageIndex]!;
        const swipes = row.swipes.map((s, i) =>
          i === swipeId
            ? {
                ...s,
                extra: {
                  ...s.extra,
                  hearth: { ...(s.extra.hearth as object), persistStateId: promoted.stateId },
                },
              }
            : s,
        );
        const next = { ...row, swipes, extra: row.swipeId === swipeId ? swipes[swipeId]!.extra : row.extra };
        await this.deps.chats.putMessages([next]);
        recorder.publish({ type: 'chat-message', message: next });
      }
    }
    return end;
  }

  async #finalize(recorder: RunRecorder, end: ChatRunEnd): Promise<void> {
    if (end.kind === 'completed') {
      await recorder.setStatus('completed');
      await recorder.emit({ type: 'run_completed', payload: null });
    } else if (end.kind === 'cancelled') {
      await recorder.setStatus('cancelled');
      await recorder.emit({ type: 'run_cancelled', payload: { message: 'Stopped by the person.' } });
    } else if (end.commits > 0) {
      // Runtime.md §1.11: a failure after a confirmed commit keeps the committed reply.
      await recorder.setStatus('partial_success', { error: end.error });
      await recorder.emit({
        type: 'run_partial_success',
        level: 'warn',
        payload: {
          code: end.error.code,
          message: end.error.message,
          retryable: false,
          userRetryable: false,
          preservedCommitCount: end.commits,
        },
      });
    } else {
      await recorder.setStatus('failed', { error: end.error });
      await recorder.emit({
        type: 'run_failed',
        payload: {
          code: end.error.code,
          message: end.error.message,
          retryable: end.error.retryable === true,
          userRetryable: end.error.retryable === true || end.error.code === 'model.tool_call_required',
        },
      });
    }
  }

  async #books(character: CharacterRecord, chat: ChatRecord): Promise<ActivationBook[]> {
    const scoped: [string, LorebookScope][] = [
      ...(await this.deps.lorebooks.globalIds()).map((id) => [id, 'global'] as [string, LorebookScope]),
      ...character.lorebookIds.map((id) => [id, 'character'] as [string, LorebookScope]),
      ...chat.lorebookIds.map((id) => [id, 'chat'] as [string, LorebookScope]),
    ];
    const seen = new Set<string>();
    const books: ActivationBook[] = [];
    for (const [id, scope] of scoped) {
      if (seen.has(id)) continue;
      seen.add(id);
      const record = await this.deps.lorebooks.get(id);
      if (record) books.push({ world: record.book.name, scope, book: record.book });
    }
    return books;
  }

  async #profile(): Promise<ProfileV5> {
    const resolved = resolveProfile(DEFAULT_WRITER_ID, await this.deps.profiles.get(DEFAULT_WRITER_ID));
    if (!resolved)
      throw new HearthFailure(hearthError('agent.not_found', 'The Default Writer profile is missing.'));
    const migrated = migrateProfile(resolved.profile);
    if (!migrated.ok) throw new HearthFailure(migrated.error);
    return migrated.value;
  }

  #macros(
    character: CharacterRecord,
    persona: { name: string; description: string },
    chatId: string,
    now: number,
    seed = chatId,
  ): MacroContext {
    const card = character.card;
    return {
      user: persona.name,
      char: card.name,
      persona: persona.description,
      description: card.description,
      personality: card.personality,
      scenario: card.scenario,
      mesExamplesRaw: card.mesExample,
      seed,
      pickSeed: chatId,
      clock: { epochMs: now, utcOffsetMinutes: 0 },
    } as MacroContext;
  }

  /** The chat's own connection if it chose one (and it still exists), else the default one. */
  async #connectionOf(chat: ChatRecord): Promise<Connection> {
    const id =
      chat.connectionId ??
      (await this.deps.settings.get<string>(DEFAULT_CONNECTION_KEY)) ??
      DEMO_CONNECTION.id;
    if (id === DEMO_CONNECTION.id) return DEMO_CONNECTION;
    return (await this.deps.connections.get(id)) ?? DEMO_CONNECTION;
  }

  async #chat(id: string): Promise<ChatRecord> {
    const chat = await this.deps.chats.get(id);
    if (!chat) throw new HearthFailure(hearthError('chat.not_found', 'This chat no longer exists.'));
    return chat;
  }

  async #character(id: string): Promise<CharacterRecord> {
    const character = await this.deps.characters.get(id);
    if (!character)
      throw new HearthFailure(hearthError('character.not_found', 'This character no longer exists.'));
    return character;
  }

  async #persona(
    id: string | null,
  ): Promise<{ id: string | null; name: string; description: string; avatar?: Uint8Array }> {
    const chosen = id ?? (await this.deps.personas.defaultId());
    const persona = chosen ? await this.deps.personas.get(chosen) : undefined;
    return persona ?? { id: null, name: 'You', description: '' };
  }

  async #message(chatId: string, index: number): Promise<ChatMessageRow> {
    const row = (await this.deps.chats.messages(chatId)).find((m) => m.index === index);
    if (!row)
      throw new HearthFailure(
        hearthError('chat.message_not_found', `This chat has no message ${index + 1}.`),
      );
    return row;
  }

  isActive(runId: string): boolean {
    return this.#active.has(runId);
  }
}

/** The persistent state recorded on the newest character message's shown swipe (runtime.md §6.6). */
function persistStateOf(history: readonly ChatMessageRow[]): string | null {
  const last = history.findLast((m) => !m.isUser && !m.isSystem);
  const extra = last ? (last.swipes[last.swipeId]?.extra ?? last.extra) : undefined;
  const hearth = extra?.hearth;
  const id =
    typeof hearth === 'object' && hearth !== null && !Array.isArray(hearth)
      ? hearth.persistStateId
      : undefined;
  return typeof id === 'string' ? id : null;
}

/** What the chat tools read: the frozen input prefix and the frozen activation (tools.md §13.1-13.3). */
function chatContext(history: readonly ChatMessageRow[], activation: Activation): ChatContext {
  const toTool = (m: ChatMessageRow): ToolChatMessage => ({
    index: m.index,
    role: messageRole(m),
    name: m.name,
    text: m.mes,
    ...(m.sendDate !== null ? { sendDate: String(m.sendDate) } : {}),
  });
  return {
    inputMessageCount: history.length,
    messageCount: async () => ok(history.length),
    readMessages: async (indexes) => {
      const wanted = new Set(indexes);
      return ok(history.filter((m) => wanted.has(m.index)).map(toTool));
    },
    readBefore: async (end, limit) => ok(history.slice(Math.max(0, end - limit), end).map(toTool)),
    worldInfoActivation: async () => ok(activation as never),
  };
}

const isoDate = (ms: number) => new Date(ms).toISOString();
const busy = (message: string) => new HearthFailure(hearthError('agent.session_busy', message));
const toError = (e: unknown): HearthError =>
  e instanceof HearthFailure
    ? e.error
    : hearthError('agent.internal_error', e instanceof Error ? e.message : String(e));
