import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import type { HearthError } from '$lib/domain/errors';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import { testConnection } from '$lib/adapters/llm/openai-chat/probe';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../support/scripted-llm-server';
import { collect } from '../../support/replay-fetch';

const KEY = 'sk-scripted-key';
let server: ScriptedLlmServer;

beforeAll(async () => {
  server = await startScriptedLlmServer({ apiKey: KEY, models: ['scripted-model', 'other-model'] });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  expect(server.pending()).toBe(0);
});

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'scripted-model',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hello' }] }],
  tools: [],
  toolChoice: 'auto',
  ...over,
});

const gateway = (stallMs = 5_000) => openAiChatGateway({ baseUrl: server.url, apiKey: KEY, stallMs });
const streamParts = (stallMs?: number, signal = new AbortController().signal) =>
  collect(gateway(stallMs).stream(request(), signal));

function errorOf(parts: StreamPart[]): HearthError {
  const last = parts.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error part, got ${JSON.stringify(last)}`);
  return last.error;
}

const text = (parts: StreamPart[]) =>
  parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');

describe('openai-chat gateway against the scripted server', () => {
  it('streams text and usage', async () => {
    server.script({ text: ['Hel', 'lo ', 'wörld 😀'], usage: { prompt_tokens: 5, completion_tokens: 3 } });
    const parts = await streamParts();
    expect(parts.map((p) => p.type)).toEqual([
      'turn-start',
      'response-metadata',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'finish',
    ]);
    expect(text(parts)).toBe('Hello wörld 😀');
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'stop', raw: 'stop' },
      usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 },
    });
    const [recorded] = server.requests;
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      body: {
        model: 'scripted-model',
        messages: [{ role: 'user', content: 'Hello' }],
        stream: true,
        stream_options: { include_usage: true },
      },
    });
    expect(recorded?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('streams two tool calls with fragmented arguments', async () => {
    server.script({
      reasoning: ['Need ', 'both files.'],
      toolCalls: [
        { id: 'call_1', name: 'workspace_read_file', arguments: ['{"pa', 'th":"work/', 'a.md"}'] },
        { id: 'call_2', name: 'workspace_list_files', arguments: ['{}'] },
      ],
    });
    const tools = [
      { name: 'workspace_read_file', description: 'Reads.', parameters: { type: 'object' } },
      { name: 'workspace_list_files', description: 'Lists.', parameters: { type: 'object' } },
    ];
    const parts = await collect(gateway().stream(request({ tools }), new AbortController().signal));
    expect(parts.filter((p) => p.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        callId: 'call_1',
        name: 'workspace_read_file',
        rawArguments: '{"path":"work/a.md"}',
      },
      { type: 'tool-call', callId: 'call_2', name: 'workspace_list_files', rawArguments: '{}' },
    ]);
    expect(parts.filter((p) => p.type === 'tool-input-start')).toHaveLength(2);
    expect(parts.some((p) => p.type === 'reasoning-delta')).toBe(true);
    expect(parts.at(-1)).toMatchObject({
      type: 'finish',
      reason: { unified: 'tool-calls', raw: 'tool_calls' },
    });
    expect(server.requests[0]?.body).toMatchObject({
      tool_choice: 'auto',
      tools: [{ type: 'function' }, { type: 'function' }],
    });
  });

  it('http fault: 429 with retry-after is a retryable rate limit', async () => {
    server.script({
      fault: 'http',
      status: 429,
      headers: { 'retry-after': '3' },
      body: JSON.stringify({
        error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
      }),
    });
    expect(errorOf(await streamParts())).toEqual({
      code: 'model.provider_rate_limited',
      message: 'The provider is rate-limiting requests (HTTP 429): Rate limit reached for requests.',
      status: 429,
      retryable: true,
      retryAfterMs: 3000,
    });
  });

  it('http fault: 503 is a retryable server error', async () => {
    server.script({ fault: 'http', status: 503, body: '{"error":{"message":"The server is overloaded"}}' });
    expect(errorOf(await streamParts())).toEqual({
      code: 'model.request_failed',
      message: "The provider's server failed (HTTP 503): The server is overloaded.",
      status: 503,
      retryable: true,
    });
  });

  it('hang fault: headers then nothing is model.stream_stalled', async () => {
    server.script({ fault: 'hang' });
    const started = Date.now();
    expect(errorOf(await streamParts(200))).toEqual({
      code: 'model.stream_stalled',
      message: 'The provider stopped sending data: nothing arrived for 200 ms; the reply was abandoned.',
      retryable: true,
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('endless fault: keep-alive comments forever is model.stream_stalled', async () => {
    server.script({ fault: 'endless', intervalMs: 20 });
    expect(errorOf(await streamParts(250))).toEqual({
      code: 'model.stream_stalled',
      message: 'The provider sent only keep-alive comments and no data for 250 ms; the reply was abandoned.',
      retryable: true,
    });
  });

  it('drop fault: a connection cut mid-stream is model.stream_failed', async () => {
    server.script({ fault: 'drop', afterChunks: 3 });
    const parts = await streamParts();
    expect(text(parts)).toBe('Hello, ');
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

  it('drop fault during a tool call is never retryable', async () => {
    server.script({
      fault: 'drop',
      afterChunks: 3,
      reply: { toolCalls: [{ name: 'workspace_write_file', arguments: ['{"path":', '"a.md"', '}'] }] },
    });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.stream_failed',
      retryable: false,
      afterToolOutput: true,
    });
  });

  it('malformed fault: a data line that is not JSON', async () => {
    server.script({ fault: 'malformed' });
    expect(errorOf(await streamParts())).toEqual({
      code: 'model.upstream_invalid_response',
      message:
        'The provider sent a data line that is not valid JSON: {"id": "chatcmpl-broken", "choices": [{"delta": {"content": "oops"',
      retryable: true,
    });
  });

  it('html fault: a web page instead of the API', async () => {
    server.script({ fault: 'html' });
    expect(errorOf(await streamParts())).toEqual({
      code: 'model.upstream_invalid_response',
      message:
        'The endpoint returned a web page, not an API response. Check the base URL: it should be the API root (often ending in /v1), not a website.',
    });
  });

  it('a stream that ends without finish_reason or [DONE] is model.stream_failed', async () => {
    server.script({ text: ['Hi'], finishReason: null, done: false, usage: null });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.stream_failed',
      message: 'The stream ended before the model finished its reply.',
    });
  });

  it('a tool call without an id is model.invalid_tool_call', async () => {
    server.script({ toolCalls: [{ id: null, name: 'f', arguments: ['{}'] }] });
    expect(errorOf(await streamParts())).toMatchObject({ code: 'model.invalid_tool_call' });
  });

  it('an empty script queue answers with a clear 500', async () => {
    const error = errorOf(await streamParts());
    expect(error).toMatchObject({ code: 'model.request_failed', status: 500, retryable: true });
    expect(error.message).toContain('No turn was scripted for this request');
  });

  it('cancellation mid-stream ends quickly with model.cancelled', async () => {
    server.script({ text: Array.from({ length: 50 }, (_, i) => `w${i} `), delayMs: 100 });
    const ctl = new AbortController();
    const parts: StreamPart[] = [];
    let abortedAt = 0;
    for await (const part of gateway().stream(request(), ctl.signal)) {
      parts.push(part);
      if (part.type === 'text-delta' && abortedAt === 0) {
        abortedAt = Date.now();
        ctl.abort();
      }
    }
    expect(Date.now() - abortedAt).toBeLessThan(500);
    expect(parts.at(-1)).toEqual({
      type: 'error',
      error: { code: 'model.cancelled', message: 'The model call was cancelled.' },
    });
    expect(parts.filter((p) => p.type === 'text-delta')).toHaveLength(1);
  });

  it('answers CORS preflight', async () => {
    const res = await fetch(`${server.url}/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
  });
});

describe('testConnection against the scripted server', () => {
  it('ok: lists models and returns the reply', async () => {
    server.script({ text: ['ok'] });
    const result = await testConnection({ baseUrl: server.url, apiKey: KEY, model: 'scripted-model' });
    expect(result).toEqual({ ok: true, models: ['scripted-model', 'other-model'], reply: 'ok' });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v1/models',
      'POST /v1/chat/completions',
    ]);
    expect(server.requests[1]?.body).toMatchObject({ max_tokens: 16, stream: true });
  });

  it('401: the key was refused', async () => {
    const result = await testConnection({ baseUrl: server.url, apiKey: 'sk-wrong', model: 'scripted-model' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'model.provider_denied', status: 401 });
    expect(result.error.message).toBe('The API key was refused (HTTP 401): Incorrect API key provided.');
    expect(result.hint).toContain('refused the API key');
    expect(JSON.stringify(result)).not.toContain('sk-wrong');
  });

  it('404: wrong base URL', async () => {
    const result = await testConnection({
      baseUrl: `${server.url}/v2`,
      apiKey: KEY,
      model: 'scripted-model',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'model.request_failed', status: 404 });
    expect(result.hint).toContain('base URL is wrong');
  });

  it('404 for a model the server does not list names the listed models', async () => {
    server.script({
      fault: 'http',
      status: 404,
      body: '{"error":{"message":"The model `gpt-9` does not exist","code":"model_not_found"}}',
    });
    const result = await testConnection({ baseUrl: server.url, apiKey: KEY, model: 'gpt-9' });
    expect(result).toMatchObject({ ok: false, error: { code: 'model.request_failed', status: 404 } });
    if (result.ok) return;
    expect(result.hint).toBe(
      'The server does not offer a model named "gpt-9". Pick one of the 2 models it lists.',
    );
  });

  it('network error against a closed port explains CORS and reachability', async () => {
    const port = await freePort();
    const result = await testConnection({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: KEY, model: 'm' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'model.network_error', retryable: true });
    expect(result.error.message).toContain(`Could not reach http://127.0.0.1:${port}/v1`);
    expect(result.error.message).toContain('ECONNREFUSED');
    expect(result.hint).toContain('OLLAMA_ORIGINS');
    expect(result.hint).toContain('CORS relay URL');
  });
});

/** A port that was free a moment ago and now has no listener. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
