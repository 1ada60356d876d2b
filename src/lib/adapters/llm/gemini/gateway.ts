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
import { createGeminiDecoder } from './decode';
import { encodeGeminiRequest, type GeminiEncodeOptions } from './encode';
import { GEMINI_HINTS, geminiHttpFailure } from './failures';

export const GEMINI_GATEWAY_PROVIDER = 'gemini';
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

export interface GeminiGatewayOptions extends GeminiEncodeOptions {
  /** The API root; default `https://generativelanguage.googleapis.com/v1beta`. */
  baseUrl?: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** Abandon the call when no data arrives for this long (also the wait for response headers). */
  stallMs?: number;
  headers?: Record<string, string>;
  /** Stands in for the response id in local call keys (tests); default a random value per call. */
  callKeySeed?: () => string;
}

/** The Gemini API (`POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse`), key in `x-goog-api-key`. */
export function geminiGateway(opts: GeminiGatewayOptions = {}): ModelGateway {
  const conn = geminiConnection(opts);
  const encodeOpts: GeminiEncodeOptions = {
    ...(opts.includeThoughts !== undefined ? { includeThoughts: opts.includeThoughts } : {}),
    ...(opts.unsignedCallFallback !== undefined ? { unsignedCallFallback: opts.unsignedCallFallback } : {}),
  };
  const seed = opts.callKeySeed ?? randomSeed;
  return {
    provider: GEMINI_GATEWAY_PROVIDER,
    stream: (request, signal) =>
      guarded(streamGenerate(conn, encodeOpts, seed(), request, signal), opts.apiKey),
  };
}

export function geminiConnection(opts: GeminiGatewayOptions): HttpConnection {
  return {
    baseUrl: normalizeBaseUrl(opts.baseUrl ?? GEMINI_BASE_URL),
    fetch: opts.fetch ?? defaultFetch,
    stallMs: opts.stallMs ?? DEFAULT_STALL_MS,
    headers: { ...(opts.apiKey ? { 'x-goog-api-key': opts.apiKey } : {}), ...opts.headers },
    hints: GEMINI_HINTS,
    mapHttpFailure: geminiHttpFailure,
  };
}

/** `gemini-2.5-pro` → `/models/gemini-2.5-pro`; `models/…` and `tunedModels/…` names are used as they are. */
export function modelPath(model: string): string {
  const name = model.trim().replace(/^\/+/, '');
  const full = /^(models|tunedModels)\//.test(name) ? name : `models/${name}`;
  return `/${full.split('/').map(encodeURIComponent).join('/')}`;
}

async function* streamGenerate(
  conn: HttpConnection,
  encodeOpts: GeminiEncodeOptions,
  callKeySeed: string,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<StreamPart[]> {
  const { body, warnings } = encodeGeminiRequest(request, encodeOpts);
  const decoder = createGeminiDecoder({ warnings, callKeySeed });
  const opened = await send(
    conn,
    `${modelPath(request.model)}:streamGenerateContent?alt=sse`,
    { method: 'POST', body: JSON.stringify(body) },
    signal,
  );
  if (!opened.ok) {
    yield decoder.fail(opened.error);
    return;
  }
  try {
    yield* decodeJsonStream(opened.response, decoder, { signal, stallMs: conn.stallMs, hints: GEMINI_HINTS });
  } finally {
    opened.release();
  }
}

function randomSeed(): string {
  const bytes = new Uint8Array(6);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
