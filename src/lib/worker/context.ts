import { DexiePresetStore } from '$lib/adapters/db/preset-store';
import { createTokenizers } from '$lib/adapters/tokenizer/tokenizers';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import {
  DexieCharacterStore,
  DexieLorebookStore,
  DexiePersonaStore,
} from '$lib/adapters/db/character-stores';
import {
  DexieConnectionStore,
  DexieRunStore,
  DexieSessionStore,
  DexieSettingsStore,
} from '$lib/adapters/db/stores';
import { demoGateway } from '$lib/adapters/llm/demo/gateway';
import { anthropicGateway } from '$lib/adapters/llm/anthropic/gateway';
import { geminiGateway } from '$lib/adapters/llm/gemini/gateway';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import { chatSamplerHost } from '$lib/adapters/llm/openai-chat/sampler';
import { withPinnedSampler } from '$lib/adapters/llm/pinned-sampler';
import { relayFetch } from '$lib/adapters/llm/relay';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import { sleep } from '$lib/adapters/system/sleep';
import { broadcastRunBus } from '$lib/adapters/system/run-bus';
import { lacksApiKey, missingKeyError, type Connection, type RemoteConnection } from '$lib/domain/connection';
import type { Locks } from '$lib/ports/locks';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { ImageNormalizer } from '$lib/ports/images';
import type { Sandbox } from '$lib/ports/sandbox';
import type { WorkspaceStore } from '$lib/ports/workspace';
import { SessionService } from '$lib/runtime/sessions';
import { PresetService } from '$lib/runtime/presets';
import { ChatService } from '$lib/runtime/chats';
import { RunService, type PageNotices } from '$lib/runtime/run-service';
import { builtinProvider, toolProviders, type ToolProvider } from '$lib/runtime/tool-catalog';
import { DexieChatStore } from '$lib/adapters/db/chat-store';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import { runtimeTools } from '$lib/tools/runtime-tools';
import { DexieMcpCredentialStore, DexieMcpStore } from '$lib/adapters/db/mcp-store';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { broadcastChanges } from '$lib/adapters/system/changes';
import { LazyMcpConnector } from '$lib/adapters/mcp/lazy-connector';
import { McpServers } from '$lib/runtime/mcp-servers';
import { DexieExtensionStore } from '$lib/adapters/db/extension-store';
import { hearthError, HearthFailure, type HearthError } from '$lib/domain/errors';
import type { ExtensionRunner } from '$lib/ports/extensions';
import { Extensions } from '$lib/runtime/extensions';
import { DexieSkillStore } from '$lib/adapters/db/skill-store';
import { Skills } from '$lib/runtime/skills';
import { AutoRetention } from '$lib/runtime/auto-retention';
import { applyRetention, AUTO_RETENTION_KEY, currentPlan, savedRetention } from '$lib/runtime/retention';
import { openWatched } from '$lib/adapters/db/opening';
import type { DatabaseProblem } from '$lib/domain/database-problem';

export interface RuntimeOptions {
  /** Where workspace files live (OPFS); the runtime's records go to IndexedDB beside the journal. */
  workspaces: WorkspaceStore;
  locks: Locks;
  databaseName?: string;
  fetch?: typeof fetch;
  /** Demo provider pacing (tests and benchmarks use 0). */
  demoDelayMs?: number;
  storage?: StorageManager;
  /** Runs `workspace_shell` calls (sandbox workers in the browser). */
  sandbox?: Sandbox;
  /** Takes the page's sandbox host, which the browser's `sandbox` starts its workers through. */
  attachSandboxHost?: (port: MessagePort) => void;
  /** This tab's page, told when one of its runs waits for the person. */
  page?: PageNotices;
  /** The image normalization (default: the @jsquash codecs, fetching their wasm). */
  images?: ImageNormalizer;
  /** Starts extensions isolated (the page's extension host in the browser); without it none run. */
  extensions?: ExtensionRunner;
  /** Takes the page's extension host, which the browser's `extensions` starts workers through. */
  attachExtensionHost?: (port: MessagePort) => void;
  /** The app's origin, which no extension may be allowed to reach. */
  appOrigin?: string;
  /** Told when this tab cannot use the database (a newer Hearth upgraded it, an upgrade failed). */
  databaseProblem?: (problem: DatabaseProblem) => void;
  /** The OPFS root `workspaces` keeps its files in (backups stage and write their archives beside them). */
  opfsRoot?: () => Promise<FileSystemDirectoryHandle>;
  /**
   * The saved retention policy, when automatic, is applied this long after runs finish and after
   * the start; without it (tests) only Settings applies it.
   */
  autoRetentionDelayMs?: number;
}

/** Where no isolation is available (Node), extensions are refused rather than run unprotected. */
const noExtensions: ExtensionRunner = {
  start: () =>
    Promise.reject(
      new HearthFailure(hearthError('extension.unprotected', 'Extensions run only in the browser app.')),
    ),
};

/** Everything the worker's handlers share: stores, gateways and the runtime services. */
export interface RuntimeContext {
  options: RuntimeOptions;
  db: HearthDatabase;
  stores: {
    sessions: DexieSessionStore;
    runs: DexieRunStore;
    journal: DexieJournal;
    connections: DexieConnectionStore;
    settings: DexieSettingsStore;
    profiles: DexieProfileStore;
    characters: DexieCharacterStore;
    personas: DexiePersonaStore;
    lorebooks: DexieLorebookStore;
    chats: DexieChatStore;
    presets: DexiePresetStore;
  };
  /** Every workspace: its files in `options.workspaces`, its records beside the journal. */
  workspaces: WorkspaceStore;
  fetch: typeof fetch;
  gatewayFor: (connection: Connection) => ModelGateway;
  runs: RunService;
  sessions: SessionService;
  chats: ChatService;
  presets: PresetService;
  mcp: McpServers;
  extensions: Extensions;
  skills: Skills;
  /** The MCP and extension tool providers (the profile editor lists what they offer). */
  externalTools: readonly ToolProvider[];
  /** The one image normalization (tools.md §11): tool images and the person's. */
  images: ImageNormalizer;
  opfsRoot: () => Promise<FileSystemDirectoryHandle>;
  /** Applies the saved retention policy by itself (`autoRetentionDelayMs`), or null. */
  retention: AutoRetention | null;
  /** This build's version (package.json), written into backups. */
  appVersion: string;
}

/** A remote connection's gateway for its wire format. */
function wireGateway(
  c: RemoteConnection,
  http: { baseUrl: string; apiKey: string; fetch: typeof fetch },
): ModelGateway {
  switch (c.wire) {
    case 'openai-chat':
      return openAiChatGateway({ ...http, samplerHost: chatSamplerHost(c.preset) });
    case 'anthropic':
      return anthropicGateway(http);
    case 'gemini':
      return geminiGateway(http);
  }
}

/** A gateway that answers every request with `error` and sends nothing. */
const refusingGateway = (provider: string, error: HearthError): ModelGateway => ({
  provider,
  stream: async function* () {
    yield { type: 'error', error };
  },
});

export function createRuntimeContext(options: RuntimeOptions): RuntimeContext {
  const db = openHearthDatabase(options.databaseName);
  void openWatched(db, (problem) => options.databaseProblem?.(problem));
  const stores = {
    sessions: new DexieSessionStore(db),
    runs: new DexieRunStore(db),
    journal: new DexieJournal(db, systemClock),
    connections: new DexieConnectionStore(db),
    settings: new DexieSettingsStore(db),
    profiles: new DexieProfileStore(db),
    characters: new DexieCharacterStore(db),
    personas: new DexiePersonaStore(db),
    lorebooks: new DexieLorebookStore(db),
    chats: new DexieChatStore(db),
    presets: new DexiePresetStore(db),
  };
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const gatewayFor = (c: Connection): ModelGateway => {
    if (c.kind === 'demo') return demoGateway({ delayMs: options.demoDelayMs });
    // Refused here, before any request: never sent without the key the provider needs.
    if (lacksApiKey(c)) return refusingGateway(c.wire, missingKeyError(c));
    const http = {
      baseUrl: c.baseUrl,
      apiKey: c.apiKey,
      fetch: c.relayUrl ? relayFetch(c.relayUrl, doFetch) : doFetch,
    };
    return withPinnedSampler(wireGateway(c, http), c.sampler);
  };
  const runs = new RunService({
    runs: stores.runs,
    journal: stores.journal,
    locks: options.locks,
    clock: systemClock,
    ids: randomIds,
    bus: broadcastRunBus(),
    sandbox: options.sandbox,
    page: options.page,
    onSettled: () => retention?.poke(),
  });
  const workspaces = new TieredWorkspaceStore(options.workspaces, new DexieRecordStore(db));
  const images = options.images ?? new JsquashImageNormalizer();
  const credentials = new DexieMcpCredentialStore(db);
  const mcp = new McpServers({
    store: new DexieMcpStore(db),
    credentials,
    connector: new LazyMcpConnector([
      doFetch,
      {},
      {
        credentials,
        now: () => systemClock.now(),
        newState: () => crypto.randomUUID(),
      },
    ]),
    images,
    clock: systemClock,
    newId: () => crypto.randomUUID(),
    changes: broadcastChanges('hearth-mcp-changes'),
  });
  const extensions = new Extensions({
    store: new DexieExtensionStore(db),
    runner: options.extensions ?? noExtensions,
    images,
    clock: systemClock,
    changes: broadcastChanges('hearth-extension-changes'),
    appOrigin: options.appOrigin,
  });
  // The skill library's files live in OPFS beside the workspaces (never a record root).
  const skills = new Skills({
    store: new DexieSkillStore(db, async () => {
      const library = await options.workspaces.open('library/skills');
      if (!library.ok) throw new HearthFailure(library.error);
      return library.value;
    }),
    clock: systemClock,
  });
  const shared = {
    skills,
    workspaces,
    locks: options.locks,
    gatewayFor,
    clock: systemClock,
    ids: randomIds,
    sleep,
    sandbox: options.sandbox,
    images,
    service: runs,
    tokenizers: createTokenizers(stores.settings),
  };
  const sessions = new SessionService({
    ...stores,
    ...shared,
    providers: toolProviders([builtinProvider(runtimeTools.session), mcp.provider(), extensions.provider()]),
  });
  const chats = new ChatService({
    ...stores,
    ...shared,
    providers: toolProviders([builtinProvider(runtimeTools.chat), mcp.provider(), extensions.provider()]),
  });
  const retention = autoRetention(options, stores, workspaces, chats);
  retention?.poke();
  return {
    options,
    db,
    stores,
    workspaces,
    fetch: doFetch,
    gatewayFor,
    runs,
    sessions,
    chats,
    presets: new PresetService({ presets: stores.presets, clock: shared.clock, ids: shared.ids }),
    mcp,
    extensions,
    skills,
    externalTools: [mcp.provider(), extensions.provider()],
    images: shared.images,
    opfsRoot: options.opfsRoot ?? (() => navigator.storage.getDirectory()),
    retention,
    appVersion: __HEARTH_VERSION__,
  };
}

function autoRetention(
  options: RuntimeOptions,
  stores: RuntimeContext['stores'],
  workspaces: WorkspaceStore,
  chats: ChatService,
): AutoRetention | null {
  if (options.autoRetentionDelayMs === undefined) return null;
  const deps = { runs: stores.runs, journal: stores.journal, workspaces, clock: systemClock };
  return new AutoRetention({
    policy: () => savedRetention(stores.settings),
    async prune(policy) {
      const { totals, failed } = await applyRetention(await currentPlan(policy, deps), deps);
      const states = await chats.allUnreferencedStates(true);
      return {
        runs: totals.runs,
        bytes: totals.bytes + states.bytes,
        events: totals.events,
        states: states.states,
        failed,
      };
    },
    report: (report) => stores.settings.set(AUTO_RETENTION_KEY, report),
    locks: options.locks,
    clock: systemClock,
    delayMs: options.autoRetentionDelayMs,
  });
}
