import { testConnection } from '$lib/adapters/llm/openai-chat/probe';
import { randomIds } from '$lib/adapters/system/clock';
import {
  connectionSchema,
  DEMO_CONNECTION,
  redactConnection,
  type Connection,
  type ConnectionDraft,
} from '$lib/domain/connection';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import { DEFAULT_CONNECTION_KEY } from '$lib/runtime/sessions';
import type { RuntimeContext } from '../context';
import type { ConnectionMethods, ConnectionTestResult } from '../protocol';
import type { Handlers } from '../rpc';

/** Model connections (API keys never leave the worker unmasked) and storage usage. */
export function connectionHandlers(ctx: RuntimeContext): Handlers<ConnectionMethods, Record<never, never>> {
  const { connections, settings } = ctx.stores;

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
        return testConnection({
          baseUrl: draft.baseUrl,
          apiKey,
          model: draft.model,
          fetch: ctx.fetch,
          signal,
        });
      },
      async 'storage.estimate'() {
        const storage = ctx.options.storage;
        if (!storage) return { usage: 0, quota: 0, persisted: false };
        const [estimate, persisted] = await Promise.all([storage.estimate(), storage.persisted()]);
        return { usage: estimate.usage ?? 0, quota: estimate.quota ?? 0, persisted };
      },
    },
    streams: {},
  };
}

const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40) || 'connection';
