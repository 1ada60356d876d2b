import { hearthError, type HearthError } from '$lib/domain/errors';
import { httpFailure, messageOf, type FailureHints, type HttpFailureInput } from '../http-failures';

export const GEMINI_HINTS: FailureHints = {
  apiRoot: 'for Gemini it is https://generativelanguage.googleapis.com/v1beta',
  apiRootAside: 'for Gemini, https://generativelanguage.googleapis.com/v1beta',
  reachability:
    "The server may be down or unreachable, or the browser blocked the request (CORS). Google's Gemini API accepts calls from a browser page; a proxy or gateway in between must allow this page's origin, or set a CORS relay URL on the connection.",
};

const sentence = (text: string) => (/[.!?…]$/.test(text) ? text : `${text}.`);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{error: {code, message, status, details}}`, Google's error body. */
function googleError(body: string): Obj | null {
  try {
    const json: unknown = JSON.parse(body);
    const inner = Array.isArray(json) ? (json[0] as unknown) : json;
    return isObj(inner) && isObj(inner.error) ? inner.error : null;
  } catch {
    return null;
  }
}

const details = (error: Obj): Obj[] =>
  Array.isArray(error.details) ? error.details.filter((d): d is Obj => isObj(d)) : [];

/** `RetryInfo.retryDelay` ("37s", "1.5s") in milliseconds. */
function retryDelayMs(error: Obj): number | undefined {
  for (const d of details(error)) {
    const m = typeof d.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(d.retryDelay) : null;
    if (m) return Math.round(Number(m[1]) * 1000);
  }
  return undefined;
}

/**
 * HTTP errors. Google answers a wrong API key with 400 `API_KEY_INVALID` (not 401), and puts the
 * wait of a 429 in `RetryInfo` rather than a `retry-after` header.
 */
export function geminiHttpFailure(input: HttpFailureInput): HearthError {
  const error = googleError(input.body);
  if (error && input.status === 400) {
    const invalidKey =
      details(error).some((d) => d.reason === 'API_KEY_INVALID') ||
      (typeof error.message === 'string' && /api key not valid/i.test(error.message));
    if (invalidKey)
      return hearthError(
        'model.provider_denied',
        sentence(`The API key was refused (HTTP 400): ${messageOf(error.message) ?? 'API key not valid'}`),
        { status: 400 },
      );
  }
  const retryAfterMs = input.retryAfterMs ?? (error ? retryDelayMs(error) : undefined);
  return httpFailure({ ...input, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }, GEMINI_HINTS);
}

/** An `{error}` object inside a 200 stream. */
export function geminiStreamFailure(error: unknown): HearthError {
  const e = isObj(error) ? error : {};
  const message = messageOf(e.message) ?? 'no details given';
  const code = typeof e.code === 'number' ? e.code : Number(e.code);
  const status = typeof e.status === 'string' ? e.status : '';
  if (code === 429 || status === 'RESOURCE_EXHAUSTED')
    return hearthError(
      'model.provider_rate_limited',
      sentence(`The provider is rate-limiting requests: ${message}`),
      {
        retryable: true,
        ...(retryDelayMs(e) !== undefined ? { retryAfterMs: retryDelayMs(e) } : {}),
      },
    );
  if (code === 401 || code === 403 || status === 'PERMISSION_DENIED' || status === 'UNAUTHENTICATED')
    return hearthError('model.provider_denied', sentence(`The provider refused the request: ${message}`));
  const transient = code >= 500 || /UNAVAILABLE|INTERNAL|DEADLINE_EXCEEDED/.test(status);
  return hearthError('model.request_failed', sentence(`The provider reported an error: ${message}`), {
    retryable: transient,
  });
}
