import type { ModelRequest, StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { append, readJsonEvents } from '../json-stream';
import {
  DEFAULT_STALL_MS,
  defaultFetch,
  guarded,
  hostOf,
  normalizeBaseUrl,
  readText,
  send,
  type HttpConnection,
} from '../http';
import { notAStreamFailure, streamedFailure, webPageFailure } from '../http-failures';
import { createChatDecoder, type ChatDecoder } from './decode';
import { encodeChatRequest, type EncodeOptions } from './encode';
import { CHAT_SAMPLER_HOSTS, type ChatSamplerHost } from './sampler';

export { DEFAULT_STALL_MS, guarded, normalizeBaseUrl, redactError, send, type Sent } from '../http';

export interface OpenAiChatGatewayOptions {
  /** The API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** Abandon the call when no data arrives for this long (also the wait for response headers). */
  stallMs?: number;
  /** Extra headers, e.g. OpenRouter's `HTTP-Referer` and `X-Title`. */
  headers?: Record<string, string>;
  /** Defaults to `max_completion_tokens` for api.openai.com and `max_tokens` elsewhere. */
  maxTokensField?: EncodeOptions['maxTokensField'];
  /** What the host takes of the sampler settings; defaults to OpenAI's for api.openai.com. */
  samplerHost?: ChatSamplerHost;
}

export const OPENAI_CHAT_PROVIDER = 'openai-chat';

export function openAiChatGateway(opts: OpenAiChatGatewayOptions): ModelGateway {
  const conn = resolveConnection(opts);
  return {
    provider: OPENAI_CHAT_PROVIDER,
    stream: (request, signal) => guarded(streamChat(conn, request, signal), opts.apiKey),
  };
}

/** Everything a request needs, resolved once per gateway. */
export interface Connection extends HttpConnection {
  maxTokensField: NonNullable<EncodeOptions['maxTokensField']>;
  samplerHost: ChatSamplerHost;
}

export function resolveConnection(opts: OpenAiChatGatewayOptions): Connection {
  const baseUrl = normalizeBaseUrl(opts.baseUrl);
  const openAi = hostOf(baseUrl) === 'api.openai.com';
  return {
    baseUrl,
    fetch: opts.fetch ?? defaultFetch,
    stallMs: opts.stallMs ?? DEFAULT_STALL_MS,
    headers: { ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}), ...opts.headers },
    maxTokensField: opts.maxTokensField ?? (openAi ? 'max_completion_tokens' : 'max_tokens'),
    samplerHost: opts.samplerHost ?? (openAi ? CHAT_SAMPLER_HOSTS.openai : CHAT_SAMPLER_HOSTS.custom),
  };
}

async function* streamChat(
  conn: Connection,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<StreamPart[]> {
  const { body, warnings } = encodeChatRequest(request, {
    maxTokensField: conn.maxTokensField,
    samplerHost: conn.samplerHost,
  });
  const decoder = createChatDecoder({ warnings });
  const opened = await send(
    conn,
    '/chat/completions',
    { method: 'POST', body: JSON.stringify(body) },
    signal,
  );
  if (!opened.ok) {
    yield decoder.fail(opened.error);
    return;
  }
  const { response, release } = opened;
  try {
    const type = response.headers.get('content-type');
    if (type?.includes('html')) yield decoder.fail(webPageFailure());
    else if (type?.includes('json')) yield* decodeJsonReply(conn, response, decoder, signal);
    else yield* decodeStream(conn, response, type, decoder, signal);
  } finally {
    release();
  }
}

async function* decodeStream(
  conn: Connection,
  response: Response,
  contentType: string | null,
  decoder: ChatDecoder,
  signal: AbortSignal,
): AsyncGenerator<StreamPart[]> {
  if (!response.body) {
    yield decoder.fail(notAStreamFailure(undefined, contentType));
    return;
  }
  const end = yield* readJsonEvents(
    response.body,
    decoder,
    (chunk, _event, parts) => decoder.push(chunk, parts),
    {
      signal,
      stallMs: conn.stallMs,
      isDone: (data) => data.trim() === '[DONE]',
    },
  );
  if (!end) return;
  yield append(
    end.parts,
    end.events === 0
      ? decoder.fail(notAStreamFailure(end.firstInvalidLine, contentType))
      : decoder.end(end.sawDone),
  );
}

/** A server that ignored `stream: true` (or reported an error as a 200 JSON body). */
async function* decodeJsonReply(
  conn: Connection,
  response: Response,
  decoder: ChatDecoder,
  signal: AbortSignal,
): AsyncGenerator<StreamPart[]> {
  const text = await readText(response, conn.stallMs, signal);
  if (!text.ok) {
    yield decoder.fail(text.error);
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(text.value);
  } catch {
    yield decoder.fail(notAStreamFailure(text.value, response.headers.get('content-type')));
    return;
  }
  const reply = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  if (reply.error !== undefined && reply.error !== null) {
    yield decoder.fail(streamedFailure(reply.error));
    return;
  }
  const choice = Array.isArray(reply.choices)
    ? (reply.choices[0] as Record<string, unknown> | undefined)
    : undefined;
  const message = choice?.message as Record<string, unknown> | undefined;
  if (!message) {
    yield decoder.fail(notAStreamFailure(text.value, response.headers.get('content-type')));
    return;
  }
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const delta = {
    ...message,
    tool_calls: calls.map((c: unknown, index) => ({ index, ...(c as object) })),
  };
  const parts = decoder.push({
    ...reply,
    choices: [{ index: 0, delta, finish_reason: choice?.finish_reason ?? null }],
  });
  yield append(parts, decoder.end(true));
}
