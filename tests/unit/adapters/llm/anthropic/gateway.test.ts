import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { canRetryModelCall, type HearthError } from '$lib/domain/errors';
import { anthropicGateway, type AnthropicGatewayOptions } from '$lib/adapters/llm/anthropic/gateway';
import { collect, replayFetch, type ReplayOptions } from '../../../../support/replay-fetch';

const KEY = 'sk-ant-api03-secret-123456';
const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

const sampleRequest = (): ModelRequest => ({
  model: 'claude-sonnet-4-5',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  toolChoice: 'auto',
});

async function run(
  body: string | Uint8Array,
  replay: ReplayOptions = {},
  opts: AnthropicGatewayOptions = {},
) {
  const fetch = replayFetch(body, replay);
  const gateway = anthropicGateway({ apiKey: KEY, fetch, ...opts });
  const parts = await collect(gateway.stream(sampleRequest(), new AbortController().signal));
  return { parts, fetch };
}

const errorOf = (parts: StreamPart[]): HearthError => {
  const last = parts.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error part, got ${JSON.stringify(last)}`);
  return last.error;
};

/** A fetch whose body is produced by `body()` (a stream that errors, or never ends). */
function streamFetch(body: () => ReadableStream<Uint8Array>): typeof fetch {
  return (async () =>
    new Response(body(), { status: 200, headers: { 'content-type': 'text/event-stream' } })) as typeof fetch;
}

/** A body that delivers `head`, then fails as a cut connection does. */
function dropAfter(head: Uint8Array): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream({
    pull(c) {
      if (sent) return c.error(new TypeError('network error'));
      sent = true;
      c.enqueue(head);
    },
  });
}

const JSON_HEADERS = { 'content-type': 'application/json' };

describe('anthropicGateway requests', () => {
  it('posts to {baseUrl}/messages with the browser-access, version and key headers', async () => {
    const { fetch } = await run(fixture('text.sse'), {}, { headers: { 'anthropic-beta': 'x' } });
    expect(fetch.calls).toHaveLength(1);
    const [call] = fetch.calls;
    expect(call?.url).toBe('https://api.anthropic.com/v1/messages');
    expect(call?.init?.method).toBe('POST');
    expect(call?.init?.headers).toEqual({
      accept: 'text/event-stream, application/json',
      'content-type': 'application/json',
      'x-api-key': KEY,
      'anthropic-version': '2023-06-01',
      'anthropic-dangerous-direct-browser-access': 'true',
      'anthropic-beta': 'x',
    });
    expect(JSON.parse(String(call?.init?.body))).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8192,
      stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
  });

  it('uses a custom base URL (a CORS relay) and the encoder options', async () => {
    const { fetch } = await run(
      fixture('text.sse'),
      {},
      { baseUrl: 'https://relay.example.test/anthropic/v1/', maxTokens: 100, promptCaching: false },
    );
    expect(fetch.calls[0]?.url).toBe('https://relay.example.test/anthropic/v1/messages');
    expect(JSON.parse(String(fetch.calls[0]?.init?.body))).toMatchObject({
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
  });

  it('puts encoder warnings on turn-start', async () => {
    const fetch = replayFetch(fixture('text.sse'));
    const request: ModelRequest = { ...sampleRequest(), toolChoice: 'required' };
    const [first] = await collect(anthropicGateway({ fetch }).stream(request, new AbortController().signal));
    expect(first).toEqual({
      type: 'turn-start',
      warnings: ['A tool choice was requested but no tools were offered; it was not sent.'],
    });
  });
});

describe('anthropicGateway failures', () => {
  it('401: the key was refused', async () => {
    const { parts } = await run(fixture('error-401.json'), { status: 401, headers: JSON_HEADERS });
    expect(parts).toEqual([
      { type: 'turn-start', warnings: [] },
      {
        type: 'error',
        error: {
          code: 'model.provider_denied',
          message: 'The API key was refused (HTTP 401): invalid x-api-key.',
          status: 401,
        },
      },
    ]);
  });

  it('404: names the model and the Anthropic base URL', async () => {
    const { parts } = await run(fixture('error-404.json'), { status: 404, headers: JSON_HEADERS });
    expect(errorOf(parts)).toEqual({
      code: 'model.request_failed',
      message:
        'The model or the endpoint was not found (HTTP 404): model: claude-sonnet-9. Check the model name and the base URL (for Anthropic it is https://api.anthropic.com/v1).',
      status: 404,
    });
  });

  it('429: a retryable rate limit with retry-after', async () => {
    const { parts } = await run(fixture('error-429.json'), {
      status: 429,
      headers: { ...JSON_HEADERS, 'retry-after': '20' },
    });
    expect(errorOf(parts)).toEqual({
      code: 'model.provider_rate_limited',
      message:
        'The provider is rate-limiting requests (HTTP 429): This request would exceed the rate limit for your organization of 50,000 input tokens per minute.',
      status: 429,
      retryable: true,
      retryAfterMs: 20_000,
    });
  });

  it('529: overloaded, retryable', async () => {
    const { parts } = await run(fixture('error-529.json'), { status: 529, headers: JSON_HEADERS });
    const error = errorOf(parts);
    expect(error).toEqual({
      code: 'model.request_failed',
      message: 'The provider is overloaded (HTTP 529): Overloaded.',
      status: 529,
      retryable: true,
    });
    expect(canRetryModelCall(error)).toBe(true);
  });

  it('never puts the API key in error text', async () => {
    const body = JSON.stringify({
      type: 'error',
      error: { type: 'authentication_error', message: `bad key ${KEY}` },
    });
    const { parts } = await run(body, { status: 401, headers: JSON_HEADERS });
    expect(errorOf(parts).message).toBe('The API key was refused (HTTP 401): bad key [API key].');
  });

  it('a web page served with 200', async () => {
    const { parts } = await run('<!doctype html><html><body>Welcome</body></html>', {
      headers: { 'content-type': 'text/html; charset=utf-8' },
    });
    expect(errorOf(parts)).toEqual({
      code: 'model.upstream_invalid_response',
      message:
        'The endpoint returned a web page, not an API response. Check the base URL: it should be the API root (for Anthropic, https://api.anthropic.com/v1), not a website.',
    });
  });

  it('a body that is not an event stream', async () => {
    const { parts } = await run('hello\n', { headers: { 'content-type': 'text/plain' } });
    expect(errorOf(parts)).toMatchObject({
      code: 'model.upstream_invalid_response',
      message:
        'The endpoint did not answer with an event stream (content type text/plain). It began with "hello". Check the base URL.',
    });
  });

  it('a data line that is not JSON', async () => {
    const { parts } = await run('event: message_start\ndata: {"type": "message_start", "message": {\n\n');
    expect(errorOf(parts)).toEqual({
      code: 'model.upstream_invalid_response',
      message: 'The provider sent a data line that is not valid JSON: {"type": "message_start", "message": {',
      retryable: true,
    });
  });

  it('invalid UTF-8 in a text delta decodes to replacement characters, never a crash', async () => {
    const enc = new TextEncoder();
    const text = fixture('text.sse');
    const at = text.indexOf('Hello');
    const bytes = new Uint8Array([
      ...enc.encode(text.slice(0, at)),
      0xff,
      0xfe,
      ...enc.encode(text.slice(at)),
    ]);
    const { parts } = await run(bytes, { chunkSize: 3 });
    expect(parts.find((p) => p.type === 'text-delta')).toEqual({
      type: 'text-delta',
      blockId: 'text-1',
      delta: '\uFFFD\uFFFDHello',
    });
    expect(parts.at(-1)?.type).toBe('finish');
  });

  it('a connection dropped mid-reply is a retryable model.stream_failed', async () => {
    const head = new TextEncoder().encode(fixture('text.sse').split('event: content_block_stop')[0]);
    const fetch = streamFetch(() => dropAfter(head));
    const parts = await collect(
      anthropicGateway({ fetch }).stream(sampleRequest(), new AbortController().signal),
    );
    expect(parts.slice(-2)).toEqual([
      { type: 'text-end', blockId: 'text-1' },
      {
        type: 'error',
        error: {
          code: 'model.stream_failed',
          message: 'The connection to the provider dropped before the reply finished.',
          retryable: true,
        },
      },
    ]);
  });

  it('a drop during tool input is never retryable', async () => {
    const head = new TextEncoder().encode(fixture('tool-use.sse').split('"partial_json":" CA')[0]);
    const fetch = streamFetch(() => dropAfter(head));
    const parts = await collect(
      anthropicGateway({ fetch }).stream(sampleRequest(), new AbortController().signal),
    );
    const error = errorOf(parts);
    expect(error).toMatchObject({ code: 'model.stream_failed', retryable: false, afterToolOutput: true });
    expect(canRetryModelCall(error)).toBe(false);
  });

  it('heartbeats only (pings as comments) stall out as model.stream_stalled', async () => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const fetch = streamFetch(
      () =>
        new ReadableStream({
          start(c) {
            const beat = () => c.enqueue(new TextEncoder().encode(': ping\n\n'));
            beat();
            timer = setInterval(beat, 10);
          },
          cancel() {
            clearInterval(timer);
          },
        }),
    );
    const parts = await collect(
      anthropicGateway({ fetch, stallMs: 120 }).stream(sampleRequest(), new AbortController().signal),
    );
    clearInterval(timer);
    expect(errorOf(parts)).toEqual({
      code: 'model.stream_stalled',
      message: 'The provider sent only keep-alive comments and no data for 120 ms; the reply was abandoned.',
      retryable: true,
    });
  });

  it('a rejected fetch is model.network_error with Anthropic-specific advice', async () => {
    const fetch = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof globalThis.fetch;
    const parts = await collect(
      anthropicGateway({ fetch }).stream(sampleRequest(), new AbortController().signal),
    );
    const error = errorOf(parts);
    expect(error).toMatchObject({ code: 'model.network_error', retryable: true });
    expect(error.message).toContain('Could not reach https://api.anthropic.com/v1 (Failed to fetch)');
    expect(error.message).toContain('anthropic-dangerous-direct-browser-access');
    expect(error.message).not.toContain('OLLAMA');
  });

  it('cancellation before the request is model.cancelled without fetching', async () => {
    const fetch = replayFetch(fixture('text.sse'));
    const ctl = new AbortController();
    ctl.abort();
    const parts = await collect(anthropicGateway({ fetch }).stream(sampleRequest(), ctl.signal));
    expect(parts).toEqual([
      { type: 'turn-start', warnings: [] },
      { type: 'error', error: { code: 'model.cancelled', message: 'The model call was cancelled.' } },
    ]);
    expect(fetch.calls).toHaveLength(0);
  });

  it('an error JSON body with status 200 (a proxy) is reported as the provider error', async () => {
    const { parts } = await run(fixture('error-529.json'), { headers: JSON_HEADERS });
    expect(errorOf(parts)).toEqual({
      code: 'model.request_failed',
      message: 'The provider is overloaded: Overloaded.',
      retryable: true,
    });
  });
});
