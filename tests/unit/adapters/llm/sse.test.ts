import { describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import { readSse, type SseEvent } from '$lib/adapters/llm/sse';
import { collect } from '../../../support/replay-fetch';

const enc = new TextEncoder();

/** A body that delivers exactly these byte chunks, then closes. */
function chunked(...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      const next = chunks[i++];
      if (next) c.enqueue(next);
      else c.close();
    },
  });
}

/** A body that never delivers anything; records whether it was cancelled. */
function silent(onCancel: () => void = () => {}, first?: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      if (first) c.enqueue(first);
    },
    cancel: onCancel,
  });
}

const read = (body: ReadableStream<Uint8Array>, stallMs = 5_000, signal = new AbortController().signal) =>
  collect(readSse(body, { signal, stallMs }));

async function failureOf(p: Promise<unknown>): Promise<HearthFailure> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HearthFailure) return e;
    throw e;
  }
  throw new Error('expected a HearthFailure');
}

const SAMPLE =
  ': heartbeat\n\n' +
  'data: {"content":"héllo wörld ✓ 日本語 😀"}\n\n' +
  'event: message\r\nid: 7\r\ndata: line one\r\ndata: line two\r\n\r\n' +
  ':another comment\r\n' +
  'data: {"emoji":"🦊🔥"}\r\n\r\n' +
  'data: [DONE]\n\n';

const EXPECTED: SseEvent[] = [
  { data: '{"content":"héllo wörld ✓ 日本語 😀"}' },
  { event: 'message', id: '7', data: 'line one\nline two' },
  { data: '{"emoji":"🦊🔥"}' },
  { data: '[DONE]' },
];

describe('readSse', () => {
  it('parses events, comments, CRLF, multi-line data and [DONE]', async () => {
    expect(await read(chunked(enc.encode(SAMPLE)))).toEqual(EXPECTED);
  });

  it('gives the same events when the body is split at any byte offset, inside UTF-8 characters too', async () => {
    const bytes = enc.encode(SAMPLE);
    for (let at = 1; at < bytes.length; at++) {
      const events = await read(chunked(bytes.slice(0, at), bytes.slice(at)));
      expect(events, `split at byte ${at}`).toEqual(EXPECTED);
    }
  });

  it('gives the same events when the body arrives one byte at a time', async () => {
    const bytes = enc.encode(SAMPLE);
    const chunks = Array.from(bytes, (_, i) => bytes.slice(i, i + 1));
    expect(await read(chunked(...chunks))).toEqual(EXPECTED);
  });

  it('splits CR from LF across chunks without inventing a blank line', async () => {
    const events = await read(chunked(enc.encode('data: a\r'), enc.encode('\ndata: b\r\n\r\n')));
    expect(events).toEqual([{ data: 'a\nb' }]);
  });

  it('dispatches a last event whose blank line never came, but drops a cut-off line', async () => {
    expect(await read(chunked(enc.encode('data: [DONE]\n')))).toEqual([{ data: '[DONE]' }]);
    expect(await read(chunked(enc.encode('data: {"a":1}\n\ndata: {"b"')))).toEqual([{ data: '{"a":1}' }]);
  });

  it('reports lines that are not SSE', async () => {
    const lines: string[] = [];
    const body = chunked(enc.encode('<!doctype html>\n<html>\n'));
    const events = await collect(
      readSse(body, {
        signal: new AbortController().signal,
        stallMs: 1000,
        onInvalidLine: (l) => lines.push(l),
      }),
    );
    expect(events).toEqual([]);
    expect(lines[0]).toBe('<!doctype html>');
  });

  it('fails with model.stream_stalled when nothing arrives, and cancels the body', async () => {
    let cancelled = false;
    const started = Date.now();
    const failure = await failureOf(
      read(
        silent(() => (cancelled = true)),
        60,
      ),
    );
    expect(failure.error).toMatchObject({ code: 'model.stream_stalled', retryable: true });
    expect(failure.error.message).toContain('nothing arrived for 60 ms');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(cancelled).toBe(true);
  });

  it('does not count keep-alive comments as progress', async () => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        timer = setInterval(() => c.enqueue(enc.encode(': keep-alive\n\n')), 10);
      },
      cancel: () => clearInterval(timer),
    });
    const failure = await failureOf(read(body, 80));
    expect(failure.error.code).toBe('model.stream_stalled');
    expect(failure.error.message).toContain('only keep-alive comments');
  });

  it('keeps waiting while data keeps arriving, past the stall time in all, and stalls once it stops', async () => {
    let timer: ReturnType<typeof setInterval> | undefined;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        timer = setInterval(() => {
          if (sent < 10) c.enqueue(enc.encode(`data: ${sent++}\n\n`));
        }, 15);
      },
      cancel: () => clearInterval(timer),
    });
    const seen: string[] = [];
    const failure = await failureOf(
      (async () => {
        for await (const e of readSse(body, { signal: new AbortController().signal, stallMs: 60 }))
          seen.push(e.data);
      })(),
    );
    expect(seen).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(failure.error.code).toBe('model.stream_stalled');
    expect(failure.error.message).toContain('nothing arrived for 60 ms');
  });

  it('does not count the consumer’s own time between events as waiting', async () => {
    const body = chunked(enc.encode('data: one\n\n'), enc.encode('data: two\n\n'));
    const seen: string[] = [];
    for await (const e of readSse(body, { signal: new AbortController().signal, stallMs: 30 })) {
      seen.push(e.data);
      await new Promise((r) => setTimeout(r, 80));
    }
    expect(seen).toEqual(['one', 'two']);
  });

  it('stops promptly on abort and releases the reader', async () => {
    const ctl = new AbortController();
    let cancelled = false;
    const body = silent(() => (cancelled = true), enc.encode('data: one\n\n'));
    const seen: SseEvent[] = [];
    const done = (async () => {
      for await (const e of readSse(body, { signal: ctl.signal, stallMs: 10_000 })) {
        seen.push(e);
        setTimeout(() => ctl.abort(), 10);
      }
    })();
    const failure = await failureOf(done);
    expect(failure.error.code).toBe('model.cancelled');
    expect(seen).toEqual([{ data: 'one' }]);
    expect(cancelled).toBe(true);
    expect(body.locked).toBe(false);
  });

  it('fails at once when the signal is already aborted', async () => {
    const ctl = new AbortController();
    ctl.abort();
    const failure = await failureOf(read(silent(), 10_000, ctl.signal));
    expect(failure.error.code).toBe('model.cancelled');
  });

  it('turns a broken connection into model.stream_failed', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('data: one\n\n'));
        setTimeout(() => c.error(new TypeError('terminated')), 5);
      },
    });
    const failure = await failureOf(read(body));
    expect(failure.error).toMatchObject({ code: 'model.stream_failed', retryable: true });
  });

  it('releases the reader when the consumer stops early', async () => {
    let cancelled = false;
    const body = silent(() => (cancelled = true), enc.encode('data: one\n\ndata: two\n\n'));
    for await (const e of readSse(body, { signal: new AbortController().signal, stallMs: 10_000 })) {
      expect(e.data).toBe('one');
      break;
    }
    expect(cancelled).toBe(true);
    expect(body.locked).toBe(false);
  });
});
