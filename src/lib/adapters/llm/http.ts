import { hearthError, toHearthError, type HearthError } from '$lib/domain/errors';
import type { StreamPart } from '$lib/domain/model';
import {
  cancelledFailure,
  httpFailure,
  networkFailure,
  noAnswerFailure,
  OPENAI_COMPATIBLE_HINTS,
  parseRetryAfter,
  type FailureHints,
  type HttpFailureInput,
} from './http-failures';
import { formatDuration } from './sse';

/**
 * The one I/O seam shared by the LLM adapters: send a request, wait for an OK response, turn
 * every other outcome into a HearthError value. Each adapter supplies its own headers (auth
 * differs per provider) and, when its error bodies need it, its own HTTP error mapping.
 */
export interface HttpConnection {
  /** The API root without a trailing slash. */
  baseUrl: string;
  fetch: typeof fetch;
  /** Abandon the call when no data arrives for this long (also the wait for response headers). */
  stallMs: number;
  /** Headers sent with every request: auth, versions and any extra headers of the connection. */
  headers: Record<string, string>;
  /** Advice that differs per provider in failure messages. */
  hints?: FailureHints;
  /** Maps a non-OK response; defaults to `httpFailure`. */
  mapHttpFailure?: (input: HttpFailureInput) => HearthError;
}

export const DEFAULT_STALL_MS = 120_000;

export const normalizeBaseUrl = (url: string): string => url.trim().replace(/\/+$/, '');

export function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

/** The default `fetch`, bound late so tests and workers can replace the global. */
export const defaultFetch: typeof fetch = (input, init) => globalThis.fetch(input, init);

export type Sent = { ok: true; response: Response; release: () => void } | { ok: false; error: HearthError };

/**
 * Sends one request and waits for an OK response. Failures come back as values: cancellation,
 * no answer within `stallMs`, network (or CORS) failure, and HTTP errors with the provider's text.
 * `release()` aborts the connection when the caller is done with the body.
 */
export async function send(
  conn: HttpConnection,
  path: string,
  init: { method: 'GET' | 'POST'; body?: string; accept?: string },
  signal: AbortSignal,
): Promise<Sent> {
  const hints = conn.hints ?? OPENAI_COMPATIBLE_HINTS;
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
      const hasBody = init.body !== undefined;
      const headers: Record<string, string> = {
        accept: init.accept ?? (hasBody ? 'text/event-stream, application/json' : 'application/json'),
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
        ...conn.headers,
      };
      response = await conn.fetch(`${conn.baseUrl}${path}`, {
        method: init.method,
        headers,
        ...(hasBody ? { body: init.body } : {}),
        signal: ctl.signal,
      });
    } catch (e) {
      if (signal.aborted) return fail(cancelledFailure());
      if (timedOut) return fail(noAnswerFailure(formatDuration(conn.stallMs)));
      return fail(networkFailure(conn.baseUrl, describeFetchError(e), hints));
    }
    if (response.ok) return { ok: true, response, release };
    let body = '';
    try {
      body = await response.text();
    } catch {
      if (signal.aborted) return fail(cancelledFailure());
    }
    const input: HttpFailureInput = {
      status: response.status,
      body,
      contentType: response.headers.get('content-type'),
      retryAfterMs: parseRetryAfter((n) => response.headers.get(n), Date.now()),
    };
    return fail(conn.mapHttpFailure ? conn.mapHttpFailure(input) : httpFailure(input, hints));
  } finally {
    clearTimeout(timer);
  }
}

/** Node says "fetch failed" and hides the reason in `cause`; browsers give one fixed sentence. */
export function describeFetchError(e: unknown): string | undefined {
  if (!(e instanceof Error)) return e === undefined ? undefined : String(e);
  const cause = e.cause instanceof Error ? e.cause.message : undefined;
  return cause ? `${e.message}: ${cause}` : e.message;
}

/** The whole body as text, within `stallMs`, or the failure (cancelled, stalled, dropped). */
export async function readText(
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
 * proxy echoes it back. The gateways decode in batches (one per network chunk); the port gets
 * one part at a time. An iterator rather than an async generator: a part of a batch already
 * decoded costs one resolved promise, not a generator step. Meant for `for await`, which makes
 * one call at a time; ending the loop early closes the batches.
 */
export function guarded(
  batches: AsyncIterable<readonly StreamPart[]>,
  apiKey: string | undefined,
): AsyncIterableIterator<StreamPart> {
  let source: AsyncIterator<readonly StreamPart[]> | undefined;
  let batch: readonly StreamPart[] = [];
  let at = 0;
  let started = false;
  let closed = false;
  let ended = false;
  const part = (): IteratorResult<StreamPart> => {
    const p = batch[at++]!;
    started = true;
    if (p.type === 'finish' || p.type === 'error') closed = true;
    return { done: false, value: p.type === 'error' ? { ...p, error: redactError(p.error, apiKey) } : p };
  };
  const more = async (): Promise<IteratorResult<StreamPart>> => {
    while (at >= batch.length) {
      if (ended) return { done: true, value: undefined };
      try {
        source ??= batches[Symbol.asyncIterator]();
        const step = await source.next();
        ended = step.done === true;
        batch = step.done ? [] : step.value;
      } catch (e) {
        ended = true;
        const error: StreamPart = { type: 'error', error: toHearthError(e, 'model.stream_failed') };
        batch = closed ? [] : started ? [error] : [{ type: 'turn-start', warnings: [] }, error];
      }
      at = 0;
    }
    return part();
  };
  const iterator: AsyncIterableIterator<StreamPart> = {
    [Symbol.asyncIterator]: () => iterator,
    next: () => (at < batch.length ? Promise.resolve(part()) : more()),
    async return() {
      if (!ended) {
        ended = true;
        batch = [];
        // The stream never throws, not even when closing fails.
        await source?.return?.()?.catch(() => {});
      }
      return { done: true, value: undefined };
    },
  };
  return iterator;
}

export function redactError(error: HearthError, apiKey: string | undefined): HearthError {
  if (!apiKey || apiKey.length < 4 || !error.message.includes(apiKey)) return error;
  return { ...error, message: error.message.replaceAll(apiKey, '[API key]') };
}
