import { HearthFailure, hearthError, toHearthError, type HearthError } from '$lib/domain/errors';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { formatDuration, readSse } from '../sse';
import { createChatDecoder, type ChatDecoder } from './decode';
import { encodeChatRequest, type EncodeOptions } from './encode';
import {
  cancelledFailure,
  httpFailure,
  invalidJsonFailure,
  networkFailure,
  noAnswerFailure,
  notAStreamFailure,
  parseRetryAfter,
  streamedFailure,
  webPageFailure,
} from './failures';

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
}

export const OPENAI_CHAT_PROVIDER = 'openai-chat';
export const DEFAULT_STALL_MS = 120_000;

export function openAiChatGateway(opts: OpenAiChatGatewayOptions): ModelGateway {
  const conn = resolveConnection(opts);
  return {
    provider: OPENAI_CHAT_PROVIDER,
    stream: (request, signal) => guarded(streamChat(conn, request, signal), opts.apiKey),
  };
}

/** Everything a request needs, resolved once per gateway. */
export interface Connection {
  baseUrl: string;
  apiKey?: string;
  fetch: typeof fetch;
  stallMs: number;
  headers: Record<string, string>;
  maxTokensField: NonNullable<EncodeOptions['maxTokensField']>;
}

export function resolveConnection(opts: OpenAiChatGatewayOptions): Connection {
  const baseUrl = normalizeBaseUrl(opts.baseUrl);
  return {
    baseUrl,
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    fetch: opts.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    stallMs: opts.stallMs ?? DEFAULT_STALL_MS,
    headers: opts.headers ?? {},
    maxTokensField:
      opts.maxTokensField ?? (hostOf(baseUrl) === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens'),
  };
}

export const normalizeBaseUrl = (url: string): string => url.trim().replace(/\/+$/, '');

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

async function* streamChat(
  conn: Connection,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<StreamPart> {
  const { body, warnings } = encodeChatRequest(request, { maxTokensField: conn.maxTokensField });
  const decoder = createChatDecoder({ warnings });
  const opened = await send(
    conn,
    '/chat/completions',
    { method: 'POST', body: JSON.stringify(body) },
    signal,
  );
  if (!opened.ok) {
    yield* decoder.fail(opened.error);
    return;
  }
  const { response, release } = opened;
  try {
    const type = response.headers.get('content-type');
    if (type?.includes('html')) yield* decoder.fail(webPageFailure());
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
): AsyncGenerator<StreamPart> {
  if (!response.body) {
    yield* decoder.fail(notAStreamFailure(undefined, contentType));
    return;
  }
  let firstInvalidLine: string | undefined;
  let events = 0;
  let sawDone = false;
  try {
    const sse = readSse(response.body, {
      signal,
      stallMs: conn.stallMs,
      onInvalidLine: (line) => void (firstInvalidLine ??= line),
    });
    for await (const event of sse) {
      events++;
      if (event.data.trim() === '[DONE]') {
        sawDone = true;
        break;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        yield* decoder.fail(invalidJsonFailure(event.data));
        return;
      }
      yield* decoder.push(chunk);
      if (decoder.closed) return;
    }
  } catch (e) {
    yield* decoder.fail(
      e instanceof HearthFailure
        ? e.error
        : hearthError('model.stream_failed', `Reading the reply failed: ${String(e)}`, { retryable: true }),
    );
    return;
  }
  if (events === 0) yield* decoder.fail(notAStreamFailure(firstInvalidLine, contentType));
  else yield* decoder.end(sawDone);
}

/** A server that ignored `stream: true` (or reported an error as a 200 JSON body). */
async function* decodeJsonReply(
  conn: Connection,
  response: Response,
  decoder: ChatDecoder,
  signal: AbortSignal,
): AsyncGenerator<StreamPart> {
  const text = await readText(response, conn.stallMs, signal);
  if (!text.ok) {
    yield* decoder.fail(text.error);
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(text.value);
  } catch {
    yield* decoder.fail(notAStreamFailure(text.value, response.headers.get('content-type')));
    return;
  }
  const reply = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  if (reply.error !== undefined && reply.error !== null) {
    yield* decoder.fail(streamedFailure(reply.error));
    return;
  }
  const choice = Array.isArray(reply.choices)
    ? (reply.choices[0] as Record<string, unknown> | undefined)
    : undefined;
  const message = choice?.message as Record<string, unknown> | undefined;
  if (!message) {
    yield* decoder.fail(notAStreamFailure(text.value, response.headers.get('content-type')));
    return;
  }
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const delta = {
    ...message,
    tool_calls: calls.map((c: unknown, index) => ({ index, ...(c as object) })),
  };
  yield* decoder.push({
    ...reply,
    choices: [{ index: 0, delta, finish_reason: choice?.finish_reason ?? null }],
  });
  yield* decoder.end(true);
}

export type Sent = { ok: true; response: Response; release: () => void } | { ok: false; error: HearthError };

/**
 * Sends one request and waits for an OK response. Failures come back as values: cancellation,
 * no answer within `stallMs`, network (or CORS) failure, and HTTP errors with the provider's text.
 * `release()` aborts the connection when the caller is done with the body.
 */
export async function send(
  conn: Connection,
  path: string,
  init: { method: 'GET' | 'POST'; body?: string },
  signal: AbortSignal,
): Promise<Sent> {
  if (signal.aborted) return { ok: false, error: cancelledFailure() };
  if (hostOf(conn.baseUrl) === null || !/^https?:\/\//i.test(conn.baseUrl))
    return {
      ok: false,
      error: hearthError(
        'model.not_configured',
        `The base URL "${conn.baseUrl}" is not an http:// or https:// address.`,
      ),
    };
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const release = () => {
    signal.removeEventListener('abort', onAbort);
    ctl.abort();
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, conn.stallMs);
  const fail = (error: HearthError): Sent => {
    release();
    return { ok: false, error };
  };
  try {
    let response: Response;
    try {
      response = await conn.fetch(`${conn.baseUrl}${path}`, {
        method: init.method,
        headers: requestHeaders(conn, init.body !== undefined),
        ...(init.body !== undefined ? { body: init.body } : {}),
        signal: ctl.signal,
      });
    } catch (e) {
      if (signal.aborted) return fail(cancelledFailure());
      if (timedOut) return fail(noAnswerFailure(formatDuration(conn.stallMs)));
      return fail(networkFailure(conn.baseUrl, describeFetchError(e)));
    }
    if (response.ok) return { ok: true, response, release };
    let body = '';
    try {
      body = await response.text();
    } catch {
      if (signal.aborted) return fail(cancelledFailure());
    }
    return fail(
      httpFailure({
        status: response.status,
        body,
        contentType: response.headers.get('content-type'),
        retryAfterMs: parseRetryAfter((n) => response.headers.get(n), Date.now()),
      }),
    );
  } finally {
    clearTimeout(timer);
  }
}

function requestHeaders(conn: Connection, hasBody: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    accept: hasBody ? 'text/event-stream, application/json' : 'application/json',
  };
  if (hasBody) headers['content-type'] = 'application/json';
  if (conn.apiKey) headers.authorization = `Bearer ${conn.apiKey}`;
  return { ...headers, ...conn.headers };
}

/** Node says "fetch failed" and hides the reason in `cause`; browsers give one fixed sentence. */
function describeFetchError(e: unknown): string | undefined {
  if (!(e instanceof Error)) return e === undefined ? undefined : String(e);
  const cause = e.cause instanceof Error ? e.cause.message : undefined;
  return cause ? `${e.message}: ${cause}` : e.message;
}

async function readText(
  response: Response,
  stallMs: number,
  signal: AbortSignal,
): Promise<{ ok: true; value: string } | { ok: false; error: HearthError }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort = () => {};
  const stall = new Promise<'stalled'>((resolve) => (timer = setTimeout(() => resolve('stalled'), stallMs)));
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const value = await Promise.race([response.text(), stall, aborted]);
    if (value === 'aborted') return { ok: false, error: cancelledFailure() };
    if (value === 'stalled') return { ok: false, error: noAnswerFailure(formatDuration(stallMs)) };
    return { ok: true, value };
  } catch {
    if (signal.aborted) return { ok: false, error: cancelledFailure() };
    return {
      ok: false,
      error: hearthError(
        'model.stream_failed',
        'The connection to the provider dropped before the reply finished.',
        {
          retryable: true,
        },
      ),
    };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Keeps the port's promise: the stream never throws, always opens with `turn-start` and ends with
 * one `finish` or `error`; and the API key never appears in error text, even if a provider or a
 * proxy echoes it back.
 */
export async function* guarded(
  parts: AsyncIterable<StreamPart>,
  apiKey: string | undefined,
): AsyncGenerator<StreamPart> {
  let started = false;
  let closed = false;
  try {
    for await (const part of parts) {
      started = true;
      if (part.type === 'finish' || part.type === 'error') closed = true;
      yield part.type === 'error' ? { ...part, error: redactError(part.error, apiKey) } : part;
    }
  } catch (e) {
    if (closed) return;
    if (!started) yield { type: 'turn-start', warnings: [] };
    yield { type: 'error', error: redactError(toHearthError(e, 'model.stream_failed'), apiKey) };
  }
}

export function redactError(error: HearthError, apiKey: string | undefined): HearthError {
  if (!apiKey || apiKey.length < 4 || !error.message.includes(apiKey)) return error;
  return { ...error, message: error.message.replaceAll(apiKey, '[API key]') };
}
