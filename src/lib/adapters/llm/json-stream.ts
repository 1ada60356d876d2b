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
import { createEventJsonParser } from './event-json';
import { readSseBatches } from './sse';

/**
 * A pure, incremental decoder of one provider's JSON stream events into canonical parts. The
 * first output of any method starts with `turn-start`; after `finish` or `error` it returns nothing.
 */
export interface JsonStreamDecoder {
  /**
   * Parts for one SSE event whose data parsed as JSON; `event` is the SSE event name, if any.
   * Nothing of `data` may be kept past the call (copy what a part carries): the next event's
   * data can be the same object, changed (see `event-json.ts`).
   */
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
 * stream, and feeds it to the decoder: one batch of parts per network chunk. Every failure ends
 * in the decoder's `error` part.
 */
export async function* decodeJsonStream(
  response: Response,
  decoder: JsonStreamDecoder,
  opts: DecodeOptions,
): AsyncGenerator<StreamPart[]> {
  const hints = opts.hints ?? OPENAI_COMPATIBLE_HINTS;
  const contentType = response.headers.get('content-type');
  if (contentType?.includes('html')) {
    yield decoder.fail(webPageFailure(undefined, hints));
    return;
  }
  if (contentType?.includes('json')) {
    const text = await readText(response, opts.stallMs, opts.signal);
    if (!text.ok) {
      yield decoder.fail(text.error);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(text.value);
    } catch {
      yield decoder.fail(notAStreamFailure(text.value, contentType, hints));
      return;
    }
    yield [...decoder.pushJson(json), ...decoder.end()];
    return;
  }
  if (!response.body) {
    yield decoder.fail(notAStreamFailure(undefined, contentType, hints));
    return;
  }
  const end = yield* readJsonEvents(
    response.body,
    decoder,
    (data, event, parts) => append(parts, decoder.push(data, event)),
    opts,
  );
  if (!end) return;
  yield append(
    end.parts,
    end.events === 0
      ? decoder.fail(notAStreamFailure(end.firstInvalidLine, contentType, hints))
      : decoder.end(),
  );
}

/** How a body of SSE events ended when no event ended the turn. */
export interface JsonEventsEnd {
  events: number;
  /** An event `isDone` recognized came (and ended the reading). */
  sawDone: boolean;
  firstInvalidLine: string | undefined;
  /** Parts decoded but not yet delivered (from the batch an `isDone` event ended). */
  parts: StreamPart[];
}

/**
 * Reads SSE events with JSON data into a decoder, one batch of parts per network chunk (a throw
 * midway still delivers the batch's parts before the error). `push` must keep nothing of the
 * data it is given, as `JsonStreamDecoder.push`. Returns null when the turn ended
 * inside (the decoder closed, or its `error` part was delivered), else how the body ended.
 */
export async function* readJsonEvents(
  body: ReadableStream<Uint8Array>,
  decoder: { fail(error: HearthError): StreamPart[]; readonly closed: boolean },
  push: (data: unknown, event: string | undefined, parts: StreamPart[]) => void,
  opts: {
    signal: AbortSignal;
    stallMs: number;
    /** An end marker that is not JSON (OpenAI's `[DONE]`). */
    isDone?: (data: string) => boolean;
  },
): AsyncGenerator<StreamPart[], JsonEventsEnd | null> {
  // `push` keeps nothing of an event's data, so the parser may hand back an earlier event's object.
  const parse = createEventJsonParser();
  let firstInvalidLine: string | undefined;
  let events = 0;
  let parts: StreamPart[] = [];
  try {
    const sse = readSseBatches(body, {
      signal: opts.signal,
      stallMs: opts.stallMs,
      onInvalidLine: (line) => void (firstInvalidLine ??= line),
    });
    for await (const batch of sse) {
      for (const event of batch) {
        events++;
        if (opts.isDone?.(event.data)) return { events, sawDone: true, firstInvalidLine, parts };
        let data: unknown;
        try {
          data = parse(event.data);
        } catch {
          yield append(parts, decoder.fail(invalidJsonFailure(event.data)));
          return null;
        }
        push(data, event.event, parts);
        if (decoder.closed) {
          yield parts;
          return null;
        }
      }
      const done = parts;
      parts = [];
      yield done;
    }
  } catch (e) {
    yield append(
      parts,
      decoder.fail(
        e instanceof HearthFailure
          ? e.error
          : hearthError('model.stream_failed', `Reading the reply failed: ${String(e)}`, { retryable: true }),
      ),
    );
    return null;
  }
  return { events, sawDone: false, firstInvalidLine, parts };
}

/** Appends `more` to `parts` (without spreading into arguments, which has a size limit) and returns it. */
export function append(parts: StreamPart[], more: readonly StreamPart[]): StreamPart[] {
  for (const part of more) parts.push(part);
  return parts;
}
