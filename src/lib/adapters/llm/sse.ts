import { createParser, type ParseError } from 'eventsource-parser';
import { HearthFailure, hearthError } from '$lib/domain/errors';
import { createUtf8Decoder } from './utf8-decoder';

export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
}

export interface ReadSseOptions {
  signal: AbortSignal;
  /** Fail with `model.stream_stalled` when this long passes without data (keep-alive comments do not count). */
  stallMs: number;
  /** Called with each line that is not SSE (the gateway uses it to recognise web pages and raw JSON). */
  onInvalidLine?: (line: string) => void;
}

/** Far above any real event; only stops a runaway body from exhausting memory. */
const MAX_BUFFER_CHARS = 32 * 1024 * 1024;

/**
 * Reads a server-sent event stream. Ends normally at the end of the body; every other ending
 * throws a HearthFailure: `model.cancelled` (signal), `model.stream_stalled` (no data for
 * `stallMs`), `model.stream_failed` (the connection broke), `model.upstream_invalid_response`
 * (an event too large to buffer). The reader is always cancelled and released, including when
 * the consumer stops iterating early.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  opts: ReadSseOptions,
): AsyncGenerator<SseEvent, void, undefined> {
  for await (const events of readSseBatches(body, opts)) yield* events;
}

/**
 * `readSse` one network chunk at a time: each batch holds the events that chunk completed (never
 * empty). The gateways use it so a chunk of many small events costs one await, not one per event.
 */
export async function* readSseBatches(
  body: ReadableStream<Uint8Array>,
  opts: ReadSseOptions,
): AsyncGenerator<SseEvent[], void, undefined> {
  const reader = body.getReader();
  const decoder = createUtf8Decoder();
  let pending: SseEvent[] = [];
  let comments = 0;
  let overflow = false;
  const parser = createParser({
    maxBufferSize: MAX_BUFFER_CHARS,
    onEvent: (e) => pending.push(toSseEvent(e)),
    onComment: () => void comments++,
    onError: (e: ParseError) => {
      if (e.type === 'max-buffer-size-exceeded') overflow = true;
      else opts.onInvalidLine?.(e.line ?? e.field ?? '');
    },
  });
  let endsWithNewline = true;
  const feed = (text: string) => {
    if (text === '') return;
    parser.feed(text);
    const last = text.charCodeAt(text.length - 1);
    endsWithNewline = last === 10 || last === 13; // not a regex: /[\r\n]$/ scans the whole text
    if (overflow)
      throw failure('model.upstream_invalid_response', 'The provider sent an event too large to read.');
  };

  // One stall timer and one abort listener for the whole body, not one of each per chunk. Either
  // ends a pending read by cancelling the reader (a cancel settles it at once, as done).
  let interrupted: 'aborted' | 'stalled' | undefined;
  const interrupt = (why: 'aborted' | 'stalled') => {
    interrupted ??= why;
    reader.cancel().catch(() => {});
  };
  const onAbort = () => interrupt('aborted');
  // Time spent waiting for data; the consumer's own time between events is not counted.
  let idleMs = 0;
  let reading = false;
  let deadline = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The timer only ever fires early (the deadline moves later with each read); it then waits the rest.
  const checkStall = () => {
    timer = undefined;
    if (!reading) return;
    const left = deadline - Date.now();
    if (left > 0) timer = setTimeout(checkStall, left);
    else interrupt('stalled');
  };
  let onlyHeartbeats = false;
  try {
    if (opts.signal.aborted) throw cancelled();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    for (;;) {
      const started = Date.now();
      deadline = started + opts.stallMs - idleMs;
      reading = true;
      timer ??= setTimeout(checkStall, Math.max(0, deadline - started));
      let step: ReadableStreamReadResult<Uint8Array> | undefined;
      try {
        step = await reader.read();
      } catch {
        // the connection broke, unless an interruption came first
      }
      reading = false;
      if (interrupted === 'aborted') throw cancelled();
      if (interrupted === 'stalled') throw stalled(opts.stallMs, onlyHeartbeats);
      if (step === undefined) {
        throw failure(
          'model.stream_failed',
          'The connection to the provider dropped before the reply finished.',
          {
            retryable: true,
          },
        );
      }
      if (step.done) {
        feed(decoder.end());
        // Servers often omit the blank line after their last event; a cut-off line is dropped.
        if (endsWithNewline) feed('\n\n');
        if (pending.length > 0) yield pending;
        return;
      }
      const commentsBefore = comments;
      feed(decoder.decode(step.value));
      const heartbeatOnly = pending.length === 0 && comments > commentsBefore;
      if (heartbeatOnly) {
        idleMs += Date.now() - started;
        onlyHeartbeats = true;
      } else {
        idleMs = 0;
        if (pending.length > 0) onlyHeartbeats = false;
      }
      if (pending.length > 0) {
        const events = pending;
        pending = [];
        yield events;
      }
    }
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', onAbort);
    release(reader);
  }
}

function release(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  // cancel() settles a pending read at once, so the lock can be released right after.
  reader.cancel().catch(() => {});
  try {
    reader.releaseLock();
  } catch {
    // already released
  }
}

function toSseEvent(e: { event?: string; data: string; id?: string }): SseEvent {
  const out: SseEvent = { data: e.data };
  if (e.event !== undefined) out.event = e.event;
  if (e.id !== undefined) out.id = e.id;
  return out;
}

const failure = (code: Parameters<typeof hearthError>[0], message: string, extra?: { retryable?: boolean }) =>
  new HearthFailure(hearthError(code, message, extra));

const cancelled = () => failure('model.cancelled', 'The model call was cancelled.');

function stalled(stallMs: number, onlyHeartbeats: boolean): HearthFailure {
  const wait = formatDuration(stallMs);
  const message = onlyHeartbeats
    ? `The provider sent only keep-alive comments and no data for ${wait}; the reply was abandoned.`
    : `The provider stopped sending data: nothing arrived for ${wait}; the reply was abandoned.`;
  return failure('model.stream_stalled', message, { retryable: true });
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
