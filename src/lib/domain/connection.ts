import { z } from 'zod';
import { hearthError, type HearthError } from './errors';
import {
  IMAGE_SUPPORT,
  PRESET_IDS,
  PROVIDER_PRESETS,
  presetOf,
  type ImageSupport,
  type PresetId,
} from './provider-presets';
import { samplerSettingsSchema } from './sampler';

export const DEMO_CONNECTION_ID = 'demo';

const capabilitiesSchema = z.strictObject({
  tools: z.boolean(),
  /** `auto`: known vision models take images; `on` / `off`: the person's word (`acceptsImages`). */
  images: z.enum(IMAGE_SUPPORT),
  reasoning: z.boolean(),
});
const httpUrl = (error: string) => z.url({ protocol: /^https?$/, error });

/** A model connection. API keys stay on this device (D18): never exported, logged or journaled. */
export const connectionSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('demo'),
    id: z.literal(DEMO_CONNECTION_ID),
    displayName: z.string(),
    model: z.string(),
  }),
  z.strictObject({
    kind: z.literal('remote'),
    id: z.string().regex(/^[a-z0-9_-]{1,128}$/),
    displayName: z.string().trim().min(1, 'Give the connection a name.'),
    preset: z.enum(PRESET_IDS as [PresetId, ...PresetId[]]),
    wire: z.enum(['openai-chat', 'anthropic', 'gemini']),
    baseUrl: httpUrl('Enter an http(s) base URL such as https://api.openai.com/v1.'),
    apiKey: z.string(),
    model: z.string().trim().min(1, 'Enter a model name.'),
    /** A CORS relay (D17): requests go to `<relayUrl>/<provider URL>`; empty for none. */
    relayUrl: z.union([z.literal(''), httpUrl('Enter the relay as an http(s) URL, or leave it empty.')]),
    capabilities: capabilitiesSchema,
    /** Tokens the model accepts per request; long Sessions are compacted to fit. */
    contextWindow: z.int().positive().max(10_000_000).optional(),
    /** Sampler settings pinned for every request on this connection, over the chat preset's (D23). */
    sampler: samplerSettingsSchema.optional(),
  }),
]);

export type Connection = z.infer<typeof connectionSchema>;
export type RemoteConnection = Extract<Connection, { kind: 'remote' }>;

/** What the connection form sends: no id for a new connection; no apiKey keeps the stored key. */
export type ConnectionDraft = Omit<RemoteConnection, 'kind' | 'id' | 'apiKey'> & {
  id?: string;
  apiKey?: string;
};

export const DEMO_CONNECTION: Connection = {
  kind: 'demo',
  id: DEMO_CONNECTION_ID,
  displayName: 'Demo: scripted responses, not an AI',
  model: 'demo-script',
};

/** A new draft from a preset: its base URL, wire format and capability defaults. */
export function draftFromPreset(preset: PresetId): ConnectionDraft {
  const p = PROVIDER_PRESETS[preset];
  return {
    displayName: p.label,
    preset,
    wire: p.wire,
    baseUrl: p.baseUrl,
    apiKey: '',
    model: '',
    relayUrl: '',
    capabilities: { ...p.capabilities },
  };
}

/**
 * Rows stored by older versions become current connections (the one decoding point for
 * stored connections; the store applies it to every row it reads): version 1 saved
 * OpenAI-compatible endpoints as `openai-compatible`; rows saved before the Images setting
 * had three values kept a yes/no (`upgradeImages`).
 */
export function upgradeConnection(row: unknown): unknown {
  if (typeof row !== 'object' || row === null) return row;
  const r = row as Record<string, unknown>;
  if (r.kind === 'openai-compatible') {
    const { kind: _kind, ...rest } = r;
    return {
      ...rest,
      kind: 'remote',
      preset: 'custom',
      wire: 'openai-chat',
      relayUrl: '',
      capabilities: { ...PROVIDER_PRESETS.custom.capabilities },
    };
  }
  const caps = r.capabilities as Record<string, unknown> | undefined;
  if (r.kind === 'remote' && typeof caps === 'object' && caps !== null && typeof caps.images === 'boolean')
    return { ...r, capabilities: { ...caps, images: upgradeImages(String(r.preset), caps.images) } };
  return row;
}

/** Presets whose checkbox for images was ticked by default before the Images setting had `auto`. */
const IMAGES_TICKED_BY_DEFAULT = new Set(['openai', 'anthropic', 'gemini', 'openrouter', 'xai']);

/**
 * The old yes/no never reached a request, so a value equal to its preset's old default says
 * nothing the person chose: it becomes `auto`. A value the person changed stays their word.
 */
export function upgradeImages(preset: string, images: boolean): ImageSupport {
  if (images === IMAGES_TICKED_BY_DEFAULT.has(preset)) return 'auto';
  return images ? 'on' : 'off';
}

/** What leaves the worker for display: the key is masked. */
export const redactConnection = (c: Connection): Connection =>
  c.kind === 'demo' ? c : { ...c, apiKey: c.apiKey ? `••••${c.apiKey.slice(-4)}` : '' };

/** What the Connections page, a restore and a run say of a connection whose provider needs a key it lacks. */
export const NO_API_KEY = 'no API key: add one';

/**
 * Whether the connection needs an API key it does not have (its provider needs one): such a
 * connection is refused before any request, never sent without its Authorization header.
 */
export const lacksApiKey = (c: Connection): boolean =>
  c.kind === 'remote' && c.apiKey === '' && presetOf(c.preset)?.needsKey === true;

/** Why a run on a connection that lacks its key stops before sending anything. */
export const missingKeyError = (c: Connection): HearthError =>
  hearthError(
    'model.not_configured',
    `The connection “${c.displayName}” has ${NO_API_KEY} on the Connections page. Nothing was sent.`,
  );

/** Where a connection sends its requests (and its key): the provider, and the relay in front of it. */
export const connectionAddresses = (c: RemoteConnection): string[] =>
  c.relayUrl ? [c.baseUrl, c.relayUrl] : [c.baseUrl];
