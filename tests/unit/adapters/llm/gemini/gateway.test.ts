import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { canRetryModelCall, type HearthError } from '$lib/domain/errors';
import { geminiGateway, modelPath, type GeminiGatewayOptions } from '$lib/adapters/llm/gemini/gateway';
import { collect, replayFetch, type ReplayOptions } from '../../../../support/replay-fetch';

const KEY = 'AIzaSyD-secret-123456';
const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

const sampleRequest = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'gemini-2.5-flash',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  toolChoice: 'auto',
  ...over,
});

async function run(body: string | Uint8Array, replay: ReplayOptions = {}, opts: GeminiGatewayOptions = {}) {
  const fetch = replayFetch(body, replay);
  const gateway = geminiGateway({ apiKey: KEY, fetch, ...opts });
  const parts = await collect(gateway.stream(sampleRequest(), new AbortController().signal));
  return { parts, fetch };
}

const errorOf = (parts: StreamPart[]): HearthError => {
  const last = parts.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error part, got ${JSON.stringify(last)}`);
  return last.error;
};

const JSON_HEADERS = { 'content-type': 'application/json; charset=UTF-8' };

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

const streamFetch = (body: () => ReadableStream<Uint8Array>): typeof fetch =>
  (async () =>
    new Response(body(), { status: 200, headers: { 'content-type': 'text/event-stream' } })) as typeof fetch;

describe('geminiGateway requests', () => {
  it('posts to models/{model}:streamGenerateContent?alt=sse with the key in x-goog-api-key', async () => {
    const { fetch } = await run(fixture('text.sse'));
    const [call] = fetch.calls;
    expect(call?.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(call?.init?.method).toBe('POST');
    expect(call?.init?.headers).toEqual({
      accept: 'text/event-stream, application/json',
      'content-type': 'application/json',
      'x-goog-api-key': KEY,
    });
    expect(call?.url).not.toContain(KEY);
    expect(JSON.parse(String(call?.init?.body))).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
  });

  it('builds model paths', () => {
    expect(modelPath('gemini-2.5-pro')).toBe('/models/gemini-2.5-pro');
    expect(modelPath('models/gemini-2.5-pro')).toBe('/models/gemini-2.5-pro');
    expect(modelPath('tunedModels/my-model-7')).toBe('/tunedModels/my-model-7');
    expect(modelPath(' gemini 2 ')).toBe('/models/gemini%202');
  });

  it('passes thinking options through', async () => {
    const { fetch } = await run(fixture('text.sse'), {}, { includeThoughts: true });
    expect(JSON.parse(String(fetch.calls[0]?.init?.body))).toMatchObject({
      generationConfig: { thinkingConfig: { includeThoughts: true } },
    });
  });
});

describe('geminiGateway failures', () => {
  it('400 API_KEY_INVALID is model.provider_denied', async () => {
    const { parts } = await run(fixture('error-400-api-key.json'), { status: 400, headers: JSON_HEADERS });
    expect(parts).toEqual([
      { type: 'turn-start', warnings: [] },
      {
        type: 'error',
        error: {
          code: 'model.provider_denied',
          message: 'The API key was refused (HTTP 400): API key not valid. Please pass a valid API key.',
          status: 400,
        },
      },
    ]);
  });

  it('other 400s are explicit rejections', async () => {
    const { parts } = await run(fixture('error-400.json'), { status: 400, headers: JSON_HEADERS });
    expect(errorOf(parts)).toEqual({
      code: 'model.request_failed',
      message: 'The provider rejected the request (HTTP 400): Request contains an invalid argument.',
      status: 400,
    });
  });

  it('429 RESOURCE_EXHAUSTED takes its wait from RetryInfo', async () => {
    const { parts } = await run(fixture('error-429.json'), { status: 429, headers: JSON_HEADERS });
    const error = errorOf(parts);
    expect(error).toEqual({
      code: 'model.provider_rate_limited',
      message:
        'The provider is rate-limiting requests (HTTP 429): You exceeded your current quota, please check your plan and billing details.',
      status: 429,
      retryable: true,
      retryAfterMs: 37_000,
    });
    expect(canRetryModelCall(error)).toBe(true);
  });

  it('404 names the Gemini base URL', async () => {
    const { parts } = await run(fixture('error-404.json'), { status: 404, headers: JSON_HEADERS });
    expect(errorOf(parts).message).toBe(
      'The model or the endpoint was not found (HTTP 404): models/gemini-9-pro is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods. Check the model name and the base URL (for Gemini it is https://generativelanguage.googleapis.com/v1beta).',
    );
  });

  it('503 is a retryable server error', async () => {
    const body = JSON.stringify({
      error: {
        code: 503,
        message: 'The model is overloaded. Please try again later.',
        status: 'UNAVAILABLE',
      },
    });
    const { parts } = await run(body, { status: 503, headers: JSON_HEADERS });
    expect(errorOf(parts)).toEqual({
      code: 'model.request_failed',
      message: "The provider's server failed (HTTP 503): The model is overloaded. Please try again later.",
      status: 503,
      retryable: true,
    });
  });

  it('never puts the API key in error text', async () => {
    const body = JSON.stringify({
      error: { code: 400, message: `Key ${KEY} is malformed`, status: 'INVALID_ARGUMENT' },
    });
    const { parts } = await run(body, { status: 400, headers: JSON_HEADERS });
    expect(errorOf(parts).message).toContain('Key [API key] is malformed');
  });

  it('a web page served with 200', async () => {
    const { parts } = await run('<!DOCTYPE html>\n<html><body>Sign in</body></html>', {
      headers: { 'content-type': 'text/html' },
    });
    expect(errorOf(parts)).toEqual({
      code: 'model.upstream_invalid_response',
      message:
        'The endpoint returned a web page, not an API response. Check the base URL: it should be the API root (for Gemini, https://generativelanguage.googleapis.com/v1beta), not a website.',
    });
  });

  it('invalid UTF-8 decodes to replacement characters', async () => {
    const enc = new TextEncoder();
    const text = fixture('text.sse');
    const at = text.indexOf(' quick');
    const bytes = new Uint8Array([...enc.encode(text.slice(0, at)), 0xc3, ...enc.encode(text.slice(at))]);
    const { parts } = await run(bytes, { chunkSize: 2 });
    const deltas = parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : []));
    expect(deltas[1]).toBe('\uFFFD quick brown fox jumps');
    expect(parts.at(-1)?.type).toBe('finish');
  });

  it('a connection dropped mid-reply is a retryable model.stream_failed; after a call it is not retryable', async () => {
    const text = new TextEncoder().encode(fixture('text.sse').split('\r\n\r\n')[0] + '\r\n\r\n');
    const textParts = await collect(
      geminiGateway({ fetch: streamFetch(() => dropAfter(text)) }).stream(
        sampleRequest(),
        new AbortController().signal,
      ),
    );
    expect(errorOf(textParts)).toEqual({
      code: 'model.stream_failed',
      message: 'The connection to the provider dropped before the reply finished.',
      retryable: true,
    });
    const call = new TextEncoder().encode(
      'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"write","args":{"a":1}}}],"role":"model"},"index":0}]}\n\n',
    );
    const callParts = await collect(
      geminiGateway({ fetch: streamFetch(() => dropAfter(call)) }).stream(
        sampleRequest(),
        new AbortController().signal,
      ),
    );
    expect(errorOf(callParts)).toMatchObject({
      code: 'model.stream_failed',
      retryable: false,
      afterToolOutput: true,
    });
  });

  it('a stream that ends without a finishReason is model.stream_failed', async () => {
    const { parts } = await run(fixture('text.sse').split('\r\n\r\n')[0] + '\r\n\r\n');
    expect(errorOf(parts)).toMatchObject({
      code: 'model.stream_failed',
      message: 'The stream ended before the model finished its reply.',
    });
  });

  it('heartbeats only stall out as model.stream_stalled', async () => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const fetch = streamFetch(
      () =>
        new ReadableStream({
          start(c) {
            const beat = () => c.enqueue(new TextEncoder().encode(':\n\n'));
            beat();
            timer = setInterval(beat, 10);
          },
          cancel() {
            clearInterval(timer);
          },
        }),
    );
    const parts = await collect(
      geminiGateway({ fetch, stallMs: 100 }).stream(sampleRequest(), new AbortController().signal),
    );
    clearInterval(timer);
    expect(errorOf(parts)).toEqual({
      code: 'model.stream_stalled',
      message: 'The provider sent only keep-alive comments and no data for 100 ms; the reply was abandoned.',
      retryable: true,
    });
  });

  it('a rejected fetch is model.network_error with Gemini-specific advice', async () => {
    const fetch = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof globalThis.fetch;
    const error = errorOf(
      await collect(geminiGateway({ fetch }).stream(sampleRequest(), new AbortController().signal)),
    );
    expect(error).toMatchObject({ code: 'model.network_error', retryable: true });
    expect(error.message).toContain(
      'Could not reach https://generativelanguage.googleapis.com/v1beta (Failed to fetch)',
    );
    expect(error.message).toContain('CORS relay URL');
  });

  it('a JSON array reply (no alt=sse honoured) is decoded whole', async () => {
    const body = JSON.stringify([
      { candidates: [{ content: { parts: [{ text: 'Hel' }], role: 'model' }, index: 0 }] },
      {
        candidates: [{ content: { parts: [{ text: 'lo' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      },
    ]);
    const { parts } = await run(body, { headers: JSON_HEADERS });
    expect(parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('')).toBe('Hello');
    expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: { unified: 'stop' } });
  });
});

describe('geminiGateway parts', () => {
  it('keeps each native part as it came, though later events of its shape reuse the parsed object', async () => {
    const event = (code: string) =>
      `data: ${JSON.stringify({
        candidates: [
          { content: { parts: [{ executableCode: { language: 'PYTHON', code } }], role: 'model' }, index: 0 },
        ],
      })}\n\n`;
    const codes = ['print(1)', 'print(2)', 'print(3)', 'print(4)', 'print(5)'];
    const last = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Done.' }], role: 'model' }, finishReason: 'STOP', index: 0 }] })}\n\n`;
    const { parts } = await run(codes.map(event).join('') + last);
    const natives = parts.filter((p) => p.type === 'native');
    expect(natives.map((p) => (p.value as { executableCode: { code: string } }).executableCode.code)).toEqual(
      codes,
    );
    expect(parts.at(-1)?.type).toBe('finish');
  });
});
