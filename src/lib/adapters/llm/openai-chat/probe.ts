import type { HearthError } from '$lib/domain/errors';
import type { ModelRequest } from '$lib/domain/model';
import { hintFor } from '../connection-hints';
import { looksLikeHtml, webPageFailure } from '../http-failures';
import { openAiChatGateway, redactError, resolveConnection, send, type Connection } from './gateway';

export interface ProbeOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Shorter than a real call's: a person is waiting on the settings page. */
  stallMs?: number;
}

export type ProbeResult =
  { ok: true; models?: string[]; reply: string } | { ok: false; error: HearthError; hint: string };

export const PROBE_STALL_MS = 30_000;
export const PROBE_PROMPT = 'Reply with the single word: ok';

/**
 * Tests a connection the way a person would: lists the models (a 404 there is fine, many
 * servers lack the route) and streams a tiny real completion. Failures come with a hint that
 * says what to change.
 */
export async function testConnection(opts: ProbeOptions): Promise<ProbeResult> {
  const signal = opts.signal ?? new AbortController().signal;
  const stallMs = opts.stallMs ?? PROBE_STALL_MS;
  const conn = resolveConnection({ ...opts, stallMs });
  const listed = await listModels(conn, signal);
  const fail = (error: HearthError): ProbeResult => {
    const safe = redactError(error, opts.apiKey);
    return {
      ok: false,
      error: safe,
      hint: hintFor(safe, { ...opts, wire: 'openai-chat', models: listed.models }),
    };
  };
  if (listed.error) return fail(listed.error);

  const gateway = openAiChatGateway({ ...opts, stallMs });
  let reply = '';
  for await (const part of gateway.stream(probeRequest(opts.model), signal)) {
    if (part.type === 'text-delta') reply += part.delta;
    if (part.type === 'error') return fail(part.error);
    if (part.type === 'finish') break;
  }
  return { ok: true, ...(listed.models ? { models: listed.models } : {}), reply: reply.trim() };
}

export function probeRequest(model: string): ModelRequest {
  return {
    model,
    messages: [{ role: 'user', parts: [{ type: 'text', text: PROBE_PROMPT }] }],
    tools: [],
    toolChoice: 'auto',
    sampler: { maxOutputTokens: 16 },
  };
}

/** Only failures that make the completion test pointless stop the probe here. */
const FATAL_FOR_LISTING = new Set<HearthError['code']>([
  'model.provider_denied',
  'model.network_error',
  'model.cancelled',
  'model.not_configured',
  'model.stream_stalled',
]);

async function listModels(
  conn: Connection,
  signal: AbortSignal,
): Promise<{ models?: string[]; error?: HearthError }> {
  const sent = await send(conn, '/models', { method: 'GET' }, signal);
  if (!sent.ok) return FATAL_FOR_LISTING.has(sent.error.code) ? { error: sent.error } : {};
  try {
    const text = await sent.response.text();
    if ((sent.response.headers.get('content-type') ?? '').includes('html') || looksLikeHtml(text))
      return { error: webPageFailure() };
    const data = (JSON.parse(text) as { data?: unknown }).data;
    if (!Array.isArray(data)) return {};
    const ids = data.flatMap((m: unknown) =>
      typeof m === 'object' && m !== null && typeof (m as { id?: unknown }).id === 'string'
        ? [(m as { id: string }).id]
        : [],
    );
    return { models: ids };
  } catch {
    return {};
  } finally {
    sent.release();
  }
}
