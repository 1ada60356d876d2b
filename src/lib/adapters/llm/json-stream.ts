import { HearthFailure, hearthError, type HearthError } from '$lib/domain/errors';
import type { StreamPart } from '$lib/domain/model';
import { readText } from './http';
import {
  invalidJsonFailure,
  notAStreamFailure,
  OPENAI_COMPATIBLE_HINTS,
  webPageFailure,
  type FailureHints,
} from './http-failures';
import { readSse } from './sse';

/**
 * A pure, incremental decoder of one provider's JSON stream events into canonical parts. The
 * first output of any method starts with `turn-start`; after `finish` or `error` it returns nothing.
 */
export interface JsonStreamDecoder {
  /** Parts for one SSE event whose data parsed as JSON; `event` is the SSE event name, if any. */
  push(data: unknown, event?: string): StreamPart[];
  /** A whole JSON reply (a server that answered without streaming), then `end()` follows. */
  pushJson(body: unknown): StreamPart[];
  /** The body ended. */
  end(): StreamPart[];
  /** Ends the turn with this error, closing open blocks first. */
  fail(error: HearthError): StreamPart[];
  readonly closed: boolean;
}

export interface DecodeOptions {
  signal: AbortSignal;
  stallMs: number;
  hints?: FailureHints;
}

/**
 * Reads an OK response as SSE with JSON data lines, or as one JSON body when the server did not
 * stream, and feeds it to the decoder. Every failure ends in the decoder's `error` part.
 */
export async function* decodeJsonStream(
  response: Response,
  decoder: JsonStreamDecoder,
  opts: DecodeOptions,
): AsyncGenerator<StreamPart> {
  const hints = opts.hints ?? OPENAI_COMPATIBLE_HINTS;
  const contentType = response.headers.get('content-type');
  if (contentType?.includes('html')) {
    yield* decoder.fail(webPageFailure(undefined, hints));
    return;
  }
  if (contentType?.includes('json')) {
    const text = await readText(response, opts.stallMs, opts.signal);
    if (!text.ok) {
      yield* decoder.fail(text.error);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(text.value);
    } catch {
      yield* decoder.fail(notAStreamFailure(text.value, contentType, hints));
      return;
    }
    yield* decoder.pushJson(json);
    yield* decoder.end();
    return;
  }
  if (!response.body) {
    yield* decoder.fail(notAStreamFailure(undefined, contentType, hints));
    return;
  }
  let firstInvalidLine: string | undefined;
  let events = 0;
  try {
    const sse = readSse(response.body, {
      signal: opts.signal,
      stallMs: opts.stallMs,
      onInvalidLine: (line) => void (firstInvalidLine ??= line),
    });
    for await (const event of sse) {
      events++;
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        yield* decoder.fail(invalidJsonFailure(event.data));
        return;
      }
      yield* decoder.push(data, event.event);
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
  if (events === 0) yield* decoder.fail(notAStreamFailure(firstInvalidLine, contentType, hints));
  else yield* decoder.end();
}
