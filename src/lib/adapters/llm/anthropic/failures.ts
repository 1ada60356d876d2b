import { hearthError, type HearthError } from '$lib/domain/errors';
import {
  httpFailure,
  messageOf,
  providerMessage,
  type FailureHints,
  type HttpFailureInput,
} from '../http-failures';

export const ANTHROPIC_HINTS: FailureHints = {
  apiRoot: 'for Anthropic it is https://api.anthropic.com/v1',
  apiRootAside: 'for Anthropic, https://api.anthropic.com/v1',
  reachability:
    "The server may be down or unreachable, or the browser blocked the request (CORS). Anthropic's own API accepts calls from a browser page (Hearth sends the anthropic-dangerous-direct-browser-access header); a proxy or gateway in between must allow this page's origin, or set a CORS relay URL on the connection.",
};

const sentence = (text: string) => (/[.!?…]$/.test(text) ? text : `${text}.`);

/** HTTP errors; 529 is Anthropic's "overloaded", which is worth saying in so many words. */
export function anthropicHttpFailure(input: HttpFailureInput): HearthError {
  if (input.status === 529) {
    const detail = providerMessage(input.body);
    return hearthError(
      'model.request_failed',
      sentence(`The provider is overloaded (HTTP 529)${detail ? `: ${detail}` : ''}`),
      {
        status: 529,
        retryable: true,
        ...(input.retryAfterMs !== undefined ? { retryAfterMs: input.retryAfterMs } : {}),
      },
    );
  }
  return httpFailure(input, ANTHROPIC_HINTS);
}

/**
 * An `error` event inside a 200 stream: `{type: "error", error: {type, message}}`. Overload,
 * rate limits and API errors are transient; everything else is an explicit rejection.
 */
export function anthropicStreamFailure(error: unknown): HearthError {
  const e = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const type = typeof e.type === 'string' ? e.type : '';
  const message = messageOf(e.message) ?? (type || 'no details given');
  switch (type) {
    case 'overloaded_error':
      return hearthError('model.request_failed', sentence(`The provider is overloaded: ${message}`), {
        retryable: true,
      });
    case 'rate_limit_error':
      return hearthError(
        'model.provider_rate_limited',
        sentence(`The provider is rate-limiting requests: ${message}`),
        { retryable: true },
      );
    case 'authentication_error':
    case 'permission_error':
      return hearthError('model.provider_denied', sentence(`The provider refused the request: ${message}`));
    case 'api_error':
    case 'timeout_error':
      return hearthError('model.request_failed', sentence(`The provider reported an error: ${message}`), {
        retryable: true,
      });
    default:
      return hearthError('model.request_failed', sentence(`The provider reported an error: ${message}`));
  }
}
