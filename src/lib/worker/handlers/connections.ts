import { SAMPLER_LABELS, type SamplerKey } from '$lib/domain/sampler-mapping';
import { listModels } from '$lib/adapters/llm/model-list';
import { hintFor } from '$lib/adapters/llm/connection-hints';
import { probeRequest, testConnection } from '$lib/adapters/llm/openai-chat/probe';
import { relayFetch } from '$lib/adapters/llm/relay';
import { randomIds } from '$lib/adapters/system/clock';
import {
  connectionSchema,
  DEMO_CONNECTION,
  redactConnection,
  type Connection,
  type ConnectionDraft,
} from '$lib/domain/connection';
import { hearthError, HearthFailure, type HearthError } from '$lib/domain/errors';
import { DEFAULT_CONNECTION_KEY } from '$lib/runtime/sessions';
import type { RuntimeContext } from '../context';
import type { ConnectionMethods, ConnectionTestResult } from '../protocol';
import type { Handlers } from '../rpc';

/** Model connections (API keys never leave the worker unmasked). */
export function connectionHandlers(ctx: RuntimeContext): Handlers<ConnectionMethods, Record<never, never>> {
  const { connections, settings } = ctx.stores;

  const storedConnection = async (id: string): Promise<Connection> => {
    if (id === DEMO_CONNECTION.id) return DEMO_CONNECTION;
    const c = await connections.get(id);
    if (!c) throw new HearthFailure(hearthError('agent.not_found', 'That connection no longer exists.'));
    return c;
  };

  /** A draft without a key keeps using the stored connection's key. */
  const keyFor = async (draft: ConnectionDraft) => {
    if (draft.apiKey !== undefined) return draft.apiKey;
    const stored = draft.id ? await storedConnection(draft.id) : undefined;
    return stored?.kind === 'remote' ? stored.apiKey : undefined;
  };
  const fetchFor = (draft: ConnectionDraft) =>
    draft.relayUrl ? relayFetch(draft.relayUrl, ctx.fetch) : ctx.fetch;

  async function saveConnection(draft: ConnectionDraft): Promise<Connection> {
    const existing = draft.id ? await storedConnection(draft.id) : undefined;
    const id = draft.id ?? `${slug(draft.displayName)}-${randomIds.runId().slice(-6)}`;
    const apiKey = draft.apiKey ?? (existing?.kind === 'remote' ? existing.apiKey : '');
    const parsed = connectionSchema.safeParse({ ...draft, id, apiKey, kind: 'remote' });
    if (!parsed.success) {
      throw new HearthFailure(
        hearthError('connection.invalid', parsed.error.issues.map(issueText).join(' ')),
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
        const apiKey = await keyFor(draft);
        const http = { baseUrl: draft.baseUrl, apiKey, fetch: fetchFor(draft), signal };
        if (draft.wire === 'openai-chat') return testConnection({ ...http, model: draft.model });
        const gateway = ctx.gatewayFor({
          ...draft,
          kind: 'remote',
          id: draft.id ?? 'draft',
          apiKey: apiKey ?? '',
        });
        const models = await listModels({ ...http, wire: draft.wire });
        const fail = (error: HearthError): ConnectionTestResult => ({
          ok: false,
          error,
          hint: hintFor(error, { ...draft, models: models.ok ? models.value : undefined }),
        });
        let reply = '';
        for await (const part of gateway.stream(probeRequest(draft.model), signal)) {
          if (part.type === 'text-delta') reply += part.delta;
          if (part.type === 'error') return fail(part.error);
        }
        return { ok: true, reply: reply.trim(), ...(models.ok ? { models: models.value } : {}) };
      },
      async 'connections.models'({ draft }, signal) {
        const models = await listModels({
          wire: draft.wire,
          baseUrl: draft.baseUrl,
          apiKey: await keyFor(draft),
          fetch: fetchFor(draft),
          signal,
        });
        if (!models.ok) throw new HearthFailure(models.error);
        return models.value;
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

/** A sampler setting's problem names the setting, as its field is labelled. */
function issueText(issue: { path: PropertyKey[]; message: string }): string {
  const [area, key] = issue.path;
  if (area === 'sampler' && typeof key === 'string' && Object.hasOwn(SAMPLER_LABELS, key))
    return `${SAMPLER_LABELS[key as SamplerKey]}: ${issue.message}.`;
  return issue.message;
}
