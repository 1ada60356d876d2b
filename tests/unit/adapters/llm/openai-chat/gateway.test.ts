import { describe, expect, it } from 'vitest';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { canRetryModelCall, type HearthError } from '$lib/domain/errors';
import { openAiChatGateway, type OpenAiChatGatewayOptions } from '$lib/adapters/llm/openai-chat/gateway';
import { collect, replayFetch, type ReplayOptions } from '../../../../support/replay-fetch';

const KEY = 'sk-secret-123456';

const sampleRequest = (): ModelRequest => ({
  model: 'm',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  toolChoice: 'auto',
});

async function run(body: string, replay: ReplayOptions = {}, opts: Partial<OpenAiChatGatewayOptions> = {}) {
  const fetch = replayFetch(body, replay);
  const gateway = openAiChatGateway({ baseUrl: 'https://llm.test/v1', apiKey: KEY, fetch, ...opts });
  const parts = await collect(gateway.stream(sampleRequest(), new AbortController().signal));
  return { parts, fetch };
}

const errorOf = (parts: StreamPart[]): HearthError => {
  const last = parts.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error part, got ${last?.type}`);
  return last.error;
};

describe('openAiChatGateway requests', () => {
  it('posts to /chat/completions with the key, JSON and extra headers', async () => {
    const { fetch } = await run(
      'data: [DONE]\n\n',
      {},
      { baseUrl: ' https://llm.test/v1/// ', headers: { 'X-Title': 'Hearth' } },
    );
    expect(fetch.calls).toHaveLength(1);
    const [call] = fetch.calls;
    expect(call?.url).toBe('https://llm.test/v1/chat/completions');
    expect(call?.init?.method).toBe('POST');
    expect(call?.init?.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      'X-Title': 'Hearth',
    });
    expect(JSON.parse(String(call?.init?.body))).toMatchObject({ model: 'm', stream: true });
  });

  it('uses max_completion_tokens for api.openai.com only', async () => {
    const request = { ...sampleRequest(), sampler: { maxOutputTokens: 5 } };
    for (const [baseUrl, field] of [
      ['https://api.openai.com/v1', 'max_completion_tokens'],
      ['http://127.0.0.1:11434/v1', 'max_tokens'],
    ] as const) {
      const fetch = replayFetch('data: [DONE]\n\n');
      await collect(openAiChatGateway({ baseUrl, fetch }).stream(request, new AbortController().signal));
      expect(JSON.parse(String(fetch.calls[0]?.init?.body))).toHaveProperty(field, 5);
    }
  });
});

describe('openAiChatGateway failures', () => {
  it.each([
    [401, 'model.provider_denied', false, /^The API key was refused \(HTTP 401\): bad key\.$/],
    [403, 'model.provider_denied', false, /refused or has no access/],
    [
      404,
      'model.request_failed',
      false,
      /not found \(HTTP 404\): bad key\. Check the model name and the base URL/,
    ],
    [400, 'model.request_failed', false, /^The provider rejected the request \(HTTP 400\): bad key\.$/],
    [429, 'model.provider_rate_limited', true, /rate-limiting requests \(HTTP 429\): bad key/],
    [500, 'model.request_failed', true, /server failed \(HTTP 500\): bad key/],
    [503, 'model.request_failed', true, /server failed \(HTTP 503\)/],
  ])('maps HTTP %i to %s (retryable: %s)', async (status, code, retryable, message) => {
    const body = JSON.stringify({ error: { message: 'bad key', type: 'x' } });
    const { parts } = await run(body, { status, headers: { 'content-type': 'application/json' } });
    expect(parts.map((p) => p.type)).toEqual(['turn-start', 'error']);
    const error = errorOf(parts);
    expect(error).toMatchObject({ code, status });
    expect(error.retryable === true).toBe(retryable);
    expect(error.message).toMatch(message);
  });

  it('reads retry-after seconds and retry-after-ms', async () => {
    const seconds = await run('{}', { status: 429, headers: { 'retry-after': '7' } });
    expect(errorOf(seconds.parts).retryAfterMs).toBe(7000);
    const ms = await run('{}', { status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '2' } });
    expect(errorOf(ms.parts).retryAfterMs).toBe(1500);
  });

  it('quotes plain-text error bodies and the Ollama {error: string} shape', async () => {
    const text = await run('model "llama9" not found, try pulling it first', {
      status: 404,
      headers: { 'content-type': 'text/plain' },
    });
    expect(errorOf(text.parts).message).toContain('model "llama9" not found, try pulling it first');
    const ollama = await run('{"error":"model \\"x\\" not found"}', {
      status: 404,
      headers: { 'content-type': 'application/json' },
    });
    expect(errorOf(ollama.parts).message).toContain('model "x" not found');
  });

  it('never puts the API key in error text', async () => {
    const body = JSON.stringify({ error: { message: `Key ${KEY} is not valid` } });
    const { parts } = await run(body, { status: 401, headers: { 'content-type': 'application/json' } });
    expect(errorOf(parts).message).not.toContain(KEY);
    expect(errorOf(parts).message).toContain('Key [API key] is not valid');
  });

  it('recognises a web page served with 200', async () => {
    const html = await run('<!doctype html><html></html>', { headers: { 'content-type': 'text/html' } });
    expect(errorOf(html.parts)).toMatchObject({ code: 'model.upstream_invalid_response' });
    expect(errorOf(html.parts).message).toContain('returned a web page, not an API response');
    const unlabelled = await run('<!DOCTYPE html>\n<html>\n<body>hi</body>\n', {
      headers: { 'content-type': '' },
    });
    expect(errorOf(unlabelled.parts).message).toContain('returned a web page');
  });

  it('explains a body that is not an event stream', async () => {
    const { parts } = await run('hello there\n', { headers: { 'content-type': 'text/plain' } });
    expect(errorOf(parts)).toMatchObject({ code: 'model.upstream_invalid_response' });
    expect(errorOf(parts).message).toBe(
      'The endpoint did not answer with an event stream (content type text/plain). It began with "hello there". Check the base URL.',
    );
  });

  it('names an invalid JSON data line', async () => {
    const { parts } = await run('data: {"choices": [\n\n');
    expect(errorOf(parts)).toEqual({
      code: 'model.upstream_invalid_response',
      message: 'The provider sent a data line that is not valid JSON: {"choices": [',
      retryable: true,
    });
  });

  it('decodes a server that ignored stream: true', async () => {
    const reply = {
      id: 'cmpl-1',
      model: 'm',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hi',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    };
    const { parts } = await run(JSON.stringify(reply), { headers: { 'content-type': 'application/json' } });
    expect(
      parts.filter((p) => p.type === 'tool-call' || p.type === 'text-delta' || p.type === 'finish'),
    ).toEqual([
      { type: 'text-delta', blockId: 'text-1', delta: 'Hi' },
      { type: 'tool-call', callId: 'c1', name: 'f', rawArguments: '{"a":1}' },
      {
        type: 'finish',
        reason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
      },
    ]);
  });

  it('maps a rejected fetch to model.network_error with the CORS explanation', async () => {
    const fetch = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof globalThis.fetch;
    const gateway = openAiChatGateway({ baseUrl: 'http://localhost:11434/v1', fetch });
    const parts = await collect(gateway.stream(sampleRequest(), new AbortController().signal));
    const error = errorOf(parts);
    expect(error).toMatchObject({ code: 'model.network_error', retryable: true });
    expect(error.message).toContain('Could not reach http://localhost:11434/v1 (Failed to fetch)');
    expect(error.message).toContain('CORS');
    expect(error.message).toContain('OLLAMA_ORIGINS');
    expect(error.message).toContain('CORS relay URL');
  });

  it('reports cancellation before the request as model.cancelled without fetching', async () => {
    const fetch = replayFetch('data: [DONE]\n\n');
    const ctl = new AbortController();
    ctl.abort();
    const parts = await collect(
      openAiChatGateway({ baseUrl: 'https://llm.test/v1', fetch }).stream(sampleRequest(), ctl.signal),
    );
    expect(parts).toEqual([
      { type: 'turn-start', warnings: [] },
      { type: 'error', error: { code: 'model.cancelled', message: 'The model call was cancelled.' } },
    ]);
    expect(fetch.calls).toHaveLength(0);
  });

  it('rejects a base URL that is not http(s)', async () => {
    const { parts, fetch } = await run('', {}, { baseUrl: 'localhost:11434' });
    expect(errorOf(parts).code).toBe('model.not_configured');
    expect(fetch.calls).toHaveLength(0);
  });

  it('never retries once a tool call started streaming', async () => {
    const sse =
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\\"a"}}]}}]}\n\n' +
      'data: {not json}\n\n';
    const { parts } = await run(sse);
    const error = errorOf(parts);
    expect(error).toMatchObject({
      code: 'model.upstream_invalid_response',
      afterToolOutput: true,
      retryable: false,
    });
    expect(canRetryModelCall(error)).toBe(false);
    expect(
      canRetryModelCall({ code: 'model.upstream_invalid_response', message: 'x', retryable: true }),
    ).toBe(true);
  });
});
