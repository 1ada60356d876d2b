import { z } from 'zod';

export const DEMO_CONNECTION_ID = 'demo';

/** A model connection. API keys stay on this device (D18): never exported, logged or journaled. */
export const connectionSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('demo'),
    id: z.literal(DEMO_CONNECTION_ID),
    displayName: z.string(),
    model: z.string(),
  }),
  z.strictObject({
    kind: z.literal('openai-compatible'),
    id: z.string().regex(/^[a-z0-9_-]{1,128}$/),
    displayName: z.string().trim().min(1, 'Give the connection a name.'),
    baseUrl: z.url({
      protocol: /^https?$/,
      error: 'Enter an http(s) URL such as https://api.openai.com/v1.',
    }),
    apiKey: z.string(),
    model: z.string().trim().min(1, 'Enter a model name.'),
  }),
]);

export type Connection = z.infer<typeof connectionSchema>;
/** What the connection form sends: no id for a new connection; no apiKey keeps the stored key. */
export interface ConnectionDraft {
  id?: string;
  displayName: string;
  baseUrl: string;
  apiKey?: string;
  model: string;
}

export const DEMO_CONNECTION: Connection = {
  kind: 'demo',
  id: DEMO_CONNECTION_ID,
  displayName: 'Demo: scripted responses, not an AI',
  model: 'demo-script',
};

/** What leaves the worker for display: the key is masked. */
export const redactConnection = (c: Connection): Connection =>
  c.kind === 'demo' ? c : { ...c, apiKey: c.apiKey ? `••••${c.apiKey.slice(-4)}` : '' };
