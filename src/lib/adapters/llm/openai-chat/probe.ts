import type { HearthError } from '$lib/domain/errors';
import type { ModelRequest } from '$lib/domain/model';
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
    return { ok: false, error: safe, hint: hintFor(safe, { ...opts, models: listed.models }) };
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
    maxOutputTokens: 16,
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

const CORS_FIX =
  'If it is running, it must allow requests from this page (CORS): for Ollama, restart it with the environment variable OLLAMA_ORIGINS set to this site\'s origin (or *); for LM Studio, turn on "Enable CORS" in the server settings; for other servers, enable CORS or set a CORS relay URL on this connection.';

/** What a person should change, for each way a connection test fails. */
export function hintFor(
  error: HearthError,
  ctx: { baseUrl: string; model: string; models?: string[] | undefined },
): string {
  switch (error.code) {
    case 'model.provider_denied':
      return error.status === 403
        ? 'The provider refused this API key for this request. Check that the key is active and allowed to use this model (some keys are limited to certain models or projects).'
        : 'The provider refused the API key. Check that the whole key was pasted, that it belongs to this provider, and that it is still active.';
    case 'model.provider_rate_limited': {
      const wait =
        error.retryAfterMs !== undefined
          ? ` The provider asked to wait ${Math.ceil(error.retryAfterMs / 1000)} s.`
          : '';
      return `The provider is limiting requests for this key (too many requests, or no credit left). Wait a little and try again, or check the plan and billing on the provider's site.${wait}`;
    }
    case 'model.network_error':
      return `The browser could not reach ${ctx.baseUrl}. Check the address and that the server is running. ${CORS_FIX}`;
    case 'model.upstream_invalid_response':
      return error.message.includes('web page')
        ? 'The address serves a web page, not the API. Use the API base URL, which usually ends in /v1 (for example https://api.openai.com/v1 or http://localhost:11434/v1).'
        : 'The server answered, but not like an OpenAI-compatible API. Check that the base URL points at one (it usually ends in /v1).';
    case 'model.stream_stalled':
      return 'The server accepted the request but then sent nothing. It may still be loading the model (local servers can take minutes the first time) or be overloaded; try again.';
    case 'model.stream_failed':
      return 'The connection broke during the reply. Try again; if it keeps happening, a proxy between this page and the server may be cutting streamed replies.';
    case 'model.not_configured':
      return 'Enter the API base URL, starting with http:// or https:// (for example https://api.openai.com/v1).';
    case 'model.cancelled':
      return 'The test was cancelled.';
    case 'model.request_failed':
      if (error.status === 404) {
        if (ctx.models && ctx.models.length > 0 && !ctx.models.includes(ctx.model))
          return `The server does not offer a model named "${ctx.model}". Pick one of the ${ctx.models.length} models it lists.`;
        return `The server answered "not found": either there is no model named "${ctx.model}" or the base URL is wrong. The base URL is the API root, which usually ends in /v1 (for example https://api.openai.com/v1 or http://localhost:11434/v1).`;
      }
      if (error.status !== undefined && error.status >= 500)
        return `The provider's server had an error (HTTP ${error.status}). This is usually temporary: try again in a minute.`;
      return 'The provider rejected the test request. Its message above says why; the model may not support these settings.';
    default:
      return error.message;
  }
}
