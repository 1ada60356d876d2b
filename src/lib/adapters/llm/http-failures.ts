import { hearthError, type HearthError } from '$lib/domain/errors';

/**
 * Readable HearthErrors for everything that can go wrong talking to a model provider over HTTP.
 * Provider-neutral: each adapter passes its own `FailureHints` for the advice that differs
 * (what the API root looks like, how to fix a blocked request).
 */

export interface FailureHints {
  /** How the API root usually looks, e.g. `it usually ends in /v1`. */
  apiRoot: string;
  /** The same, as a shorter aside: `often ending in /v1`. */
  apiRootAside: string;
  /** What to do when the browser could not reach the server (reachability and CORS). */
  reachability: string;
}

/** OpenAI-compatible servers, including local ones (Ollama, LM Studio, llama.cpp). */
export const OPENAI_COMPATIBLE_HINTS: FailureHints = {
  apiRoot: 'it usually ends in /v1',
  apiRootAside: 'often ending in /v1',
  reachability:
    "The server may be down or unreachable, or the browser blocked the request because the server does not allow this page's origin (CORS). For Ollama, start it with OLLAMA_ORIGINS set to this site's origin (or *); for other servers enable CORS, or set a CORS relay URL on the connection.",
};

const MAX_QUOTED = 300;

/** The provider's own error text from a JSON (or short plain-text) error body, if there is one. */
export function providerMessage(body: string): string | undefined {
  const text = body.trim();
  if (text === '' || looksLikeHtml(text)) return undefined;
  try {
    return messageOf(JSON.parse(text)) ?? undefined;
  } catch {
    return quote(text);
  }
}

/** `{error: {message}}` (OpenAI), `{error: "..."}` (Ollama, llama.cpp), `{message}`, `{detail}` (FastAPI). */
export function messageOf(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() === '' ? null : quote(value);
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  for (const key of ['error', 'message', 'detail', 'msg']) {
    if (key in v) {
      const found = messageOf(v[key]);
      if (found !== null) return found;
    }
  }
  if (Array.isArray(value)) return messageOf(value[0]);
  return null;
}

export function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html|<head|<body|<\?xml)/i.test(text);
}

export function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_QUOTED ? `${flat.slice(0, MAX_QUOTED)}…` : flat;
}

const sentence = (text: string) => (/[.!?…]$/.test(text) ? text : `${text}.`);
const withDetail = (base: string, detail: string | undefined) =>
  sentence(detail ? `${base}: ${detail}` : base);

export interface HttpFailureInput {
  status: number;
  body: string;
  contentType: string | null;
  retryAfterMs?: number;
}

export function httpFailure(
  { status, body, contentType, retryAfterMs }: HttpFailureInput,
  hints: FailureHints = OPENAI_COMPATIBLE_HINTS,
): HearthError {
  const html = (contentType ?? '').includes('html') || looksLikeHtml(body);
  const detail = html ? undefined : providerMessage(body);
  if (status === 401 || status === 403)
    return hearthError(
      'model.provider_denied',
      withDetail(
        status === 401
          ? 'The API key was refused (HTTP 401)'
          : 'The API key was refused or has no access to this model (HTTP 403)',
        detail,
      ),
      { status },
    );
  if (status === 404)
    return hearthError(
      'model.request_failed',
      `${withDetail('The model or the endpoint was not found (HTTP 404)', detail)} Check the model name and the base URL (${hints.apiRoot}).`,
      { status },
    );
  if (status === 429)
    return hearthError(
      'model.provider_rate_limited',
      withDetail('The provider is rate-limiting requests (HTTP 429)', detail),
      { status, retryable: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
    );
  if (status >= 500) {
    const base = html
      ? `The provider's server failed (HTTP ${status}) and answered with a web page`
      : `The provider's server failed (HTTP ${status})`;
    return hearthError('model.request_failed', withDetail(base, detail), {
      status,
      retryable: true,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  if (status === 408)
    return hearthError('model.request_failed', withDetail('The provider timed out (HTTP 408)', detail), {
      status,
      retryable: true,
    });
  if (html) return webPageFailure(status, hints);
  return hearthError(
    'model.request_failed',
    withDetail(`The provider rejected the request (HTTP ${status})`, detail),
    {
      status,
    },
  );
}

export function webPageFailure(status?: number, hints: FailureHints = OPENAI_COMPATIBLE_HINTS): HearthError {
  return hearthError(
    'model.upstream_invalid_response',
    `The endpoint returned a web page, not an API response. Check the base URL: it should be the API root (${hints.apiRootAside}), not a website.`,
    status !== undefined ? { status } : {},
  );
}

export function notAStreamFailure(
  firstLine: string | undefined,
  contentType: string | null,
  hints: FailureHints = OPENAI_COMPATIBLE_HINTS,
): HearthError {
  if (firstLine !== undefined && looksLikeHtml(firstLine)) return webPageFailure(undefined, hints);
  const what = contentType ? ` (content type ${contentType})` : '';
  const began = firstLine ? ` It began with "${quote(firstLine)}".` : ' It was empty.';
  return hearthError(
    'model.upstream_invalid_response',
    `The endpoint did not answer with an event stream${what}.${began} Check the base URL.`,
    { retryable: true },
  );
}

export function invalidJsonFailure(data: string): HearthError {
  return hearthError(
    'model.upstream_invalid_response',
    `The provider sent a data line that is not valid JSON: ${quote(data)}`,
    { retryable: true },
  );
}

export function networkFailure(
  baseUrl: string,
  cause?: string,
  hints: FailureHints = OPENAI_COMPATIBLE_HINTS,
): HearthError {
  const why = cause ? ` (${quote(cause)})` : '';
  return hearthError('model.network_error', `Could not reach ${baseUrl}${why}. ${hints.reachability}`, {
    retryable: true,
  });
}

export function noAnswerFailure(wait: string): HearthError {
  return hearthError('model.stream_stalled', `The provider did not answer within ${wait}.`, {
    retryable: true,
  });
}

export const cancelledFailure = (): HearthError =>
  hearthError('model.cancelled', 'The model call was cancelled.');

/** An `error` object inside a 200 stream (OpenRouter, vLLM and others report mid-stream failures so). */
export function streamedFailure(error: unknown): HearthError {
  const message = messageOf(error) ?? 'no details given';
  const e = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const code = typeof e.code === 'number' ? e.code : Number(e.code);
  const kind = `${String(e.type ?? '')} ${String(e.code ?? '')}`;
  if (code === 429 || kind.includes('rate_limit'))
    return hearthError(
      'model.provider_rate_limited',
      sentence(`The provider is rate-limiting requests: ${message}`),
      {
        retryable: true,
      },
    );
  const transient = code >= 500 || /server_error|overloaded|timeout|unavailable/.test(kind);
  return hearthError('model.request_failed', sentence(`The provider reported an error: ${message}`), {
    retryable: transient,
  });
}

/** `retry-after` (seconds or an HTTP date) or `retry-after-ms`, in milliseconds. */
export function parseRetryAfter(get: (name: string) => string | null, now: number): number | undefined {
  const ms = Number(get('retry-after-ms'));
  if (get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const raw = get('retry-after');
  if (raw === null || raw.trim() === '') return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
