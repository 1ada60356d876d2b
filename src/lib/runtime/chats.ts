import {
  activateWorldInfo,
  type Activation,
  type ActivationBook,
  type LorebookScope,
} from '$lib/chat/activation';
import { chatTitleFromFileName, exportChatJsonl, messageRole, parseChatJsonl } from '$lib/chat/chat-jsonl';
import type { MacroContext } from '$lib/chat/macros';
import {
  exportFileName,
  type ChatMessageRow,
  type ChatPatch,
  type ChatRecord,
  type ChatSummary,
  type CharacterRecord,
  NO_PERSONA_NAME,
} from '$lib/chat/records';
import { greetingMessage, scanMessagesOf } from '$lib/chat/transcript';
import { EXAMPLE_CHARACTER_ID, EXAMPLE_LOREBOOK_ID, exampleCharacter } from '$lib/chat/example';
import { DEMO_CONNECTION, type Connection } from '$lib/domain/connection';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { RunEvent } from '$lib/domain/events';
import type { ImageRef, Usage } from '$lib/domain/model';
import { withImages } from '$lib/chat/media';
import { checkUserImages } from '$lib/domain/user-images';
import {
  DEFAULT_WRITER_ID,
  migrateProfile,
  resolveProfile,
  SESSION_PROFILE_ID,
  type ProfileV5,
} from '$lib/domain/profile';
import { ok } from '$lib/domain/result';
import { isTerminal, ROOT_INVOCATION, type InvocationId, type RunId, type RunRecord } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { profileRoots, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { CharacterStore, LorebookStore, PersonaStore } from '$lib/ports/characters';
import type { ChatContext, ChatMessage as ToolChatMessage } from '$lib/ports/chat-context';
import type { ChatStore } from '$lib/ports/chats';
import type { Clock, Ids } from '$lib/ports/clock';
import type { UnreferencedStates } from '$lib/domain/retention';
import type { Journal } from '$lib/ports/journal';
import type { Locks } from '$lib/ports/locks';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { ProfileStore } from '$lib/ports/profiles';
import type { ImageNormalizer } from '$lib/ports/images';
import type { Sandbox } from '$lib/ports/sandbox';
import { acceptsImages } from '$lib/domain/vision';
import type { ConnectionStore, RunStore, SettingsStore } from '$lib/ports/stores';
import type { PresetStore } from '$lib/ports/presets';
import type { Tokenizers } from '$lib/ports/tokenizer';
import { maxReplyTokens, type Preset } from '$lib/chat/preset/preset';
import { historyCovered, memoryFromBudget, promptBudget } from '$lib/chat/prompt/budget';
import { DEFAULT_PRESET_ID, defaultPreset } from '$lib/chat/preset/sillytavern';
import {
  authorsNoteFromMetadata,
  AuthorsNoteSchema,
  authorsNoteToMetadata,
  DEFAULT_AUTHORS_NOTE,
  type AuthorsNote,
} from '$lib/chat/prompt/authors-note';
import type { SamplerSettings } from '$lib/domain/sampler';
import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';
import { auditPaths, chatAuditLayout } from './audit-paths';
import { chatPrompt, type ChatPrompt, type ChatPromptBudget } from './chat-prompt';
import type { CommitRecord, Publisher } from './control';
import { rootInvocation } from './invocation';
import { directOutputPath } from './invocation-runner';
import {
  projectPersist,
  promotePersist,
  stateIdOf,
  sweepStates,
  type PersistFile,
  type StateSweep,
} from './persist';
import { connectionFor, connectionOfRun } from './model-binding';
import { profileDeps } from './agent-deps';
import { unstartedCalls } from './resume';
import type { RunLog } from './run-recorder';
import type { PreparedRun, RunInbox, RunPlan, RunService } from './run-service';
import { DEFAULT_CONNECTION_KEY, runLock } from './sessions';
import type { ToolProviders } from './tool-catalog';
import { invocationSnapshot, rootSnapshot, type ToolSnapshot } from './tool-snapshot';
import { BudgetedTranscript, fixedTokens } from './round-budget';
import { agentTranscript, resumePoint, type ChildFactory, type PreparedChild } from './delegation';
import { taskAgentPrompt } from './task-prompt';
import { ReadState } from '$lib/tools/workspace/read-state';
import { allProfiles, delegationSurface, findProfile, withDirectory, withSection } from './agent-directory';
import type { Skills } from './skills';
import { WorkspaceTranscript } from './transcript';

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
  /** The tools Chat runs can bind, by provider. */
  providers: ToolProviders;
  clock: Clock;
  ids: Ids;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Runs `workspace_shell` calls. */
  sandbox?: Sandbox;
  /** Normalizes tool images (tools.md §11). */
  images: ImageNormalizer;
  /** Executes the runs (shared with Sessions). */
  service: RunService;
  /** Installed skills; without, no skill is mounted. */
  skills?: Skills;
  presets: PresetStore;
  tokenizers: Tokenizers;
}

const EXAMPLE_SEEDED_KEY = 'exampleCharacterSeeded';

/** How many messages the conversation view reads at a time (the newest page opens the chat). */
export const CHAT_PAGE_SIZE = 50;
/** Messages a reply's history reads at a time, newest first. */
const REACH_PAGE = 200;
/** Find in chat lists at most this many hits. */
const FIND_LIMIT = 1000;

export const chatRunWorkspaceKey = (chatId: string, runId: string) => `chats/${chatId}/runs/${runId}`;

/**
 * Saves what the run answers (the person's message, if any) and says where the reply goes.
 * `rows`: the chat's newest messages, oldest first, as far back as the prompt can reach; `count`:
 * how many messages the chat has.
 */
type Prepare = (
  rows: ChatMessageRow[],
  persona: { name: string },
  count: number,
) => Promise<{
  history: ChatMessageRow[];
  published: ChatMessageRow | null;
  target: ReplyTarget;
}>;

/** Where a Chat run's reply goes: a new message, a new swipe of it, or more of it (continue). */
type ReplyTarget = { kind: 'new' } | { kind: 'swipe'; index: number } | { kind: 'continue'; index: number };

/** What a new run starts from, before its input is frozen. */
interface FrozenChatRun {
  target: ReplyTarget;
  /** Continue: the message's text before the run, which the committed text follows. */
  original: string | null;
  /**
   * The newest messages of the frozen input prefix (the chat's messages the reply answers), as far
   * back as its prompt can reach; the chat tools read older ones from the chat.
   */
  history: ChatMessageRow[];
  /** How many messages the input prefix has (absent in inputs frozen with the whole prefix). */
  inputMessageCount?: number;
  /** The profile the chat had when the run started. */
  profile: ProfileV5;
}

/** A Chat run's frozen input (`run/input/chat_run.json`): everything a resumed run needs again. */
interface ChatRunInput extends FrozenChatRun {
  activation: Activation;
  baseStateId: string | null;
  baseFiles: PersistFile[];
  bodyPath: string;
  prompt: ChatPrompt;
  /** The preset's sampler settings, for every request of the run. */
  sampler: SamplerSettings;
}

/** Where the run's reply is in the chat: unknown until the first commit. */
interface Place {
  index: number | null;
  swipeId: number;
}

const RUN_INPUT = 'run/input/chat_run.json';
const TRANSCRIPT = 'run/transcript';

/**
 * Chats with characters (spec §1.3): SillyTavern-shaped messages with swipes, and what makes a
 * Chat run: its own workspace, a prompt from the card, persona, lore and history, a text-only
 * turn as drift, and a reply published by commit. The run service executes it.
 */
export class ChatService {
  constructor(private readonly deps: ChatServiceDeps) {
    deps.service.resumeWith('chat', (run) => this.#plan(run, { kind: 'resume' }));
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
      const lorebookId = EXAMPLE_LOREBOOK_ID;
      await this.deps.characters.put(
        {
          id: EXAMPLE_CHARACTER_ID,
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

  list(characterId: string): Promise<ChatSummary[]> {
    return this.deps.chats.list(characterId);
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
    const messageCount = await this.deps.chats.count(chatId);
    const runs = await this.deps.runs.listForChat(chatId);
    return {
      chat,
      character: { id: character.id, name: character.card.name, avatar: character.avatar ?? null },
      persona: { id: persona.id, name: persona.name, avatar: persona.avatar ?? null },
      messageCount,
      messages: await this.deps.chats.messagesBetween(chatId, messageCount - CHAT_PAGE_SIZE, messageCount),
      runs,
      memoryFrom: await this.#memoryFrom(runs),
    };
  }

  /**
   * Where the model's memory begins: the oldest message the newest reply's prompt held, when older
   * ones did not fit its budget (null: the whole chat fit, or no reply recorded it).
   */
  async #memoryFrom(runs: readonly RunRecord[]): Promise<number | null> {
    const newest = runs.reduce<RunRecord | null>((a, r) => (!a || r.createdAt > a.createdAt ? r : a), null);
    if (!newest) return null;
    // The budget is recorded among a run's first events.
    const events = await this.deps.journal.read(newest.id, { limit: 50 });
    const assembled = events.find((e) => e.type === 'chat_prompt_assembled');
    return assembled?.type === 'chat_prompt_assembled' ? memoryFromBudget(assembled.payload.history) : null;
  }

  /** A page of the conversation: messages with `from <= index < to`, at most `CHAT_PAGE_SIZE * 4`. */
  messages(chatId: string, from: number, to: number): Promise<ChatMessageRow[]> {
    return this.deps.chats.messagesBetween(chatId, from, Math.min(to, from + CHAT_PAGE_SIZE * 4));
  }

  /** Find in chat: the indexes of messages whose shown text contains `text`, oldest first. */
  find(chatId: string, text: string): Promise<number[]> {
    return this.deps.chats.find(chatId, text.trim(), FIND_LIMIT);
  }

  async update(chatId: string, patch: ChatPatch): Promise<ChatRecord> {
    const chat = await this.#chat(chatId);
    if (patch.profileId !== undefined) await this.#profile(patch.profileId);
    const next = { ...chat, ...patch, updatedAt: this.deps.clock.now() };
    await this.deps.chats.put(next);
    return next;
  }

  /**
   * The chat's persistent states no message or swipe refers to any more (deleted messages and
   * swipes leave them): measured, and deleted with `remove`. Null when a reply is in progress or
   * unfinished (its state is referred to only once its commit lands), so it is left alone.
   */
  async unreferencedStates(chatId: string, remove: boolean): Promise<StateSweep | null> {
    const held = await this.deps.locks.tryWithLock(runLock({ kind: 'chat', chatId }), async () => {
      const runs = await this.deps.runs.listForChat(chatId);
      if (runs.some((r) => !isTerminal(r.status))) return null;
      const ws = await this.deps.workspaces.open(`chats/${chatId}`);
      if (!ws.ok) throw new HearthFailure(ws.error);
      const referenced = async () => {
        const ids = new Set<string>();
        for (const m of await this.deps.chats.messages(chatId)) {
          for (const extra of [m.extra, ...m.swipes.map((s) => s.extra)]) {
            const id = stateIdOf(extra);
            if (id) ids.add(id);
          }
        }
        return ids;
      };
      return sweepStates(ws.value, referenced, remove);
    });
    return held.acquired ? held.value : null;
  }

  /** `unreferencedStates` over every chat, in all. */
  async allUnreferencedStates(remove: boolean): Promise<UnreferencedStates> {
    const total: UnreferencedStates = { states: 0, files: 0, bytes: 0, busyChats: 0 };
    for (const chatId of await this.deps.chats.ids()) {
      const swept = await this.unreferencedStates(chatId, remove);
      if (!swept) total.busyChats++;
      else {
        total.states += swept.states;
        total.files += swept.files;
        total.bytes += swept.bytes;
      }
    }
    return total;
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

  /**
   * The chat's author's note from the next reply on (null: none). Checked here: a note the
   * assembly cannot read is refused, and the chat is left as it was.
   */
  async setAuthorsNote(chatId: string, note: AuthorsNote | null): Promise<ChatRecord> {
    const chat = await this.#chat(chatId);
    const next: ChatRecord = { ...chat, updatedAt: this.deps.clock.now() };
    if (note === null) delete next.authorsNote;
    else {
      const parsed = AuthorsNoteSchema.strict().safeParse(note);
      if (!parsed.success) {
        const first = parsed.error.issues[0];
        throw new HearthFailure(
          hearthError(
            'chat.invalid_authors_note',
            `The author's note cannot be saved: ${first ? `${first.path.join('.') || 'note'}: ${first.message}` : 'invalid'}.`,
          ),
        );
      }
      next.authorsNote = parsed.data;
    }
    await this.deps.chats.put(next);
    return next;
  }

  /**
   * `linked`: what a library's chat brings beside its file: books to attach (the world it links)
   * and the persona it was locked to.
   */
  async importJsonl(
    characterId: string,
    fileName: string,
    bytes: Uint8Array,
    linked: { lorebookIds?: string[]; personaId?: string | null } = {},
  ) {
    await this.#character(characterId);
    const parsed = parseChatJsonl(new TextDecoder().decode(bytes));
    if (!parsed.ok) throw new HearthFailure(parsed.error);
    const now = this.deps.clock.now();
    const chat: ChatRecord = {
      id: this.deps.ids.contentId('chat'),
      characterId,
      title: chatTitleFromFileName(fileName),
      personaId: linked.personaId ?? null,
      lorebookIds: linked.lorebookIds ?? [],
      ...authorsNoteOf(parsed.value.transcript.header.chatMetadata),
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
        chatMetadata: chat.authorsNote ? authorsNoteToMetadata(chat.authorsNote) : {},
        unknown: {},
      },
      messages: messages.map(({ chatId: _c, index: _i, ...m }) => m),
    });
    return { fileName: exportFileName(chat.title, 'jsonl', 'chat'), bytes: new TextEncoder().encode(text) };
  }

  /**
   * The person's message, then a Chat run that writes the reply as a new message. `images`: the
   * person's, normalized (`images.normalize`), kept in `extra.media` as SillyTavern keeps uploads.
   */
  send(chatId: string, text: string, images: readonly ImageRef[] = []): AsyncIterable<RunUpdate> {
    const checked = checkUserImages(images);
    if (!checked.ok) {
      return this.deps.service.start(async () => {
        throw new HearthFailure(checked.error);
      });
    }
    return this.#stream(chatId, async (rows, persona, count) => {
      const now = this.deps.clock.now();
      const row: ChatMessageRow = {
        ...personMessage(chatId, count, persona.name, text, isoDate(now)),
        extra: withImages(
          {},
          checked.value.map((i) => ({ url: i.path })),
        ),
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

  /**
   * The plain text a failed Chat run wrote instead of committing (drift, runtime.md §1.8), made
   * the reply: a new message from the character after the chat's last one.
   */
  async useDirectOutput(runId: RunId): Promise<ChatMessageRow> {
    const run = await this.deps.runs.get(runId);
    if (!run || run.target.kind !== 'chat')
      throw new HearthFailure(hearthError('agent.not_found', 'Not a chat run.'));
    const chatId = run.target.chatId;
    const character = await this.#character((await this.#chat(chatId)).characterId);
    const ws = await this.deps.workspaces.open(chatRunWorkspaceKey(chatId, run.id));
    if (!ws.ok) throw new HearthFailure(ws.error);
    const input = await readJson<ChatRunInput>(ws.value, RUN_INPUT);
    const read = await ws.value.read(directOutputPath(input.bodyPath));
    if (!read.ok) throw new HearthFailure(read.error);
    const text = new TextDecoder().decode(read.value);
    const count = await this.deps.chats.count(chatId);
    const sendDate = isoDate(this.deps.clock.now());
    const extra = { hearth: { runId: run.id, path: input.bodyPath } };
    const row: ChatMessageRow = {
      chatId,
      index: count,
      name: character.card.name,
      isUser: false,
      isSystem: false,
      sendDate,
      mes: text,
      extra,
      swipes: [{ text, sendDate, extra, info: {} }],
      swipeId: 0,
      unknown: {},
    };
    await this.deps.chats.putMessages([row]);
    return row;
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
    return this.deps.service.start(async () => {
      const chat = await this.#chat(chatId);
      const profile = await this.#profile(chat.profileId ?? DEFAULT_WRITER_ID);
      const connection = await connectionFor(profile, await this.#connectionOf(chat), this.deps.connections);
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
      return this.#plan(run, { kind: 'new', prepare, profile, connection });
    });
  }

  /** A Chat run, new or resumed: its own workspace, a frozen input, and a reply published by commit. */
  async #plan(
    run: RunRecord,
    start: { kind: 'new'; prepare: Prepare; profile: ProfileV5; connection: Connection } | { kind: 'resume' },
  ): Promise<RunPlan> {
    if (run.target.kind !== 'chat') throw new Error('internal: a Chat plan for a session run');
    const chatId = run.target.chatId;
    const chat = await this.#chat(chatId);
    const character = await this.#character(chat.characterId);
    const persona = await this.#persona(chat.personaId);
    const connection =
      start.kind === 'new' ? start.connection : await connectionOfRun(run, this.deps.connections);
    const resumedFrom = run.status;
    let frozen: FrozenChatRun | null = null;
    return {
      run: start.kind === 'resume' ? { ...run, error: undefined } : run,
      lock: runLock({ kind: 'chat', chatId }),
      busy: 'This chat already has a reply in progress (perhaps in another tab).',
      workspaceKey: chatRunWorkspaceKey(chatId, run.id),
      begin: async (recorder) => {
        if (start.kind === 'resume') {
          const current = await this.deps.runs.get(run.id);
          if (current?.status !== resumedFrom) {
            throw new HearthFailure(
              hearthError('agent.resume_refused', 'This reply changed meanwhile; reload the page.'),
            );
          }
          await recorder.emit({ type: 'run_resumed', payload: { from: resumedFrom, round: run.rounds + 1 } });
          return;
        }
        await recorder.emit({
          type: 'run_created',
          payload: { target: { ...run.target }, connectionId: connection.id, model: connection.model },
        });
        const count = await this.deps.chats.count(chatId);
        const rows = await this.#reach(chat, count, start.profile);
        const { history, published, target } = await start.prepare(rows, persona, count);
        if (published) recorder.publish({ type: 'chat-message', message: published });
        await this.deps.chats.put({ ...chat, updatedAt: run.createdAt });
        const original =
          target.kind === 'continue' ? (rows.find((m) => m.index === target.index)?.mes ?? '') : null;
        const inputMessageCount = (history.at(-1)?.index ?? -1) + 1;
        frozen = { target, original, history, inputMessageCount, profile: start.profile };
      },
      prepare: async (recorder, inbox) => {
        await recorder.setStatus('initializing_workspace');
        const opened = await this.deps.workspaces.open(chatRunWorkspaceKey(chatId, run.id));
        if (!opened.ok) throw new HearthFailure(opened.error);
        const workspace = opened.value;
        const chatWs = await this.deps.workspaces.open(`chats/${chatId}`);
        if (!chatWs.ok) throw new HearthFailure(chatWs.error);
        await recorder.setStatus('assembling_context');
        const input = frozen
          ? await this.#freeze(recorder, workspace, chatWs.value, { chat, character, persona, ...frozen })
          : await readJson<ChatRunInput>(workspace, RUN_INPUT);
        return this.#prepared(recorder, inbox, {
          workspace,
          chatWs: chatWs.value,
          input,
          chat,
          character,
          connection,
          resumed: !frozen,
        });
      },
    };
  }

  /**
   * Freezes a new run's input in its workspace (runtime.md §1.4): the profile, the activation, the
   * persist/ base, the prompt and what the reply answers. A resumed run reads it back unchanged.
   */
  async #freeze(
    recorder: RunLog,
    workspace: Workspace,
    chatWs: Workspace,
    input: FrozenChatRun & {
      chat: ChatRecord;
      character: CharacterRecord;
      persona: { id: string | null; name: string; description: string };
    },
  ): Promise<ChatRunInput> {
    const run = recorder.run;
    const profile = input.profile;
    const now = this.deps.clock.now();
    const macros = this.#macros(input.character, input.persona, input.chat.id, now, run.id);
    const activation = activateWorldInfo({
      books: await this.#books(input.character, input.chat),
      messages: scanMessagesOf(input.history),
      seed: run.id,
      timestampMs: now,
      character: { names: [input.character.card.name], tags: input.character.card.tags },
    });
    await writeJson(workspace, 'run/input/resolved_profile.json', profile);
    await writeJson(workspace, 'run/input/worldinfo_activation.json', activation);
    // persist/: the newest state a reply in the prefix published (tools.md §12.4).
    const baseStateId = persistStateOf(input.history);
    const baseFiles = await projectPersist(chatWs, workspace, baseStateId);
    await recorder.emit({
      type: 'persistent_projection_initialized',
      payload: { roots: ['persist'], baseStateId, files: baseFiles.length },
    });
    await recorder.emit({ type: 'profile_resolved', payload: { profileId: profile.id, source: profile.id } });
    const bodyPath =
      profile.output?.artifacts.find((a) => a.target === 'messageBody')?.path ?? 'output/main.md';
    const { prompt, preset } = await this.#prompt({
      chat: input.chat,
      character: input.character,
      persona: input.persona,
      history: input.history,
      activation,
      profile,
      macros,
      bodyPath,
      continuation: input.target.kind === 'continue',
      runId: run.id,
      model: run.model,
    });
    const { history: fit, ...budget } = ofWholeChat(prompt.preview.budget, input.history);
    await recorder.emit({
      type: 'chat_prompt_assembled',
      payload: {
        maxContextTokens: budget.maxContextTokens,
        maxReplyTokens: budget.maxReplyTokens,
        limit: budget.limit,
        used: budget.used,
        agentTokens: budget.agentTokens,
        tokenizer: budget.tokenizer,
        history: { total: fit.total, sent: fit.sent, oldestSent: fit.oldestSent },
        examples: budget.examples,
        overflow: budget.overflow,
      },
    });
    const frozen: ChatRunInput = {
      profile,
      activation,
      target: input.target,
      original: input.original,
      history: input.history,
      inputMessageCount: input.inputMessageCount,
      baseStateId,
      baseFiles,
      bodyPath,
      prompt,
      sampler: preset.sampler,
    };
    await writeJson(workspace, RUN_INPUT, frozen);
    return frozen;
  }

  async #prepared(
    recorder: RunLog,
    inbox: RunInbox,
    ctx: {
      workspace: Workspace;
      chatWs: Workspace;
      input: ChatRunInput;
      chat: ChatRecord;
      character: CharacterRecord;
      connection: Connection;
      resumed: boolean;
    },
  ): Promise<PreparedRun> {
    const { workspace, input } = ctx;
    const run = recorder.run;
    const profile = migrated(input.profile);
    const surface = delegationSurface(await allProfiles(this.deps.profiles), profile, { canHandOff: true });
    const snapshot = await rootSnapshot(
      run.id,
      this.deps.providers,
      profile,
      'chat',
      acceptsImages(ctx.connection, run.model),
      surface.withheld,
    );
    const skills = this.deps.skills
      ? await this.deps.skills.forInvocation(workspace, {
          profileId: profile.id,
          characterId: ctx.character.id,
          visible: profile.skills.visible,
          deny: profile.skills.deny,
        })
      : { workspace, section: null };
    const system = withSection(withDirectory(input.prompt.system, surface, snapshot), skills.section);
    const transcript = await this.#budgeted(
      await WorkspaceTranscript.open(workspace, TRANSCRIPT, input.prompt.messages),
      { input, system, snapshot, model: run.model },
    );
    const events = ctx.resumed ? await readAll(this.deps.journal, run.id) : [];
    const ledger = ledgerOf(events);
    const place = placeOf(events);
    const publisher = this.#publisher(recorder, { ...ctx, profile, place });
    return {
      invocation: rootInvocation({
        profileId: profile.id,
        snapshot,
        audit: auditPaths(chatAuditLayout(), ROOT_INVOCATION),
      }),
      scenario: {
        system,
        transcript,
        textOnlyTurn: 'drift',
        guidance: inbox.guidance,
        sampler: input.sampler,
        beforeRequest: (round) => transcript.fit(round, recorder),
        afterResponse: (round, usage) => this.#calibrate(run.model, round, transcript, usage),
      },
      deps: {
        ...this.#agentDeps(
          run,
          profile,
          input,
          {
            model: run.model,
            gateway: this.deps.gatewayFor(ctx.connection),
            workspace: skills.workspace,
            roots: profileRoots(profile.workspace),
          },
          { ledger, publisher },
        ),
        startRound: run.rounds + 1,
        unstarted: ctx.resumed ? unstartedCalls(transcript.messages(), events) : null,
      },
      finish: (log) => this.#finishPersist(log, { ...ctx, ledger, place }),
      ...(surface.directory
        ? { children: this.#children(recorder, inbox, { ...ctx, ledger, publisher }) }
        : {}),
      ...(ctx.resumed ? { resumed: events } : {}),
    };
  }

  /**
   * The root agent's transcript with its tool rounds counted against the prompt's budget: the
   * preset's limit and the agent's parts counted apart (`ChatPromptBudget`). A run frozen before
   * presets has no budget to keep.
   */
  async #budgeted(
    transcript: WorkspaceTranscript,
    ctx: { input: ChatRunInput; system: string; snapshot: ToolSnapshot; model: string },
  ): Promise<BudgetedTranscript> {
    const budget = ctx.input.prompt.preview?.budget;
    const counter = await this.deps.tokenizers.forModel(ctx.model);
    return new BudgetedTranscript(transcript, {
      counter,
      limit: budget ? budget.limit + budget.agentTokens : Infinity,
      fixed: fixedTokens(counter, ctx.system, ctx.snapshot.specs),
      invocationId: ROOT_INVOCATION,
    });
  }

  /**
   * The first request's count against the input tokens its provider reported corrects the
   * estimate for models without a public tokenizer. Images are left out: their count is a guess.
   * A failed calibration never fails the reply.
   */
  async #calibrate(model: string, round: number, transcript: BudgetedTranscript, usage: Usage) {
    if (round !== 1 || !usage.inputTokens || transcript.counted === 0) return;
    const images = transcript
      .messages()
      .some((m) => m.parts.some((p) => p.type === 'image' || (p.type === 'tool-result' && p.images.length)));
    if (images) return;
    await this.deps.tokenizers.observe(model, transcript.counted, usage.inputTokens).catch(() => undefined);
  }

  /**
   * What every agent of a Chat run works with: its profile's retries, approvals and inline limit,
   * the chat it replies in, the run's sandbox and identity. A foreground agent (the root, or one
   * the run is handed to) commits the reply through the run's one ledger and publisher; a
   * delegated task's agent cannot commit.
   */
  #agentDeps(
    run: RunRecord,
    profile: ProfileV5,
    input: ChatRunInput,
    io: { model: string; gateway: ModelGateway; workspace: Workspace; roots: WorkspaceRoots },
    foreground: { ledger: CommitRecord[]; publisher: Publisher } | null,
  ): Omit<PreparedRun['deps'], 'startRound' | 'unstarted'> {
    const messageBodyPath = input.bodyPath;
    return {
      ...io,
      ...profileDeps(this.deps, profile),
      capabilities: {
        chat: chatContext(this.deps.chats, run, input),
        ...(foreground
          ? {
              commit: {
                messageBodyPath,
                messageBodyRequired:
                  profile.output?.artifacts.find((a) => a.target === 'messageBody')?.required ?? true,
              },
            }
          : {}),
        sandbox: this.deps.sandbox,
        run: { runId: run.id, target: { kind: 'chat' } },
      },
      control: foreground
        ? { ...foreground, foregroundCommitRequired: true, messageBodyPath }
        : { ledger: [], foregroundCommitRequired: false, messageBodyPath },
    };
  }

  /**
   * How a Chat run's other agents are prepared (runtime.md §2.5, §2.10), each with its own
   * profile's model, tools and roots in the run's workspace and its own conversation under
   * `run/transcript/<invocation>/`, starting from its brief (no chat history): a delegated task's
   * agent in return mode; an agent the run is handed to in the foreground, committing to the
   * same reply through the run's one ledger and publisher.
   */
  #children(
    recorder: RunLog,
    inbox: RunInbox,
    ctx: {
      workspace: Workspace;
      input: ChatRunInput;
      connection: Connection;
      character: CharacterRecord;
      ledger: CommitRecord[];
      publisher: Publisher;
    },
  ): ChildFactory {
    const run = recorder.run;
    const { workspace, input } = ctx;
    const agent = async (
      profile: ProfileV5,
      invocationId: InvocationId,
      parentId: InvocationId,
      brief: string,
      mode: 'subagent' | 'handoff',
      log: RunLog,
      resumed?: readonly RunEvent[],
    ): Promise<PreparedChild> => {
      const bound = await connectionFor(profile, ctx.connection, this.deps.connections);
      const model = bound.kind === 'remote' ? bound.model : run.model;
      const subagent = mode === 'subagent';
      const skills = this.deps.skills
        ? await this.deps.skills.forInvocation(workspace, {
            profileId: profile.id,
            characterId: ctx.character.id,
            visible: profile.skills.visible,
            deny: profile.skills.deny,
          })
        : { workspace, section: null };
      const surface = subagent
        ? null
        : delegationSurface(await allProfiles(this.deps.profiles), profile, { canHandOff: true });
      const snapshot = await invocationSnapshot(
        `snapshot_${run.id}_${invocationId}`,
        this.deps.providers,
        profile,
        {
          scope: 'chat',
          acceptsImages: acceptsImages(bound, model),
          exitPolicy: subagent ? 'task_return_required' : 'run_finish_allowed',
          ...(surface ? { withheld: surface.withheld } : {}),
        },
      );
      const roots = profileRoots(profile.workspace);
      const transcript = await agentTranscript(workspace, `${TRANSCRIPT}/${invocationId}`, brief, log);
      const own = profile.instructions.agentSystemPrompt;
      return {
        invocation: {
          id: invocationId,
          parentId,
          kind: mode,
          profileId: profile.id,
          exitPolicy: snapshot.exitPolicy,
          snapshot,
          audit: auditPaths(chatAuditLayout(), invocationId),
          readState: new ReadState(),
          status: 'created',
        },
        scenario: subagent
          ? {
              system: withSection(own ?? taskAgentPrompt(roots), skills.section),
              transcript,
              textOnlyTurn: 'return',
            }
          : {
              system: withSection(
                withDirectory(own ?? input.prompt.system, surface!, snapshot),
                skills.section,
              ),
              transcript,
              textOnlyTurn: 'drift',
              guidance: inbox.guidance,
            },
        deps: {
          ...this.#agentDeps(
            run,
            profile,
            input,
            { model, gateway: this.deps.gatewayFor(bound), workspace: skills.workspace, roots },
            subagent ? null : { ledger: ctx.ledger, publisher: ctx.publisher },
          ),
          ...resumePoint(invocationId, transcript.messages(), resumed),
        },
      };
    };
    return {
      resultsDir: '',
      profile: (id) => findProfile(this.deps.profiles, id),
      prepare: ({ profile, invocationId, parentId, brief, log, resumed }) =>
        agent(profile, invocationId, parentId, brief, 'subagent', log, resumed),
      prepareHandoff: ({ profile, invocationId, parentId, brief, log, resumed }) =>
        agent(profile, invocationId, parentId, brief, 'handoff', log, resumed),
    };
  }

  /**
   * Puts committed text in the chat (runtime.md §6.5): the first commit makes a new message, a
   * new swipe, or continues the last message; later ones replace or append to the same one. What
   * the run published so far is read back from the chat, so a resumed run continues it exactly.
   */
  #publisher(
    log: RunLog,
    ctx: {
      input: ChatRunInput;
      chat: ChatRecord;
      character: CharacterRecord;
      profile: ProfileV5;
      place: Place;
    },
  ): Publisher {
    const { input, place } = ctx;
    const chatId = ctx.chat.id;
    return {
      publish: async (text, commit) => {
        const index = place.index ?? (input.target.kind === 'new' ? null : input.target.index);
        const shown = index === null ? undefined : await this.deps.chats.message(chatId, index);
        if (index !== null && !shown) throw new HearthFailure(messageNotFound(index));
        const sendDate = isoDate(this.deps.clock.now());
        const hearth = {
          runId: log.run.id,
          profileId: commit.profileId,
          checkpointId: commit.checkpointId,
          path: commit.path,
        };
        const prefix = input.original ?? '';
        const before =
          place.index === null ? '' : (shown!.swipes[place.swipeId]?.text ?? shown!.mes).slice(prefix.length);
        const body = commit.mode === 'append' && !commit.first ? before + text : text;
        let row: ChatMessageRow;
        if (place.index !== null) {
          const base = shown!;
          const full = prefix + body;
          row = {
            ...base,
            mes: base.swipeId === place.swipeId ? full : base.mes,
            swipes: base.swipes.map((s, i) =>
              i === place.swipeId ? { ...s, text: full, extra: { ...s.extra, hearth } } : s,
            ),
          };
        } else if (input.target.kind === 'continue') {
          const base = shown!;
          const full = prefix + body;
          const swipes = base.swipes.length
            ? base.swipes
            : [{ text: base.mes, sendDate: base.sendDate, extra: base.extra, info: {} }];
          row = {
            ...base,
            mes: full,
            swipes: swipes.map((s, i) =>
              i === base.swipeId ? { ...s, text: full, extra: { ...s.extra, hearth } } : s,
            ),
          };
          [place.index, place.swipeId] = [base.index, base.swipeId];
        } else if (input.target.kind === 'swipe') {
          const base = shown!;
          const swipes = base.swipes.length
            ? base.swipes
            : [{ text: base.mes, sendDate: base.sendDate, extra: base.extra, info: {} }];
          row = {
            ...base,
            mes: body,
            swipes: [...swipes, { text: body, sendDate, extra: { hearth }, info: {} }],
            swipeId: swipes.length,
          };
          [place.index, place.swipeId] = [base.index, swipes.length];
        } else {
          const count = await this.deps.chats.count(chatId);
          row = {
            chatId,
            index: count,
            name: ctx.character.card.name,
            isUser: false,
            isSystem: false,
            sendDate,
            mes: body,
            extra: { hearth },
            swipes: [{ text: body, sendDate, extra: { hearth }, info: {} }],
            swipeId: 0,
            unknown: {},
          };
          [place.index, place.swipeId] = [count, 0];
        }
        await this.deps.chats.putMessages([row]);
        log.publish({ type: 'chat-message', message: row });
        return { messageId: String(place.index), messageIndex: place.index!, swipeId: place.swipeId };
      },
    };
  }

  /** Only a run that finished successfully publishes its persist/ (never a failed or stopped one). */
  async #finishPersist(
    log: RunLog,
    ctx: {
      workspace: Workspace;
      chatWs: Workspace;
      input: ChatRunInput;
      chat: ChatRecord;
      ledger: CommitRecord[];
      place: Place;
    },
  ): Promise<void> {
    const { input, place } = ctx;
    if (ctx.ledger.length === 0 || place.index === null) return;
    const promoted = await promotePersist(ctx.chatWs, ctx.workspace, {
      runId: log.run.id,
      baseStateId: input.baseStateId,
      base: input.baseFiles,
    });
    await log.emit({
      type: 'persistent_changes_committed',
      payload: {
        stateId: promoted.stateId,
        baseStateId: input.baseStateId,
        changed: promoted.changed.map((f) => f.path),
        removed: promoted.removed,
      },
    });
    if (!promoted.stateId) return;
    const row = await this.deps.chats.message(ctx.chat.id, place.index);
    if (!row) throw new HearthFailure(messageNotFound(place.index));
    const swipes = row.swipes.map((s, i) =>
      i === place.swipeId
        ? {
            ...s,
            extra: {
              ...s.extra,
              hearth: { ...(s.extra.hearth as object), persistStateId: promoted.stateId },
            },
          }
        : s,
    );
    const next = {
      ...row,
      swipes,
      extra: row.swipeId === place.swipeId ? swipes[place.swipeId]!.extra : row.extra,
    };
    await this.deps.chats.putMessages([next]);
    log.publish({ type: 'chat-message', message: next });
  }

  /**
   * "Show the prompt": the messages the next reply would send, each labelled with where it came
   * from, and the budget. `draft`: the person's message about to be sent, if any.
   */
  async previewPrompt(chatId: string, draft?: string): Promise<ChatPrompt['preview'] & { model: string }> {
    const chat = await this.#chat(chatId);
    const character = await this.#character(chat.characterId);
    const persona = await this.#persona(chat.personaId);
    const profile = await this.#profile(chat.profileId ?? DEFAULT_WRITER_ID);
    const connection = await connectionFor(profile, await this.#connectionOf(chat), this.deps.connections);
    const count = await this.deps.chats.count(chatId);
    const rows = await this.#reach(chat, count, profile);
    const history =
      draft === undefined || draft === ''
        ? rows
        : [...rows, personMessage(chatId, count, persona.name, draft, isoDate(0))];
    const now = this.deps.clock.now();
    const seed = 'preview';
    const activation = activateWorldInfo({
      books: await this.#books(character, chat),
      messages: scanMessagesOf(history),
      seed,
      timestampMs: now,
      character: { names: [character.card.name], tags: character.card.tags },
    });
    const { prompt } = await this.#prompt({
      chat,
      character,
      persona,
      history,
      activation,
      profile,
      macros: this.#macros(character, persona, chat.id, now, seed),
      bodyPath: profile.output?.artifacts.find((a) => a.target === 'messageBody')?.path ?? 'output/main.md',
      continuation: false,
      runId: seed,
      model: connection.model,
      connection,
    });
    return {
      ...prompt.preview,
      budget: ofWholeChat(prompt.preview.budget, history),
      model: connection.model,
    };
  }

  /** The preset a chat's replies are built with: its own, else the selected one, else Default. */
  /**
   * The chat's newest messages, oldest first, read back a page at a time only as far as the
   * reply's prompt could reach (its preset's budget, the profile's history limit): a long chat's
   * reply never reads the whole chat.
   */
  async #reach(chat: ChatRecord, count: number, profile: ProfileV5): Promise<ChatMessageRow[]> {
    const { preset } = await this.presetOf(chat);
    const budget = promptBudget(preset.maxContextTokens, maxReplyTokens(preset));
    const limit = profile.context.initialChatHistoryMessages;
    const newestFirst: ChatMessageRow[] = [];
    const read = { textLength: 0, shown: 0 };
    for (let before = count; before > 0 && !historyCovered(read, budget, limit);) {
      const page = await this.deps.chats.messagesBefore(chat.id, before, REACH_PAGE);
      if (page.length === 0) break;
      for (const m of page) {
        newestFirst.push(m);
        read.textLength += m.mes.length;
        if (!m.isSystem) read.shown++;
      }
      before = page.at(-1)!.index;
    }
    return newestFirst.reverse();
  }

  async presetOf(chat: ChatRecord): Promise<{ id: string; preset: Preset }> {
    for (const id of [chat.presetId, await this.deps.presets.selectedId()]) {
      if (!id || id === DEFAULT_PRESET_ID) continue;
      const record = await this.deps.presets.get(id);
      if (record) return { id, preset: record.preset };
    }
    return { id: DEFAULT_PRESET_ID, preset: defaultPreset() };
  }

  /**
   * A reply's prompt from the chat's preset (D23), its tool definitions counted against the same
   * budget as the messages.
   */
  async #prompt(ctx: {
    chat: ChatRecord;
    character: CharacterRecord;
    persona: { name: string; description: string };
    history: ChatMessageRow[];
    activation: Activation;
    profile: ProfileV5;
    macros: MacroContext;
    bodyPath: string;
    continuation: boolean;
    runId: string;
    model: string;
    connection?: Connection;
  }): Promise<{ prompt: ChatPrompt; preset: Preset }> {
    const { preset } = await this.presetOf(ctx.chat);
    const tokens = await this.deps.tokenizers.forModel(ctx.model);
    const connection = ctx.connection ?? (await this.#connectionOf(ctx.chat));
    const surface = delegationSurface(await allProfiles(this.deps.profiles), ctx.profile, {
      canHandOff: true,
    });
    const snapshot = await rootSnapshot(
      ctx.runId,
      this.deps.providers,
      ctx.profile,
      'chat',
      acceptsImages(connection, ctx.model),
      surface.withheld,
    );
    const toolTokens =
      tokens.count(JSON.stringify(snapshot.specs)) + tokens.count(withDirectory('', surface, snapshot));
    const prompt = chatPrompt({
      preset,
      card: ctx.character.card,
      persona: ctx.persona,
      history: ctx.history,
      activation: ctx.activation,
      authorsNote: ctx.chat.authorsNote ?? DEFAULT_AUTHORS_NOTE,
      characterNote: ctx.character.note ?? null,
      agentSystemPrompt: ctx.profile.instructions.agentSystemPrompt,
      historyLimit: ctx.profile.context.initialChatHistoryMessages,
      includeActivatedWorldInfo: ctx.profile.context.includeActivatedWorldInfo,
      messageBodyPath: ctx.bodyPath,
      macros: ctx.macros,
      continuation: ctx.continuation,
      tokens,
      toolTokens,
    });
    return { prompt, preset };
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

  /** A profile that can reply in a chat (runtime.md §1.2 step 5). */
  async #profile(id: string): Promise<ProfileV5> {
    const resolved = resolveProfile(id, await this.deps.profiles.get(id));
    if (!resolved || id === SESSION_PROFILE_ID) {
      throw new HearthFailure(
        hearthError(
          'agent.profile_not_found',
          `The profile “${id}” chosen for this chat no longer exists. Choose another one in the chat's header.`,
        ),
      );
    }
    const migrated = migrateProfile(resolved.profile);
    if (!migrated.ok) throw new HearthFailure(migrated.error);
    if (!migrated.value.run.directRunnable) {
      throw new HearthFailure(
        hearthError(
          'agent.profile_not_direct_runnable',
          `The profile “${migrated.value.displayName}” only works as a sub-agent. Choose another one for this chat.`,
        ),
      );
    }
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
    return persona ?? { id: null, name: NO_PERSONA_NAME, description: '' };
  }

  async #message(chatId: string, index: number): Promise<ChatMessageRow> {
    const row = await this.deps.chats.message(chatId, index);
    if (!row) throw new HearthFailure(messageNotFound(index));
    return row;
  }
}

const messageNotFound = (index: number) =>
  hearthError('chat.message_not_found', `This chat has no message ${index + 1}.`);

/** The persistent state recorded on the newest character message's shown swipe (runtime.md §6.6). */
/**
 * The state `persist/` starts from (runtime.md §6.6): the newest assistant message in the prefix
 * whose shown reply published one. Replies that published none (imported, greetings, "Use this
 * text as the reply", a run that failed after its commit) are skipped, so they do not empty the
 * agent's memory.
 */
function persistStateOf(history: readonly ChatMessageRow[]): string | null {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.isUser || m.isSystem) continue;
    const id = stateIdOf(m.swipes[m.swipeId]?.extra ?? m.extra);
    if (id) return id;
  }
  return null;
}

/**
 * What the chat tools read: the frozen input prefix and the frozen activation (tools.md §13.1-13.3).
 * The prefix's newest messages are in the run's input; older ones are read from the chat.
 */
function chatContext(
  chats: ChatStore,
  run: RunRecord,
  input: Pick<ChatRunInput, 'history' | 'inputMessageCount' | 'activation'>,
): ChatContext {
  if (run.target.kind !== 'chat') throw new Error('internal: chat tools for a session run');
  const chatId = run.target.chatId;
  const count = input.inputMessageCount ?? input.history.length;
  const frozenFrom = input.history[0]?.index ?? count;
  const frozen = (index: number) => input.history[index - frozenFrom];
  const toTool = (m: ChatMessageRow): ToolChatMessage => ({
    index: m.index,
    role: messageRole(m),
    name: m.name,
    text: m.mes,
    ...(m.sendDate !== null ? { sendDate: String(m.sendDate) } : {}),
  });
  return {
    inputMessageCount: count,
    messageCount: async () => ok(count),
    readMessages: async (indexes) => {
      const wanted = [...new Set(indexes)].filter((i) => i >= 0 && i < count).sort((a, b) => a - b);
      const rows: ChatMessageRow[] = [];
      for (const i of wanted) {
        const m = i >= frozenFrom ? frozen(i) : await chats.message(chatId, i);
        if (m) rows.push(m);
      }
      return ok(rows.map(toTool));
    },
    readBefore: async (end, limit) => {
      const to = Math.min(end, count);
      const from = Math.max(0, to - limit);
      const rows =
        from >= frozenFrom
          ? input.history.slice(from - frozenFrom, to - frozenFrom)
          : [
              ...(await chats.messagesBetween(chatId, from, Math.min(to, frozenFrom))),
              ...input.history.slice(0, Math.max(0, to - frozenFrom)),
            ];
      return ok(rows.map(toTool));
    },
    worldInfoActivation: async () => ok(input.activation as never),
  };
}

const isoDate = (ms: number) => new Date(ms).toISOString();

/** A prompt's budget over the whole chat: the messages older than the read tail did not fit either. */
function ofWholeChat(budget: ChatPromptBudget, history: readonly ChatMessageRow[]): ChatPromptBudget {
  const unread = history[0]?.index ?? 0;
  return { ...budget, history: { ...budget.history, total: budget.history.total + unread } };
}

/**
 * A chat's author's note from SillyTavern's `chat_metadata.note_*`, when it has any: its settings
 * count even without text (a character's note fires on the chat's interval, at its position).
 */
function authorsNoteOf(meta: Record<string, unknown>): Pick<ChatRecord, 'authorsNote'> {
  return Object.keys(meta).some((k) => k.startsWith('note_'))
    ? { authorsNote: authorsNoteFromMetadata(meta) }
    : {};
}

/** A message of the person's. */
const personMessage = (
  chatId: string,
  index: number,
  name: string,
  text: string,
  sendDate: string,
): ChatMessageRow => ({
  chatId,
  index,
  name,
  isUser: true,
  isSystem: false,
  sendDate,
  mes: text,
  extra: {},
  swipes: [],
  swipeId: 0,
  unknown: {},
});
const busy = (message: string) => new HearthFailure(hearthError('agent.session_busy', message));

function path(raw: string): WorkspacePath {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new Error(`internal: bad path ${raw}`);
  return parsed.value;
}

async function writeJson(workspace: Workspace, raw: string, value: unknown): Promise<void> {
  const written = await workspace.write(path(raw), new TextEncoder().encode(JSON.stringify(value, null, 2)));
  if (!written.ok) throw new HearthFailure(written.error);
}

async function readJson<T>(workspace: Workspace, raw: string): Promise<T> {
  const read = await workspace.read(path(raw));
  if (!read.ok) throw new HearthFailure(read.error);
  return JSON.parse(new TextDecoder().decode(read.value)) as T;
}

function migrated(profile: unknown): ProfileV5 {
  const result = migrateProfile(profile);
  if (!result.ok) throw new HearthFailure(result.error);
  return result.value;
}

async function readAll(journal: Journal, runId: RunId): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for (let after = 0; ;) {
    const page = await journal.read(runId, { afterSeq: after, limit: 500 });
    events.push(...page);
    if (page.length < 500) return events;
    after = page.at(-1)!.seq;
  }
}

/** The commits an earlier part of the run confirmed (a resumed run never repeats them). */
const ledgerOf = (events: readonly RunEvent[]): CommitRecord[] =>
  events.flatMap((e) =>
    e.type === 'chat_commit_recorded'
      ? [
          {
            path: e.payload.path,
            mode: e.payload.mode,
            messageId: e.payload.messageId,
            messageIndex: e.payload.messageIndex,
            round: e.payload.round,
          },
        ]
      : [],
  );

/** Where an earlier part of the run put its reply. */
function placeOf(events: readonly RunEvent[]): Place {
  const last = events.findLast((e) => e.type === 'chat_commit_completed');
  return last?.type === 'chat_commit_completed'
    ? { index: last.payload.messageIndex, swipeId: last.payload.swipeId }
    : { index: null, swipeId: 0 };
}
