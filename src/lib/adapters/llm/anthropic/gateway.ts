import type { ModelRequest, StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import {
  DEFAULT_STALL_MS,
  defaultFetch,
  guarded,
  normalizeBaseUrl,
  send,
  type HttpConnection,
} from '../http';
import { decodeJsonStream } from '../json-stream';
import { createAnthropicDecoder } from './decode';
import { encodeAnthropicRequest, type AnthropicEncodeOptions } from './encode';
import { ANTHROPIC_HINTS, anthropicHttpFailure } from './failures';

export const ANTHROPIC_GATEWAY_PROVIDER = 'anthropic';
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
export const ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicGatewayOptions extends AnthropicEncodeOptions {
  /** The API root; default `https://api.anthropic.com/v1` (a CORS relay URL goes here). */
  baseUrl?: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** Abandon the call when no data arrives for this long (also the wait for response headers). */
  stallMs?: number;
  /** Extra headers, e.g. `anthropic-beta`. */
  headers?: Record<string, string>;
}

/**
 * The Anthropic Messages API (`POST {baseUrl}/messages`, streamed). Called straight from the
 * browser: Anthropic requires `anthropic-dangerous-direct-browser-access: true` for that (D17).
 */
export function anthropicGateway(opts: AnthropicGatewayOptions = {}): ModelGateway {
  const conn = anthropicConnection(opts);
  const encodeOpts: AnthropicEncodeOptions = {
    ...(opts.maxTokens !== undefined ? { maxTokens: opts.maxTokens } : {}),
    ...(opts.promptCaching !== undefined ? { promptCaching: opts.promptCaching } : {}),
  };
  return {
    provider: ANTHROPIC_GATEWAY_PROVIDER,
    stream: (request, signal) => guarded(streamMessages(conn, encodeOpts, request, signal), opts.apiKey),
  };
}

export function anthropicConnection(opts: AnthropicGatewayOptions): HttpConnection {
  return {
    baseUrl: normalizeBaseUrl(opts.baseUrl ?? ANTHROPIC_BASE_URL),
    fetch: opts.fetch ?? defaultFetch,
    stallMs: opts.stallMs ?? DEFAULT_STALL_MS,
    headers: {
      ...(opts.apiKey ? { 'x-api-key': opts.apiKey } : {}),
      'anthropic-version': ANTHROPIC_VERSION,
      'anthropic-dangerous-direct-browser-access': 'true',
      ...opts.headers,
    },
    hints: ANTHROPIC_HINTS,
    mapHttpFailure: anthropicHttpFailure,
  };
}

async function* streamMessages(
  conn: HttpConnection,
  encodeOpts: AnthropicEncodeOptions,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<StreamPart[]> {
  const { body, warnings } = encodeAnthropicRequest(request, encodeOpts);
  const decoder = createAnthropicDecoder({ warnings });
  const opened = await send(conn, '/messages', { method: 'POST', body: JSON.stringify(body) }, signal);
  if (!opened.ok) {
    yield decoder.fail(opened.error);
    return;
  }
  try {
    yield* decodeJsonStream(opened.response, decoder, {
      signal,
      stallMs: conn.stallMs,
      hints: ANTHROPIC_HINTS,
    });
  } finally {
    opened.release();
  }
}
