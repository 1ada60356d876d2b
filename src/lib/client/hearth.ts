import type { JsonObject } from '$lib/domain/json';
import type { ImageRef } from '$lib/domain/model';
import type { McpPermission, McpServer, McpServerDraft } from '$lib/domain/mcp';
import type { ExtensionToolPermission } from '$lib/domain/extension';
import type { SkillScope } from '$lib/domain/skill';
import type { ConnectionDraft } from '$lib/domain/connection';
import type { DatabaseProblem } from '$lib/domain/database-problem';
import type { PrunedLevel, RetentionPolicy } from '$lib/domain/retention';
import type { RunId } from '$lib/domain/run';
import type { RestoreChoices } from '$lib/domain/backup';
import { EXPORTS_DIR } from '$lib/domain/backup-exports';
import type { Endpoint } from '$lib/worker/rpc';
import { SettledCallsRpc, type SettledCall } from './settled-calls';
import { serveRpc } from '$lib/worker/rpc';
import type {
  ApprovalDecision,
  AuthorsNote,
  CharacterCardPatch,
  CharacterNote,
  ChatPatch,
  HearthMethods,
  HearthStreams,
  Lorebook,
  McpSignInCallback,
  PageMethods,
  PageStreams,
  PendingApproval,
  PackageUpload,
  Preset,
  StLibrarySource,
} from '$lib/worker/protocol';

/** The buffer behind `bytes`, to transfer rather than copy. */
const transferOf = (bytes: Uint8Array | null | undefined): Transferable[] =>
  bytes && bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : [];

/**
 * The page-side API (`window.hearth`): what the UI and extensions call. Every method forwards
 * to the runtime worker; failures reject with a HearthFailure carrying a stable code.
 */
export class HearthClient {
  readonly #rpc: SettledCallsRpc<HearthMethods, HearthStreams>;
  readonly #approvals = new Map<string, PendingApproval>();
  readonly #approvalListeners = new Set<() => void>();
  #databaseProblem: DatabaseProblem | null = null;
  readonly #databaseListeners = new Set<() => void>();

  /**
   * `sandboxHost`, `extensionHost`: the ports of the page's sandbox and extension hosts, handed to
   * the runtime for the shell and for extensions.
   */
  constructor(endpoint: Endpoint, options: { sandboxHost?: MessagePort; extensionHost?: MessagePort } = {}) {
    this.#rpc = new SettledCallsRpc(endpoint);
    // The other direction: what the runtime tells this page.
    serveRpc<PageMethods, PageStreams>(endpoint, {
      methods: {
        'page.approvalRequested': async (p) => (
          this.#approvals.set(p.approvalId, p),
          this.#approvalsChanged()
        ),
        'page.approvalSettled': async (p) => (this.#approvals.delete(p.approvalId), this.#approvalsChanged()),
        'page.databaseProblem': async (p) => {
          this.#databaseProblem = p;
          for (const listener of this.#databaseListeners) listener();
          return null;
        },
      },
      streams: {},
    });
    const port = options.sandboxHost;
    if (port) void this.#rpc.call('workspace.attachSandboxHost', { port }, { transfer: [port] });
    const extensionHost = options.extensionHost;
    if (extensionHost)
      void this.#rpc.call('extensions.attachHost', { port: extensionHost }, { transfer: [extensionHost] });
  }

  #approvalsChanged(): null {
    for (const listener of this.#approvalListeners) listener();
    return null;
  }

  /** Calls of this tab's runs waiting for the person (the run's own view shows them too). */
  readonly approvals = {
    pending: (): PendingApproval[] => [...this.#approvals.values()],
    /** Calls `listener` whenever the list changes; returns the unsubscribe. */
    subscribe: (listener: () => void): (() => void) => {
      this.#approvalListeners.add(listener);
      return () => this.#approvalListeners.delete(listener);
    },
  };

  /** Why this tab cannot use the database (it must be reloaded), once the runtime says so. */
  readonly database = {
    problem: (): DatabaseProblem | null => this.#databaseProblem,
    /** Calls `listener` when the problem is known; returns the unsubscribe. */
    subscribe: (listener: () => void): (() => void) => {
      this.#databaseListeners.add(listener);
      return () => this.#databaseListeners.delete(listener);
    },
  };

  readonly sessions = {
    list: () => this.#rpc.call('sessions.list', undefined),
    create: (input: { title?: string; connectionId?: string } = {}) =>
      this.#rpc.call('sessions.create', input),
    get: (sessionId: string) => this.#rpc.call('sessions.get', { sessionId }),
    update: (sessionId: string, patch: { title?: string; connectionId?: string }) =>
      this.#rpc.call('sessions.update', { sessionId, ...patch }),
    delete: (sessionId: string) => this.#rpc.call('sessions.delete', { sessionId }),
    /**
     * Sends a message and follows the run it starts until the run ends. `images`: the person's,
     * each as `images.normalize` gave it (`{ path: dataUrl, mimeType }`).
     */
    send: (sessionId: string, text: string, images?: ImageRef[]) =>
      this.#rpc.stream('sessions.send', { sessionId, text, images }),
  };

  /** Images the person attaches, pastes or drops. */
  readonly images = {
    /**
     * The one normalization (tools.md §11), in the runtime worker: `{ ok: true, dataUrl, mimeType,
     * width, height }`, or `{ ok: false, refusal }` with a message to show. `bytes` is transferred:
     * the caller's buffer is detached afterwards.
     */
    normalize: (bytes: Uint8Array) =>
      this.#rpc.call('images.normalize', { bytes }, { transfer: transferOf(bytes) }),
  };

  readonly runs = {
    watch: (runId: RunId) => this.#rpc.stream('runs.watch', { runId }),
    resume: (runId: RunId) => this.#rpc.stream('runs.resume', { runId }),
    guide: (runId: RunId, text: string) => this.#rpc.call('runs.guide', { runId, text }),
    cancel: (runId: RunId) => this.#rpc.call('runs.cancel', { runId }),
    /** Answers a call waiting for approval; any tab following the run may. */
    decide: (runId: RunId, approvalId: string, decision: ApprovalDecision, args?: JsonObject) =>
      this.#rpc.call('runs.decide', { runId, approvalId, decision, arguments: args }),
    get: (runId: RunId) => this.#rpc.call('runs.get', { runId }),
    file: (runId: RunId, path: string) => this.#rpc.call('runs.file', { runId, path }),
    events: (runId: RunId, page: { afterSeq?: number; beforeSeq?: number; limit?: number } = {}) =>
      this.#rpc.call('runs.events', { runId, ...page }),
  };

  readonly workspace = {
    list: (sessionId: string, dir?: string) => this.#rpc.call('workspace.list', { sessionId, dir }),
    read: (sessionId: string, path: string) => this.#rpc.call('workspace.read', { sessionId, path }),
    upload: (sessionId: string, dir: string, files: { name: string; bytes: Uint8Array }[]) =>
      this.#rpc.call(
        'workspace.upload',
        { sessionId, dir, files },
        { transfer: files.map((f) => f.bytes.buffer as ArrayBuffer) },
      ),
    /** Zips the visible files: progress items, then one `done` with the archive. */
    export: (sessionId: string, runId?: RunId) => this.#rpc.stream('workspace.export', { sessionId, runId }),
    /** Runs a command with the agent's shell: progress items (first Python call), then `done`. */
    shell: (sessionId: string, command: string, workdir?: string) =>
      this.#rpc.stream('workspace.shell', { sessionId, command, workdir }),
    /** A conversation opened: its shell's Python starts loading, and a session's files are read ahead. */
    warm: (profileId: string, sessionId?: string) =>
      this.#rpc.call('workspace.warm', sessionId ? { profileId, sessionId } : { profileId }),
  };

  readonly connections = {
    list: () => this.#rpc.call('connections.list', undefined),
    save: (draft: ConnectionDraft) => this.#rpc.call('connections.save', draft),
    delete: (id: string) => this.#rpc.call('connections.delete', { id }),
    setDefault: (id: string) => this.#rpc.call('connections.setDefault', { id }),
    models: (draft: ConnectionDraft, signal?: AbortSignal) =>
      this.#rpc.call('connections.models', { draft }, { signal }),
    test: (draft: ConnectionDraft, signal?: AbortSignal) =>
      this.#rpc.call('connections.test', { draft }, { signal }),
  };

  /** Agent profiles (runtime.md §3). Documents of schema 1-5 are accepted and saved at schema 5. */
  /** MCP servers: registrations, discovery (a signal stops it), permissions and trying a tool. */
  /** Extensions: packages of JavaScript tools, each run isolated from the app (D22). */
  readonly extensions = {
    list: () => this.#rpc.call('extensions.list', undefined),
    inspect: (files: PackageUpload) => this.#rpc.call('extensions.inspect', { files }),
    /** `reviewed`: the inspection's hash the person saw; a package that differs now is refused. */
    install: (files: PackageUpload, hosts: string[], reviewed: string) =>
      this.#rpc.call('extensions.install', { files, hosts, reviewed }),
    setEnabled: (id: string, enabled: boolean) => this.#rpc.call('extensions.setEnabled', { id, enabled }),
    setPermission: (id: string, tool: string, permission: ExtensionToolPermission) =>
      this.#rpc.call('extensions.setPermission', { id, tool, permission }),
    remove: (id: string) => this.#rpc.call('extensions.remove', { id }),
    tryCall: (id: string, tool: string, args: JsonObject, signal?: AbortSignal) =>
      this.#rpc.call('extensions.tryCall', { id, tool, arguments: args }, { signal }),
  };

  /** Skills: folders that teach agents a way of working, mounted read-only at skills/ (tools.md §16). */
  readonly skills = {
    list: () => this.#rpc.call('skills.list', undefined),
    inspect: (files: PackageUpload) => this.#rpc.call('skills.inspect', { files }),
    install: (
      files: PackageUpload,
      options: { scope: SkillScope; source: string; decisions?: Record<string, 'replace' | 'skip'> },
    ) => this.#rpc.call('skills.install', { files, ...options }),
    setScopes: (name: string, scopes: SkillScope[]) => this.#rpc.call('skills.setScopes', { name, scopes }),
    read: (name: string, path: string) => this.#rpc.call('skills.read', { name, path }),
    export: (name: string) => this.#rpc.call('skills.export', { name }),
    remove: (name: string) => this.#rpc.call('skills.remove', { name }),
    embedded: (characterId: string) => this.#rpc.call('skills.embedded', { characterId }),
    installEmbedded: (characterId: string, decisions?: Record<string, 'replace' | 'skip'>) =>
      this.#rpc.call('skills.installEmbedded', { characterId, ...(decisions ? { decisions } : {}) }),
    effective: (profileId: string, characterId?: string) =>
      this.#rpc.call('skills.effective', { profileId, ...(characterId ? { characterId } : {}) }),
  };

  readonly mcp = {
    list: () => this.#rpc.call('mcp.list', undefined),
    create: (draft: McpServerDraft) => this.#rpc.call('mcp.create', draft),
    update: (id: string, draft: McpServerDraft) => this.#rpc.call('mcp.update', { id, draft }),
    setState: (id: string, state: McpServer['state']) => this.#rpc.call('mcp.setState', { id, state }),
    remove: (id: string) => this.#rpc.call('mcp.remove', { id }),
    discover: (id: string, signal?: AbortSignal) => this.#rpc.call('mcp.discover', { id }, { signal }),
    setPermission: (id: string, tool: string | null, permission: McpPermission) =>
      this.#rpc.call('mcp.setPermission', { id, tool, permission }),
    signIn: (id: string, redirectUrl: string, signal?: AbortSignal) =>
      this.#rpc.call('mcp.signIn', { id, redirectUrl }, { signal }),
    finishSignIn: (callback: McpSignInCallback, signal?: AbortSignal) =>
      this.#rpc.call('mcp.finishSignIn', callback, { signal }),
    signOut: (id: string) => this.#rpc.call('mcp.signOut', { id }),
    tryCall: (id: string, tool: string, args: JsonObject, signal?: AbortSignal) =>
      this.#rpc.call('mcp.tryCall', { id, tool, arguments: args }, { signal }),
  };

  readonly profiles = {
    list: () => this.#rpc.call('profiles.list', undefined),
    get: (id: string) => this.#rpc.call('profiles.get', { id }),
    create: (displayName: string) => this.#rpc.call('profiles.create', { displayName }),
    /** `replaces`: the id the profile was loaded as (a different id renames it). */
    save: (profile: unknown, replaces?: string) => this.#rpc.call('profiles.save', { profile, replaces }),
    copy: (id: string) => this.#rpc.call('profiles.copy', { id }),
    delete: (id: string) => this.#rpc.call('profiles.delete', { id }),
    import: (text: string) => this.#rpc.call('profiles.import', { text }),
    export: (ids: string[]) => this.#rpc.call('profiles.export', { ids }),
    validate: (text: string, original?: string, signal?: AbortSignal) =>
      this.#rpc.call('profiles.validate', { text, original }, { signal }),
  };

  /**
   * Characters (SillyTavern cards). Bytes (card files, avatars) are transferred to the worker:
   * the caller's buffer is detached afterwards.
   */
  readonly characters = {
    list: () => this.#rpc.call('characters.list', undefined),
    get: (id: string) => this.#rpc.call('characters.get', { id }),
    create: (name: string) => this.#rpc.call('characters.create', { name }),
    setFavorite: (id: string, favorite: boolean) =>
      this.#rpc.call('characters.setFavorite', { id, favorite }),
    /**
     * `avatar`: a PNG, or null to remove it; `lorebookIds`: attached lorebooks in order; `note`:
     * the character's note, or null to remove it.
     */
    update: (
      id: string,
      patch: {
        card?: CharacterCardPatch;
        avatar?: Uint8Array | null;
        lorebookIds?: string[];
        note?: CharacterNote | null;
      },
    ) => this.#rpc.call('characters.update', { id, ...patch }, { transfer: transferOf(patch.avatar) }),
    duplicate: (id: string) => this.#rpc.call('characters.duplicate', { id }),
    delete: (id: string) => this.#rpc.call('characters.delete', { id }),
    /** A card file (PNG, JSON or CHARX); refused with a coded error naming the problem. */
    import: (fileName: string, bytes: Uint8Array) =>
      this.#rpc.call('characters.import', { fileName, bytes }, { transfer: transferOf(bytes) }),
    /** PNG (default with an avatar) or JSON: `{fileName, mimeType, bytes}`. */
    export: (id: string, format?: 'png' | 'json') => this.#rpc.call('characters.export', { id, format }),
  };

  /** Personas and the default persona. */
  readonly personas = {
    list: () => this.#rpc.call('personas.list', undefined),
    create: (input: { name: string; description?: string; avatar?: Uint8Array }) =>
      this.#rpc.call('personas.create', input, { transfer: transferOf(input.avatar) }),
    /** `avatar: null` removes the avatar. */
    update: (id: string, patch: { name?: string; description?: string; avatar?: Uint8Array | null }) =>
      this.#rpc.call('personas.update', { id, ...patch }, { transfer: transferOf(patch.avatar) }),
    delete: (id: string) => this.#rpc.call('personas.delete', { id }),
    setDefault: (id: string | null) => this.#rpc.call('personas.setDefault', { id }),
  };

  /** Lorebooks (SillyTavern world info), attached globally or per character. */
  readonly lorebooks = {
    list: () => this.#rpc.call('lorebooks.list', undefined),
    get: (id: string) => this.#rpc.call('lorebooks.get', { id }),
    create: (name: string) => this.#rpc.call('lorebooks.create', { name }),
    update: (id: string, book: Lorebook) => this.#rpc.call('lorebooks.update', { id, book }),
    delete: (id: string) => this.#rpc.call('lorebooks.delete', { id }),
    /** A SillyTavern world info JSON file. */
    import: (fileName: string, bytes: Uint8Array) =>
      this.#rpc.call('lorebooks.import', { fileName, bytes }, { transfer: transferOf(bytes) }),
    export: (id: string) => this.#rpc.call('lorebooks.export', { id }),
    setGlobal: (id: string, global: boolean) => this.#rpc.call('lorebooks.setGlobal', { id, global }),
  };

  /** Chat Completion presets (SillyTavern's) and the one chats use by default. */
  readonly presets = {
    list: () => this.#rpc.call('presets.list', undefined),
    import: (fileName: string, bytes: Uint8Array) =>
      this.#rpc.call('presets.import', { fileName, bytes }, { transfer: transferOf(bytes) }),
    get: (id: string) => this.#rpc.call('presets.get', { id }),
    save: (id: string, preset: Preset) => this.#rpc.call('presets.save', { id, preset }),
    duplicate: (id: string) => this.#rpc.call('presets.duplicate', { id }),
    export: (id: string) => this.#rpc.call('presets.export', { id }),
    delete: (id: string) => this.#rpc.call('presets.delete', { id }),
    select: (id: string) => this.#rpc.call('presets.select', { id }),
  };

  /** Chats with characters; runs of chats are followed, stopped and guided through `runs`. */
  readonly chats = {
    list: (characterId: string) => this.#rpc.call('chats.list', { characterId }),
    /** A new chat seeded with the character's greeting (alternate greetings as swipes). */
    create: (characterId: string, personaId?: string | null) =>
      this.#rpc.call('chats.create', { characterId, personaId }),
    /** The chat with its newest page of messages. */
    get: (chatId: string) => this.#rpc.call('chats.get', { chatId }),
    /** Messages `from <= index < to` (at most 200). */
    messages: (chatId: string, from: number, to: number) =>
      this.#rpc.call('chats.messages', { chatId, from, to }),
    /** Indexes of the messages whose shown text contains `text`. */
    find: (chatId: string, text: string) => this.#rpc.call('chats.find', { chatId, text }),
    /** The messages the next reply would send ("Show the prompt"); `draft`: a message about to be sent. */
    preview: (chatId: string, draft?: string) => this.#rpc.call('chats.preview', { chatId, draft }),
    update: (chatId: string, patch: ChatPatch) => this.#rpc.call('chats.update', { chatId, ...patch }),
    /** The chat's author's note from the next reply on; null: none. */
    setAuthorsNote: (chatId: string, note: AuthorsNote | null) =>
      this.#rpc.call('chats.setAuthorsNote', { chatId, note }),
    delete: (chatId: string) => this.#rpc.call('chats.delete', { chatId }),
    /** Edits the shown swipe of message `index`. */
    editMessage: (chatId: string, index: number, text: string) =>
      this.#rpc.call('chats.editMessage', { chatId, index, text }),
    deleteMessage: (chatId: string, index: number) =>
      this.#rpc.call('chats.deleteMessage', { chatId, index }),
    /** The plain text a failed run wrote (drift) becomes the character's reply. */
    useDirectOutput: (runId: RunId) => this.#rpc.call('chats.useDirectOutput', { runId }),
    selectSwipe: (chatId: string, index: number, swipeId: number) =>
      this.#rpc.call('chats.selectSwipe', { chatId, index, swipeId }),
    /** A SillyTavern chat file; lines that could not be read are listed in `problems`. */
    importJsonl: (characterId: string, fileName: string, bytes: Uint8Array) =>
      this.#rpc.call('chats.importJsonl', { characterId, fileName, bytes }, { transfer: transferOf(bytes) }),
    exportJsonl: (chatId: string) => this.#rpc.call('chats.exportJsonl', { chatId }),
    /** Sends the person's message (and normalized `images`) and follows the run that writes the reply. */
    send: (chatId: string, text: string, images?: ImageRef[]) =>
      this.#rpc.stream('chats.send', { chatId, text, images }),
    /** A new swipe on the last assistant message (D12), followed until its run ends. */
    regenerate: (chatId: string) => this.#rpc.stream('chats.regenerate', { chatId }),
    /** More of the last reply: the agent's commit is appended to it. */
    continue: (chatId: string) => this.#rpc.stream('chats.continue', { chatId }),
  };

  /** Bringing a whole library over from elsewhere. */
  readonly library = {
    /**
     * A SillyTavern user-data folder (its files by relative path) or its backup zip: progress file
     * by file, then `done` with what was imported and what was skipped. The files are read in the
     * worker, never here.
     */
    importSillyTavern: (source: StLibrarySource) => this.#rpc.stream('library.importSillyTavern', source),
  };

  /** The whole app as one archive, and back (the archive is never read or held by the page). */
  readonly backup = {
    /** Writes the archive in the worker (OPFS `exports/`): progress, then its name and size. */
    export: (includeRuns: boolean) => this.#rpc.stream('backup.export', { includeRuns }),
    /** The archive the last export wrote, as a file the page can download (disk-backed). */
    exportedFile: async (fileName: string): Promise<File> => {
      const root = await navigator.storage.getDirectory();
      const dir = await root.getDirectoryHandle(EXPORTS_DIR);
      return (await dir.getFileHandle(fileName)).getFile();
    },
    /** The dry run: checks the archive and compares it with this browser's data. */
    inspect: (file: Blob) => this.#rpc.stream('backup.inspect', { file }),
    restore: (token: string, choices: RestoreChoices) =>
      this.#rpc.stream('backup.restore', { token, choices }),
  };

  /** Usage, quota and persistence of this origin's storage. */
  readonly storage = {
    estimate: () => this.#rpc.call('storage.estimate', undefined),
    /** Every session and chat with what its messages and files take, the largest first. */
    use: () => this.#rpc.call('storage.use', undefined),
    /**
     * Asks the browser to keep Hearth's data (no eviction under storage pressure). The request
     * is made here on the page: `navigator.storage.persist()` is exposed to windows only, and
     * some browsers answer with a permission prompt. The worker then reports the outcome.
     */
    persist: async () => {
      const storage = globalThis.navigator?.storage as
        (StorageManager & { persist?: () => Promise<boolean> }) | undefined;
      const pageAnswer = typeof storage?.persist === 'function' ? await storage.persist() : undefined;
      return this.#rpc.call('storage.persist', { pageAnswer });
    },
    /** Calls `listener` whenever a call or stream of the runtime settles; returns the unsubscribe. */
    afterCalls: (listener: (call: SettledCall) => void): (() => void) => this.#rpc.subscribe(listener),
  };

  /** Settings kept in the database: retention of finished runs (runtime.md §1.17.6). */
  readonly settings = {
    retention: {
      get: () => this.#rpc.call('settings.retention.get', undefined),
      set: (policy: RetentionPolicy) => this.#rpc.call('settings.retention.set', policy),
      lastAuto: () => this.#rpc.call('settings.retention.lastAuto', undefined),
      /** The dry run: which runs lose what, and the bytes and events that would be freed. */
      preview: (policy?: RetentionPolicy) => this.#rpc.call('settings.retention.preview', { policy }),
      /** Prunes, reporting progress; `only` = the previewed runs (nothing beyond them goes). */
      apply: (policy?: RetentionPolicy, only?: { runId: RunId; prune: PrunedLevel }[]) =>
        this.#rpc.stream('settings.retention.apply', { policy, only }),
    },
  };

  /** Fails everything pending (the worker is gone). */
  close(reason?: string): void {
    this.#rpc.close(reason);
  }
}
