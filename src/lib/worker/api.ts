import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import {
  DexieConnectionStore,
  DexieRunStore,
  DexieSessionStore,
  DexieSettingsStore,
} from '$lib/adapters/db/stores';
import { demoGateway } from '$lib/adapters/llm/demo/gateway';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import { testConnection } from '$lib/adapters/llm/openai-chat/probe';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import { sleep } from '$lib/adapters/system/sleep';
import type { Locks } from '$lib/ports/locks';
import type { WorkspaceStore } from '$lib/ports/workspace';
import {
  connectionSchema,
  DEMO_CONNECTION,
  redactConnection,
  type Connection,
  type ConnectionDraft,
} from '$lib/domain/connection';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import { isVisible, sessionRoots } from '$lib/domain/workspace-roots';
import { DEFAULT_CONNECTION_KEY, SessionService } from '$lib/runtime/sessions';
import { workspaceTools } from '$lib/tools/workspace';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { Transfer, type Handlers } from './rpc';
import type { ConnectionTestResult, HearthMethods, HearthStreams, WorkspaceItem } from './protocol';

export interface RuntimeOptions {
  workspaces: WorkspaceStore;
  locks: Locks;
  databaseName?: string;
  fetch?: typeof fetch;
  /** Demo provider pacing (tests and benchmarks use 0). */
  demoDelayMs?: number;
  storage?: StorageManager;
}

/** Wires adapters into the runtime and exposes it as the RPC handlers of the worker. */
export function createRuntime(options: RuntimeOptions): Handlers<HearthMethods, HearthStreams> {
  const db = openHearthDatabase(options.databaseName);
  const sessions = new DexieSessionStore(db);
  const runs = new DexieRunStore(db);
  const journal = new DexieJournal(db, systemClock);
  const connections = new DexieConnectionStore(db);
  const settings = new DexieSettingsStore(db);
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  const gatewayFor = (c: Connection): ModelGateway =>
    c.kind === 'demo'
      ? demoGateway({ delayMs: options.demoDelayMs })
      : openAiChatGateway({ baseUrl: c.baseUrl, apiKey: c.apiKey, fetch: doFetch });

  const service = new SessionService({
    sessions,
    runs,
    journal,
    connections,
    settings,
    workspaces: options.workspaces,
    locks: options.locks,
    gatewayFor,
    tools: workspaceTools,
    clock: systemClock,
    ids: randomIds,
    retry: { maxRetries: 3, intervalMs: 1000 },
    sleep,
  });

  // Runs a closed tab left behind become `interrupted` as soon as their session lock is free.
  void service.recoverInterrupted().catch((e) => console.error('Could not recover interrupted runs', e));

  const roots = sessionRoots();
  const visiblePath = (raw: string) => {
    const parsed = parseWorkspacePath(raw);
    if (!parsed.ok) throw new HearthFailure(parsed.error);
    if (!isVisible(roots, parsed.value)) {
      throw new HearthFailure(
        hearthError('workspace.path_not_visible', `${raw} is not a visible workspace path.`),
      );
    }
    return parsed.value;
  };

  const storedConnection = async (id: string): Promise<Connection> => {
    if (id === DEMO_CONNECTION.id) return DEMO_CONNECTION;
    const c = await connections.get(id);
    if (!c) throw new HearthFailure(hearthError('agent.not_found', 'That connection no longer exists.'));
    return c;
  };

  async function saveConnection(draft: ConnectionDraft): Promise<Connection> {
    const existing = draft.id ? await storedConnection(draft.id) : undefined;
    const id = draft.id ?? `${slug(draft.displayName)}-${randomIds.runId().slice(-6)}`;
    const apiKey = draft.apiKey ?? (existing?.kind === 'openai-compatible' ? existing.apiKey : '');
    const parsed = connectionSchema.safeParse({ ...draft, id, apiKey, kind: 'openai-compatible' });
    if (!parsed.success) {
      throw new HearthFailure(
        hearthError('connection.invalid', parsed.error.issues.map((i) => i.message).join(' ')),
      );
    }
    await connections.put(parsed.data);
    return redactConnection(parsed.data);
  }

  return {
    methods: {
      'sessions.list': () => service.list(),
      'sessions.create': (p) => service.create(p),
      'sessions.get': (p) => service.get(p.sessionId),
      'sessions.update': ({ sessionId, ...patch }) => service.update(sessionId, patch),
      'sessions.delete': (p) => service.delete(p.sessionId),
      'runs.cancel': (p) => service.cancel(p.runId),
      'runs.events': ({ runId, ...page }) => journal.read(runId, page),

      async 'workspace.list'({ sessionId, dir }) {
        const workspace = await service.workspace(sessionId);
        const at = dir ? visiblePath(dir) : undefined;
        const listed = await workspace.list(at);
        if (!listed.ok) throw new HearthFailure(listed.error);
        const items: WorkspaceItem[] = [];
        for (const entry of listed.value) {
          if (!at && !isVisible(roots, entry.path)) continue;
          const stat = entry.kind === 'file' ? await workspace.stat(entry.path) : null;
          items.push({
            path: entry.path,
            kind: entry.kind,
            size: stat?.ok && stat.value ? stat.value.size : 0,
          });
        }
        return items;
      },

      async 'workspace.read'({ sessionId, path }) {
        const workspace = await service.workspace(sessionId);
        const read = await workspace.read(visiblePath(path));
        if (!read.ok) throw new HearthFailure(read.error);
        const bytes = read.value;
        return new Transfer({ path, bytes, sha256: await sha256Hex(bytes) }, [bytes.buffer as ArrayBuffer]);
      },

      async 'connections.list'() {
        const stored = await connections.list();
        const defaultConnectionId =
          (await settings.get<string>(DEFAULT_CONNECTION_KEY)) ?? DEMO_CONNECTION.id;
        return { connections: [DEMO_CONNECTION, ...stored.map(redactConnection)], defaultConnectionId };
      },
      'connections.save': (draft) => saveConnection(draft),
      async 'connections.delete'({ id }) {
        await connections.delete(id);
        if ((await settings.get<string>(DEFAULT_CONNECTION_KEY)) === id) {
          await settings.set(DEFAULT_CONNECTION_KEY, DEMO_CONNECTION.id);
        }
      },
      async 'connections.setDefault'({ id }) {
        await storedConnection(id);
        await settings.set(DEFAULT_CONNECTION_KEY, id);
      },
      async 'connections.test'({ draft }, signal): Promise<ConnectionTestResult> {
        const stored = draft.id ? await storedConnection(draft.id) : undefined;
        if (stored?.kind === 'demo')
          return { ok: true, reply: 'The Demo provider is built in and always available.' };
        const apiKey = draft.apiKey ?? stored?.apiKey;
        return testConnection({ baseUrl: draft.baseUrl, apiKey, model: draft.model, fetch: doFetch, signal });
      },
      async 'storage.estimate'() {
        const storage = options.storage;
        if (!storage) return { usage: 0, quota: 0, persisted: false };
        const [estimate, persisted] = await Promise.all([storage.estimate(), storage.persisted()]);
        return { usage: estimate.usage ?? 0, quota: estimate.quota ?? 0, persisted };
      },
    },
    streams: {
      'sessions.send': (p) => service.send(p.sessionId, p.text),
      'runs.watch': (p) => service.watch(p.runId),
    },
  };
}

const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40) || 'connection';
