import type { ToolHints } from '$lib/domain/events';
import type { Connection, ConnectionDraft } from '$lib/domain/connection';
import type { HearthError } from '$lib/domain/errors';
import type { DatabaseProblem } from '$lib/domain/database-problem';
import type { RunEvent } from '$lib/domain/events';
import type { JsonObject } from '$lib/domain/json';
import type { ImageRef } from '$lib/domain/model';
import type { ImageRefusal } from '$lib/domain/image';
import type { UserImageMime } from '$lib/domain/user-images';
import type { McpPermission, McpServer, McpServerDraft } from '$lib/domain/mcp';
import type { McpServerView, McpSignInCallback, McpToolRow, McpTryResult } from '$lib/runtime/mcp-servers';
import type { McpSignInStep } from '$lib/ports/mcp';
import type { ExtensionToolPermission } from '$lib/domain/extension';
import type { SkillScope } from '$lib/domain/skill';
import type { InstalledSkill } from '$lib/ports/skills';
import type { SkillInspection } from '$lib/runtime/skills';
import type { ExtensionInspection, ExtensionTryResult, ExtensionView } from '$lib/runtime/extensions';
import type { ModelMode, ProfileProblem, ProfileScope, ProfileV5 } from '$lib/domain/profile';
import type { ProfileIssue } from '$lib/ports/profiles';
import type { StorageUse } from '$lib/domain/storage-quota';
import type {
  PrunedLevel,
  AutoRetentionReport,
  RetentionPolicy,
  RetentionPreview,
  RetentionResult,
  UnreferencedStates,
} from '$lib/domain/retention';
import type { RunId, RunRecord, RunTarget } from '$lib/domain/run';
import type { EngineProgress, RunUpdate } from '$lib/domain/run-update';
import type { SessionMessage, SessionRecord, SessionSummary } from '$lib/domain/session';
import type { CharacterCard } from '$lib/chat/card';
import type { Lorebook } from '$lib/chat/lorebook';
import type { Preset } from '$lib/chat/preset/preset';
import type { AuthorsNote, CharacterNote } from '$lib/chat/prompt/authors-note';
import type {
  CharacterRecord,
  ChatMessageRow,
  ChatPatch,
  ChatRecord,
  ChatSummary,
  LorebookRecord,
  LorebookSource,
  PersonaRecord,
} from '$lib/chat/records';
import type { StoredIssue } from '$lib/ports/characters';
import type { CharacterImportResult } from '$lib/runtime/imported-content';
import type { StLibrarySummary, StLibraryUpdate } from '$lib/runtime/st-library-import';
import type { ChatPrompt } from '$lib/runtime/chat-prompt';
import type { PresetDetail, PresetSummary } from '$lib/runtime/presets';

export type { StLibrarySummary, StLibraryUpdate };
export type { AuthorsNote, CharacterNote };
import type {
  BackupInspection,
  BackupProgress,
  ExportedBackup,
  RestoreChoices,
  RestoreSummary,
} from '$lib/domain/backup';

/** A workspace entry as the UI sees it (visible roots only). */
export interface WorkspaceItem {
  path: string;
  kind: 'file' | 'directory';
  size: number;
}

export interface WorkspaceFile {
  path: string;
  bytes: Uint8Array;
  sha256: string;
}

export type ConnectionTestResult =
  { ok: true; reply: string; models?: string[] } | { ok: false; error: HearthError; hint: string };

export interface StorageEstimate {
  usage: number;
  quota: number;
  persisted: boolean;
  /** Bytes per storage kind where the browser reports them (Chromium: indexedDB, fileSystem, …). */
  details?: Record<string, number>;
  /** When Hearth asked the browser for persistent storage, and its answer; absent: never asked. */
  persistAsked?: { at: number; granted: boolean };
}

/** Sessions and their runs. */
export type SessionMethods = {
  'sessions.list': (p: void) => SessionSummary[];
  'sessions.create': (p: { title?: string; connectionId?: string }) => SessionRecord;
  'sessions.get': (p: { sessionId: string }) => {
    session: SessionRecord;
    messages: SessionMessage[];
    runs: RunRecord[];
  };
  'sessions.update': (p: { sessionId: string; title?: string; connectionId?: string }) => SessionRecord;
  'sessions.delete': (p: { sessionId: string }) => void;
};

/** Runs of every kind (Session and Chat), wherever they run: this tab or another. */
export type RunMethods = {
  'runs.cancel': (p: { runId: RunId }) => void;
  'runs.get': (p: { runId: RunId }) => RunRecord;
  /** Adds an instruction to a working run; it is merged into the next model request. */
  'runs.guide': (p: { runId: RunId; text: string; clientGuidanceId?: string }) => {
    guidanceId: string;
    pendingCount: number;
  };
  /** The person's answer to a call waiting for approval (D20); refused when it no longer waits. */
  /** `arguments`: the person's edit of the call's arguments, approved with them. */
  'runs.decide': (p: {
    runId: RunId;
    approvalId: string;
    decision: ApprovalDecision;
    arguments?: JsonObject;
  }) => void;
  /** A file the run stored (model responses, tool arguments and results, checkpoints). */
  'runs.file': (p: { runId: RunId; path: string }) => WorkspaceFile;
  'runs.events': (p: { runId: RunId; afterSeq?: number; beforeSeq?: number; limit?: number }) => RunEvent[];
};

export type RunStreams = {
  /** Replays a run's journal, then follows it live until it ends. */
  'runs.watch': (p: { runId: RunId }) => RunUpdate;
  /** Continues an interrupted (or retryably failed) run as the same run, until it ends. */
  'runs.resume': (p: { runId: RunId }) => RunUpdate;
};

/** What the person answers to a call that asks first. */
export type ApprovalDecision = 'approve' | 'deny' | 'always';

/** A call of one of this tab's runs that waits for the person, as the page is told of it. */
export interface PendingApproval {
  runId: RunId;
  /** Where the run's conversation is (to open it). */
  target: RunTarget;
  approvalId: string;
  invocationId: string;
  callId: string;
  toolId: string;
  name: string;
  callName: string;
  origin: string;
  argumentsRef: string;
  hints?: ToolHints;
}

/**
 * What the runtime worker asks of its page, over the same RPC in the other direction: today,
 * telling it when one of this tab's runs waits for the person, and when it no longer does, and
 * when this tab can no longer use the database.
 */
export type PageMethods = {
  'page.approvalRequested': (p: PendingApproval) => null;
  'page.approvalSettled': (p: { runId: RunId; approvalId: string }) => null;
  'page.databaseProblem': (p: DatabaseProblem) => null;
};

/** A session's workspace files (visible roots only). */
export type WorkspaceMethods = {
  'workspace.list': (p: { sessionId: string; dir?: string }) => WorkspaceItem[];
  'workspace.read': (p: { sessionId: string; path: string }) => WorkspaceFile;
  /**
   * The page's sandbox host (`client/sandbox-host.ts`), through which the runtime starts the
   * shell's sandbox workers. Sent once, when the page starts the runtime.
   */
  'workspace.attachSandboxHost': (p: { port: MessagePort }) => null;
  /**
   * A conversation with this profile opened; its first tool calls are likely soon. When the
   * profile has the shell, its Python starts loading in the background (once; the first `python`
   * call then waits less or not at all). For a session, its visible files are read into the
   * runtime's cache meanwhile (the first search then reads memory).
   */
  'workspace.warm': (p: { profileId: string; sessionId?: string }) => null;
  /** Adds files under `dir` (a writable root); a taken name gets ` (2)`. Returns the paths written. */
  'workspace.upload': (p: {
    sessionId: string;
    dir: string;
    files: { name: string; bytes: Uint8Array }[];
  }) => string[];
};

export type WorkspaceExportUpdate =
  | { type: 'progress'; files: number; totalFiles: number; bytes: number; totalBytes: number }
  | { type: 'done'; fileName: string; bytes: Uint8Array };

/** A command the person runs in a session's shell panel: engine progress, then its result. */
export type ShellPanelUpdate =
  | { type: 'progress'; progress: EngineProgress }
  | { type: 'done'; content: string; exitCode: number | null; isError: boolean; changedPaths: string[] };

export type WorkspaceStreams = {
  /** Runs a command in the session's workspace with the agent's shell (same sandbox, same limits). */
  'workspace.shell': (p: { sessionId: string; command: string; workdir?: string }) => ShellPanelUpdate;
  /**
   * Zips every visible file, reporting progress as it reads. With `runId`: a report of that run
   * too (its record, journal and stored files), for a bug report. Never any API key.
   */
  'workspace.export': (p: { sessionId: string; runId?: RunId }) => WorkspaceExportUpdate;
};

export type SessionStreams = {
  /**
   * Sends a message; items arrive from the run's start until it ends. Leaving early detaches.
   * `images`: the person's, as `images.normalize` gave them (`{ path: dataUrl, mimeType }`).
   */
  'sessions.send': (p: { sessionId: string; text: string; images?: ImageRef[] }) => RunUpdate;
};

/** An image the person attached, after the one normalization (tools.md §11). */
export type NormalizedUpload =
  | {
      ok: true;
      /** `data:<mimeType>;base64,…`: what a message keeps as its image's `path`. */
      dataUrl: string;
      mimeType: UserImageMime;
      /** Upright size, in pixels. */
      width: number;
      height: number;
      /** Bytes of the image (not of the data URL). */
      byteLength: number;
      /** The file's own bytes (within the limits), else converted to JPEG. */
      kept: boolean;
    }
  /** Not attached: GIF or another format, damaged, too large, a decompression bomb. */
  | { ok: false; refusal: ImageRefusal };

/** Images from the person: attach, paste and drop in the composers. */
export type ImageMethods = {
  /**
   * Normalizes an image file in the runtime worker, never on the page: PNG, JPEG and WebP within
   * the limits are kept, the rest that decodes becomes a JPEG of at most 1280 px; anything else is
   * refused with a message for the person. Transfer `bytes`.
   */
  'images.normalize': (p: { bytes: Uint8Array }) => NormalizedUpload;
};

/** Model connections. */
export type ConnectionMethods = {
  'connections.list': (p: void) => { connections: Connection[]; defaultConnectionId: string };
  'connections.save': (p: ConnectionDraft) => Connection;
  'connections.delete': (p: { id: string }) => void;
  'connections.setDefault': (p: { id: string }) => void;
  'connections.test': (p: { draft: ConnectionDraft }) => ConnectionTestResult;
  /** The provider's model list, for the model picker. */
  'connections.models': (p: { draft: ConnectionDraft }) => string[];
};

/** The browser's answer to a persistent-storage request. */
export interface PersistResult {
  /** The browser's answer; `false` also when it could not be asked. */
  granted: boolean;
  /**
   * Who asked: `persist()` is exposed to windows only (Storage Standard), so the page asks and
   * passes the answer on; `worker` where a worker can ask itself; `none` when nobody could.
   */
  askedBy: 'page' | 'worker' | 'none';
  /** Usage, quota and `persisted()` read after the request. */
  estimate: StorageEstimate;
}

/** A previewed run with its session's title, for the settings page. */
/** `titles`: what each run answered, by run id ("Session: …", "Chat with …: …"). */
export type RetentionPreviewResult = RetentionPreview & {
  titles: Record<string, string>;
  states: UnreferencedStates;
};

export type RetentionApplyUpdate =
  | { type: 'progress'; done: number; total: number }
  | { type: 'done'; result: RetentionResult; states: UnreferencedStates };

/** Storage (usage, quota, persistence) and retention settings. */
export type SettingsMethods = {
  'storage.estimate': (p: void) => StorageEstimate;
  /** Every session and chat with the bytes of its messages and files, the largest first (reads them all). */
  'storage.use': (p: void) => StorageUse;
  /**
   * `pageAnswer`: what `navigator.storage.persist()` answered on the page (the client asks there).
   * The request and its answer are remembered (`persistAsked`).
   */
  'storage.persist': (p: { pageAnswer?: boolean }) => PersistResult;
  /** The saved retention policy, or the defaults (DEFAULT_RETENTION). */
  'settings.retention.get': (p: void) => RetentionPolicy;
  /** What the last automatic pass freed or met, or null before any did something. */
  'settings.retention.lastAuto': (p: void) => AutoRetentionReport | null;
  /** Validates (`settings.invalid`) and saves the policy; an automatic one is applied soon after. */
  'settings.retention.set': (p: RetentionPolicy) => RetentionPolicy;
  /** The dry run: runs affected and what would be freed, under `policy` (default: the saved one). */
  'settings.retention.preview': (p: { policy?: RetentionPolicy }) => RetentionPreviewResult;
};

export type SettingsStreams = {
  /**
   * Prunes finished runs under `policy` (default: the saved one), reporting progress. `only`:
   * the runs a preview showed; nothing beyond them is deleted. Active runs are never touched.
   */
  'settings.retention.apply': (p: {
    policy?: RetentionPolicy;
    only?: { runId: RunId; prune: PrunedLevel }[];
  }) => RetentionApplyUpdate;
};

/** A profile as lists show it. */
export interface ProfileSummary {
  id: string;
  displayName: string;
  description?: string;
  /** `session` only for the shared Session profile; every other profile is a Chat profile. */
  scope: ProfileScope;
  directRunnable: boolean;
  modelMode: ModelMode;
  /** One of the built-in ids (`default-writer`, `session`). */
  builtIn: boolean;
  /** Shown read-only: a built-in as shipped (copy `default-writer`, customize `session`). */
  readOnly: boolean;
  /** A saved profile that replaces a built-in (only `session` can be customized). */
  customized: boolean;
}

export interface ProfileDetail {
  profile: ProfileV5;
  summary: ProfileSummary;
  /** What validation finds in the profile now (tools may have gone since it was saved). */
  problems: ProfileProblem[];
  /** MCP and extension tools their pages offer now: every profile gets them unless it denies them. */
  externalTools: ExternalToolRow[];
}

/** An MCP or extension tool as the profile editor lists it, under its server or extension. */
export interface ExternalToolRow {
  toolId: string;
  name: string;
  source: 'mcp' | 'extension';
  /** The server's or extension's name. */
  origin: string;
  scopes: ('chat' | 'session')[];
  /** Why runs do not get it now (its extension is disabled, did not load). */
  withheld?: string;
}

export type ProfileImportResult =
  | { index: number; ok: true; id: string; displayName: string; renamedFrom?: string }
  | { index: number; ok: false; id?: string; displayName?: string; problems: ProfileProblem[] };

export type { ProfileIssue, ProfileProblem, ProfileV5 };

/** Agent profiles (runtime.md §3): built-ins first, then saved ones. */
export type ProfileMethods = {
  'profiles.list': (p: void) => { profiles: ProfileSummary[]; issues: ProfileIssue[] };
  'profiles.get': (p: { id: string }) => ProfileDetail;
  /** A new Chat profile with the Default Writer's choices (shell enabled). */
  'profiles.create': (p: { displayName: string }) => ProfileV5;
  /**
   * Saves a profile document of any supported schema (migrated, then validated). `replaces`
   * is the id it was loaded as: a different id renames it. `default-writer` is read-only.
   */
  'profiles.save': (p: { profile: unknown; replaces?: string }) => ProfileV5;
  /** Saves a copy under a new id (`<id>-copy`, `-copy-2`, …) and name. */
  'profiles.copy': (p: { id: string }) => ProfileV5;
  /** Deletes a saved profile; deleting the customized Session profile restores the built-in. */
  'profiles.delete': (p: { id: string }) => void;
  /** Imports a profile document, an array of them, or a package `{version: 1, items}`. */
  'profiles.import': (p: { text: string }) => { items: ProfileImportResult[] };
  /** JSON text with model bindings stripped: one profile as its document, several as a package. */
  'profiles.export': (p: { ids: string[] }) => { fileName: string; text: string };
  /** Live checks for the JSON editor: every problem with its path; `profile` when it decodes. */
  'profiles.validate': (p: { text: string; original?: string }) => {
    problems: ProfileProblem[];
    profile?: ProfileV5;
  };
};

/** A file made for download: its name, type and bytes. */
export interface ExportedFile {
  fileName: string;
  mimeType: string;
  bytes: Uint8Array;
}

export type {
  CharacterCard,
  CharacterRecord,
  Lorebook,
  LorebookRecord,
  LorebookSource,
  PersonaRecord,
  Preset,
  StoredIssue,
};

/** A character as the list shows it. */
export interface CharacterSummary {
  id: string;
  name: string;
  creator: string;
  tags: string[];
  /** The avatar PNG, or null. */
  avatar: Uint8Array | null;
  lorebookIds: string[];
  createdAt: number;
  updatedAt: number;
  /** SillyTavern's favourite mark (the card's `extensions.fav`). */
  favorite: boolean;
  /** How many chats the character has, and when the newest of them last changed (null: none). */
  chats: number;
  lastChattedAt: number | null;
  /** The card's text a search looks in: description, personality, scenario, creator's notes, first message. */
  searchText: string;
}

/** The card fields the editor changes; every other field of the stored card is kept as it is. */
export type CharacterCardPatch = Partial<
  Pick<
    CharacterCard,
    | 'name'
    | 'description'
    | 'personality'
    | 'scenario'
    | 'firstMes'
    | 'alternateGreetings'
    | 'mesExample'
    | 'creatorNotes'
    | 'systemPrompt'
    | 'postHistoryInstructions'
    | 'tags'
    | 'creator'
    | 'characterVersion'
  >
>;

/** Characters (SillyTavern cards V1, V2, V3 as PNG, JSON or CHARX). */
export type CharacterMethods = {
  /** Ordered by name; unreadable rows are reported as issues. */
  'characters.list': (p: void) => { characters: CharacterSummary[]; issues: StoredIssue[] };
  'characters.get': (p: { id: string }) => CharacterRecord;
  'characters.create': (p: { name: string }) => CharacterRecord;
  /** Marks or unmarks the character as a favourite (written into the card as SillyTavern does). */
  'characters.setFavorite': (p: { id: string; favorite: boolean }) => CharacterSummary;
  /**
   * Changes card fields, the avatar (a PNG; null removes it), the attached lorebooks (ids of
   * existing lorebooks, in order: the first is written into exported cards) and the character's
   * note (null removes it).
   */
  'characters.update': (p: {
    id: string;
    card?: CharacterCardPatch;
    avatar?: Uint8Array | null;
    lorebookIds?: string[];
    note?: CharacterNote | null;
  }) => CharacterRecord;
  /** A copy named “… (copy)” with the same avatar and attached lorebooks. */
  'characters.duplicate': (p: { id: string }) => CharacterRecord;
  /** Deletes the character and its chats; its lorebooks stay. */
  'characters.delete': (p: { id: string }) => void;
  /** Reads a card file; a broken or hostile card is refused with a message naming the problem, nothing saved. */
  'characters.import': (p: { fileName: string; bytes: Uint8Array }) => CharacterImportResult;
  /** A V3 card (with V2 copy): PNG with `chara` and `ccv3` chunks (default when there is an avatar) or JSON. */
  'characters.export': (p: { id: string; format?: 'png' | 'json' }) => ExportedFile;
};

/** Chat Completion presets (D23): SillyTavern's files, and the one chats use by default. */
export type PresetMethods = {
  'presets.list': (p: void) => { presets: PresetSummary[]; selectedId: string; issues: StoredIssue[] };
  /** A SillyTavern Chat Completion preset file (secrets are never taken). */
  'presets.import': (p: { fileName: string; bytes: Uint8Array }) => {
    preset: PresetSummary;
    problems: string[];
  };
  /** The whole preset for the editor; the built-in Default is read-only. */
  'presets.get': (p: { id: string }) => PresetDetail;
  /** Saves the whole preset (validated; the Default cannot be saved: duplicate it). */
  'presets.save': (p: { id: string; preset: Preset }) => PresetDetail;
  /** An editable copy named “… (copy)”. */
  'presets.duplicate': (p: { id: string }) => PresetSummary;
  'presets.export': (p: { id: string }) => ExportedFile;
  'presets.delete': (p: { id: string }) => void;
  /** The preset chats without their own choice use. */
  'presets.select': (p: { id: string }) => void;
};

/** Personas (who the person is in a chat) and the default persona. */
export type PersonaMethods = {
  'personas.list': (p: void) => {
    personas: PersonaRecord[];
    defaultPersonaId: string | null;
    issues: StoredIssue[];
  };
  'personas.create': (p: { name: string; description?: string; avatar?: Uint8Array }) => PersonaRecord;
  /** `avatar: null` removes the avatar. */
  'personas.update': (p: {
    id: string;
    name?: string;
    description?: string;
    avatar?: Uint8Array | null;
  }) => PersonaRecord;
  /** Deletes the persona; chats that chose it use the default persona. */
  'personas.delete': (p: { id: string }) => void;
  /** null: no default persona. */
  'personas.setDefault': (p: { id: string | null }) => void;
};

/** A lorebook as the list shows it. */
export interface LorebookSummary {
  id: string;
  name: string;
  description: string;
  entryCount: number;
  source: LorebookSource | null;
  /** Attached to every chat. */
  global: boolean;
  /** Characters it is attached to. */
  characterIds: string[];
  updatedAt: number;
}

/** Lorebooks (SillyTavern world info), attached globally, per character (and per chat). */
export type LorebookMethods = {
  'lorebooks.list': (p: void) => { lorebooks: LorebookSummary[]; issues: StoredIssue[] };
  'lorebooks.get': (p: { id: string }) => LorebookRecord;
  'lorebooks.create': (p: { name: string }) => LorebookRecord;
  /** Saves the whole book (validated: a name, unique entry uids). */
  'lorebooks.update': (p: { id: string; book: Lorebook }) => LorebookRecord;
  /** Deletes the lorebook and detaches it from characters, chats and the global list. */
  'lorebooks.delete': (p: { id: string }) => void;
  /** A SillyTavern world info JSON file (also `lorebook_v3` and `character_book` objects). */
  'lorebooks.import': (p: { fileName: string; bytes: Uint8Array }) => LorebookRecord;
  /** SillyTavern world info JSON. */
  'lorebooks.export': (p: { id: string }) => ExportedFile;
  /** Attaches to (or detaches from) every chat; returns the global lorebook ids. */
  'lorebooks.setGlobal': (p: { id: string; global: boolean }) => string[];
};

/** `ChatSummary`: a chat as the character's chat list shows it. */
export type { ChatMessageRow, ChatPatch, ChatRecord, ChatSummary };

/** What "Show the prompt" lists, with the model it was counted for. */
export type ChatPromptPreview = ChatPrompt['preview'] & { model: string };
export type { PresetDetail, PresetSummary };

/** A chat as its page shows it. */
export interface ChatView {
  chat: ChatRecord;
  character: { id: string; name: string; avatar: Uint8Array | null };
  persona: { id: string | null; name: string; avatar: Uint8Array | null };
  /** How many messages the chat has; `messages` is only the newest page of them. */
  messageCount: number;
  messages: ChatMessageRow[];
  /** Runs of this chat (their `target` is `{ kind: 'chat'; chatId }`). */
  runs: RunRecord[];
  /** The oldest message the newest reply's prompt held, when older ones did not fit; else null. */
  memoryFrom: number | null;
}

/** Chats with characters (SillyTavern-compatible; JSONL import and export). */
export type ChatMethods = {
  'chats.list': (p: { characterId: string }) => ChatSummary[];
  /** Seeds the greeting (alternate greetings as swipes). */
  'chats.create': (p: { characterId: string; personaId?: string | null }) => ChatRecord;
  'chats.get': (p: { chatId: string }) => ChatView;
  /** A page of messages, `from <= index < to` (a page is at most 200). */
  'chats.messages': (p: { chatId: string; from: number; to: number }) => ChatMessageRow[];
  /** Find in chat: indexes of the messages whose shown text contains `text` (case-insensitive). */
  'chats.find': (p: { chatId: string; text: string }) => number[];
  /** "Show the prompt": the messages the next reply would send, each with its source and tokens. */
  'chats.preview': (p: { chatId: string; draft?: string }) => ChatPromptPreview;
  'chats.update': (p: { chatId: string } & ChatPatch) => ChatRecord;
  /** The chat's author's note (null: none); refused with `chat.invalid_authors_note` when malformed. */
  'chats.setAuthorsNote': (p: { chatId: string; note: AuthorsNote | null }) => ChatRecord;
  'chats.delete': (p: { chatId: string }) => void;
  /** Edits the shown swipe. */
  'chats.editMessage': (p: { chatId: string; index: number; text: string }) => ChatMessageRow;
  'chats.deleteMessage': (p: { chatId: string; index: number }) => void;
  /** A failed run's saved plain text (`output/direct_output.md`) becomes the reply. */
  'chats.useDirectOutput': (p: { runId: RunId }) => ChatMessageRow;
  'chats.selectSwipe': (p: { chatId: string; index: number; swipeId: number }) => ChatMessageRow;
  'chats.importJsonl': (p: { characterId: string; fileName: string; bytes: Uint8Array }) => {
    chat: ChatRecord;
    problems: { line: number; message: string }[];
  };
  'chats.exportJsonl': (p: { chatId: string }) => { fileName: string; bytes: Uint8Array };
};

export type ChatStreams = {
  /** Appends the person's message (with `images`, normalized), then an agent run writes the reply. */
  'chats.send': (p: { chatId: string; text: string; images?: ImageRef[] }) => RunUpdate;
  /** A new swipe on the last assistant message (D12). */
  'chats.regenerate': (p: { chatId: string }) => RunUpdate;
  /** More of the last reply: the agent's commit is appended to it. */
  'chats.continue': (p: { chatId: string }) => RunUpdate;
};

/** A SillyTavern user-data folder as the person chose it: its files by relative path, or one zip of it. */
export type StLibrarySource =
  { kind: 'folder'; files: { path: string; file: Blob }[] } | { kind: 'zip'; file: Blob };

export type LibraryStreams = {
  /**
   * Imports a SillyTavern library (cards, chats, lorebooks, personas and where the books are
   * attached), reporting progress file by file. A file that cannot be imported is skipped with
   * why; what is already in Hearth the same is skipped too, a changed one imported as new.
   */
  'library.importSillyTavern': (p: StLibrarySource) => StLibraryUpdate;
};

/** Requests the page may make of the runtime worker: the union of every area above. */
/** MCP servers (tools.md §15): registrations, discovery, permissions, and a call to try a tool. */
export type McpMethods = {
  'mcp.list': (p: void) => McpServerView[];
  /** A new registration, Paused until the person makes it Active. */
  'mcp.create': (p: McpServerDraft) => McpServerView;
  'mcp.update': (p: { id: string; draft: McpServerDraft }) => McpServerView;
  'mcp.setState': (p: { id: string; state: McpServer['state'] }) => McpServerView;
  'mcp.remove': (p: { id: string }) => void;
  /** Asks the server for its tools now (Discover, Refresh); new tools arrive Off. */
  'mcp.discover': (p: { id: string }) => McpServerView;
  /** `tool` null: every discovered tool of the server. */
  'mcp.setPermission': (p: { id: string; tool: string | null; permission: McpPermission }) => McpServerView;
  'mcp.tryCall': (p: { id: string; tool: string; arguments: JsonObject }) => McpTryResult;
  /** Starts an OAuth sign-in; `redirectUrl` is the app's static callback page. */
  'mcp.signIn': (p: { id: string; redirectUrl: string }) => McpSignInStep;
  /** What the callback page broadcast; its `state` is checked against the sign-ins under way. */
  'mcp.finishSignIn': (p: McpSignInCallback) => McpServerView;
  'mcp.signOut': (p: { id: string }) => McpServerView;
};

export type { McpServerView, McpSignInCallback, McpSignInStep, McpToolRow, McpTryResult };

/** A file of a package the person chose (a module, a zip, or a folder's files by relative path). */
export type PackageUpload = { path: string; bytes: Uint8Array }[];

/** Extensions (tools.md §14): install (inspected first), enable, permissions, update, remove. */
export type ExtensionMethods = {
  'extensions.list': (p: void) => ExtensionView[];
  /** What installing would do; refuses a bad package with why. A lone zip is unpacked first. */
  'extensions.inspect': (p: { files: PackageUpload }) => ExtensionInspection;
  /** Installs or updates; `hosts`: the declared hosts the person accepted. */
  'extensions.install': (p: { files: PackageUpload; hosts: string[]; reviewed: string }) => ExtensionView;
  'extensions.setEnabled': (p: { id: string; enabled: boolean }) => ExtensionView;
  'extensions.setPermission': (p: {
    id: string;
    tool: string;
    permission: ExtensionToolPermission;
  }) => ExtensionView;
  'extensions.remove': (p: { id: string }) => void;
  /** One call with arguments the person typed, whatever the tool's permission. */
  'extensions.tryCall': (p: { id: string; tool: string; arguments: JsonObject }) => ExtensionTryResult;
  /**
   * The page's extension host (`client/extension-host.ts`), through which the runtime starts
   * extensions' workers. Sent once, when the page starts the runtime.
   */
  'extensions.attachHost': (p: { port: MessagePort }) => null;
};

export type { ExtensionInspection, ExtensionTryResult, ExtensionView };

/** Skills (tools.md §16): install (inspected first), scopes, files, export, removal. */
export type SkillMethods = {
  'skills.list': (p: void) => InstalledSkill[];
  /** What installing would do, skill by skill; refuses a bad package with why. A lone zip is unpacked first. */
  'skills.inspect': (p: { files: PackageUpload }) => SkillInspection[];
  /** `decisions`: for each skill whose name a different skill has, replace it or skip it. */
  'skills.install': (p: {
    files: PackageUpload;
    scope: SkillScope;
    source: string;
    decisions?: Record<string, 'replace' | 'skip'>;
  }) => InstalledSkill[];
  'skills.setScopes': (p: { name: string; scopes: SkillScope[] }) => InstalledSkill;
  'skills.read': (p: { name: string; path: string }) => { path: string; bytes: Uint8Array };
  /** The skill's own files as a zip. */
  'skills.export': (p: { name: string }) => { fileName: string; bytes: Uint8Array };
  'skills.remove': (p: { name: string }) => void;
  /** The skills a character's card carries (tools.md §16.3), as installing them would go. */
  'skills.embedded': (p: { characterId: string }) => SkillInspection[];
  /** Installs them for that character (after the person confirmed). */
  'skills.installEmbedded': (p: {
    characterId: string;
    decisions?: Record<string, 'replace' | 'skip'>;
  }) => InstalledSkill[];
  /** The skills a profile's agents get (in a chat with `characterId`, also the character's). */
  'skills.effective': (p: { profileId: string; characterId?: string }) => string[];
};

export type { InstalledSkill, SkillInspection, SkillScope };

export type HearthMethods = SessionMethods &
  ImageMethods &
  McpMethods &
  ExtensionMethods &
  SkillMethods &
  RunMethods &
  WorkspaceMethods &
  ConnectionMethods &
  ProfileMethods &
  SettingsMethods &
  CharacterMethods &
  PersonaMethods &
  PresetMethods &
  LorebookMethods &
  ChatMethods;

/** Long work on the whole app's data: progress, then its result. */
export type BackupUpdate<T> = { type: 'progress'; progress: BackupProgress } | { type: 'done'; result: T };

/** Whole-app backup and restore (the archive itself is a file in OPFS or the person's). */
export type BackupStreams = {
  /** Writes `exports/<fileName>` in OPFS, for the page to download. */
  'backup.export': (p: { includeRuns: boolean }) => BackupUpdate<ExportedBackup>;
  /** Checks an archive and compares it with this browser's data (the dry run). */
  'backup.inspect': (p: { file: Blob }) => BackupUpdate<{ token: string; inspection: BackupInspection }>;
  /** Restores what `backup.inspect` found, with the person's choices for conflicts. */
  'backup.restore': (p: { token: string; choices: RestoreChoices }) => BackupUpdate<RestoreSummary>;
};

/** Streams: items arrive until the stream ends; leaving early detaches. */
export type HearthStreams = SessionStreams &
  RunStreams &
  WorkspaceStreams &
  SettingsStreams &
  ChatStreams &
  BackupStreams &
  LibraryStreams;

/** The page's side of the RPC: what the runtime may ask of it (PageMethods). */
export type PageStreams = Record<never, never>;
