import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { createChatDecoder } from '$lib/adapters/llm/openai-chat/decode';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import { collect, replayFetch } from '../../../../support/replay-fetch';

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

const sampleRequest = (): ModelRequest => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  toolChoice: 'auto',
});

async function replay(name: string, chunkSize = 7): Promise<StreamPart[]> {
  const gateway = openAiChatGateway({
    baseUrl: 'https://api.example.test/v1/',
    apiKey: 'sk-test',
    fetch: replayFetch(fixture(name), { chunkSize }),
  });
  return collect(gateway.stream(sampleRequest(), new AbortController().signal));
}

const types = (parts: StreamPart[]) => parts.map((p) => p.type);

describe('openai-chat decoding of recorded streams', () => {
  it('plain text', async () => {
    expect(await replay('text.sse')).toEqual([
      { type: 'turn-start', warnings: [] },
      {
        type: 'response-metadata',
        id: 'chatcmpl-AB7eLbKGa1t8hYV8sZXSB0mHdYhJk',
        model: 'gpt-4o-mini-2024-07-18',
      },
      { type: 'text-start', blockId: 'text-1' },
      { type: 'text-delta', blockId: 'text-1', delta: 'Hello' },
      { type: 'text-delta', blockId: 'text-1', delta: '! How' },
      { type: 'text-delta', blockId: 'text-1', delta: ' can I help' },
      { type: 'text-delta', blockId: 'text-1', delta: ' you today?' },
      { type: 'text-end', blockId: 'text-1' },
      {
        type: 'finish',
        reason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: 19,
          outputTokens: 9,
          totalTokens: 28,
          reasoningTokens: 0,
          cachedInputTokens: 0,
        },
      },
    ]);
  });

  it('gives the same parts whatever the chunking', async () => {
    const reference = await replay('parallel-tool-calls.sse', 1 << 20);
    for (const size of [1, 2, 3, 5, 64])
      expect(await replay('parallel-tool-calls.sse', size)).toEqual(reference);
  });

  it('a tool call with arguments split over many chunks', async () => {
    const parts = await replay('tool-call.sse');
    const args = '{"location":"Paris, France","unit":"celsius"}';
    expect(parts[0]).toEqual({ type: 'turn-start', warnings: [] });
    expect(parts[2]).toEqual({
      type: 'tool-input-start',
      blockId: 'tool-1',
      callId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA',
      name: 'get_weather',
    });
    const deltas = parts.filter((p) => p.type === 'tool-input-delta');
    expect(deltas).toHaveLength(12);
    expect(deltas.map((p) => p.delta).join('')).toBe(args);
    expect(parts.slice(-3)).toEqual([
      { type: 'tool-input-end', blockId: 'tool-1' },
      { type: 'tool-call', callId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', rawArguments: args },
      {
        type: 'finish',
        reason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: {
          inputTokens: 82,
          outputTokens: 18,
          totalTokens: 100,
          reasoningTokens: 0,
          cachedInputTokens: 64,
        },
      },
    ]);
  });

  it('parallel tool calls, in order, with their exact raw arguments', async () => {
    const parts = await replay('parallel-tool-calls.sse');
    expect(types(parts)).toEqual([
      'turn-start',
      'response-metadata',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-delta',
      'tool-input-delta',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-delta',
      'tool-input-delta',
      'tool-input-end',
      'tool-call',
      'tool-input-end',
      'tool-call',
      'finish',
    ]);
    expect(parts.filter((p) => p.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        callId: 'call_Q8ZfJ1xY2nVm3kLp4sTu5vWx',
        name: 'get_weather',
        rawArguments: '{"location": "Tokyo"}',
      },
      {
        type: 'tool-call',
        callId: 'call_R9AgK2yZ3oWn4mMq5tUv6wXy',
        name: 'workspace_read_file',
        rawArguments: '{"path":"notes/résumé.md"}',
      },
    ]);
  });

  it('DeepSeek reasoning_content, then text; usage on the finish chunk', async () => {
    const parts = await replay('reasoning-content.sse');
    expect(types(parts)).toEqual([
      'turn-start',
      'response-metadata',
      'reasoning-start',
      'reasoning-delta',
      'reasoning-delta',
      'reasoning-delta',
      'reasoning-end',
      'text-start',
      'text-delta',
      'text-delta',
      'text-end',
      'finish',
    ]);
    const reasoning = parts.flatMap((p) => (p.type === 'reasoning-delta' ? [p.delta] : [])).join('');
    expect(reasoning).toBe('The user asks for 9.11 vs 9.9. 9.9 is larger.');
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: 15,
        outputTokens: 42,
        totalTokens: 57,
        reasoningTokens: 30,
        cachedInputTokens: 0,
      },
    });
  });

  it('OpenRouter `reasoning` deltas over CRLF with keep-alive comments', async () => {
    const parts = await replay('reasoning-openrouter.sse');
    expect(parts.filter((p) => p.type !== 'reasoning-delta' && p.type !== 'text-delta')).toEqual([
      { type: 'turn-start', warnings: [] },
      { type: 'response-metadata', id: 'gen-1737000000-AbCdEfGhIjKlMnOpQrSt', model: 'deepseek/deepseek-r1' },
      { type: 'reasoning-start', blockId: 'reasoning-1' },
      { type: 'reasoning-end', blockId: 'reasoning-1' },
      { type: 'text-start', blockId: 'text-2' },
      { type: 'text-end', blockId: 'text-2' },
      {
        type: 'finish',
        reason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: 8, outputTokens: 12, totalTokens: 20 },
      },
    ]);
  });

  it('an error object inside the stream', async () => {
    const parts = await replay('error-chunk.sse');
    expect(types(parts)).toEqual([
      'turn-start',
      'response-metadata',
      'text-start',
      'text-delta',
      'text-end',
      'error',
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'error',
      error: {
        code: 'model.request_failed',
        message: 'The provider reported an error: Provider disconnected unexpectedly.',
        retryable: true,
      },
    });
  });

  it('an HTTP error body', async () => {
    const gateway = openAiChatGateway({
      baseUrl: 'https://api.example.test/v1',
      fetch: replayFetch(fixture('error-401.json'), {
        status: 401,
        headers: { 'content-type': 'application/json' },
      }),
    });
    const parts = await collect(gateway.stream(sampleRequest(), new AbortController().signal));
    expect(parts).toEqual([
      { type: 'turn-start', warnings: [] },
      {
        type: 'error',
        error: {
          code: 'model.provider_denied',
          status: 401,
          message: expect.stringMatching(
            /^The API key was refused \(HTTP 401\): Incorrect API key provided: sk-proj-\*+abcd/,
          ),
        },
      },
    ]);
  });
});

describe('createChatDecoder', () => {
  const chunk = (delta: object, finish: string | null = null) => ({
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  it('opens with turn-start carrying the encoder warnings', () => {
    const d = createChatDecoder({ warnings: ['w'] });
    expect(d.push(chunk({ role: 'assistant', content: '' }))).toEqual([
      { type: 'turn-start', warnings: ['w'] },
    ]);
    expect(d.push(chunk({ content: '' }))).toEqual([]);
  });

  it('rejects a tool call without an id and never invents one', () => {
    const d = createChatDecoder();
    d.push(chunk({ tool_calls: [{ index: 0, type: 'function', function: { name: 'ls', arguments: '' } }] }));
    d.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }));
    const parts = d.push(chunk({}, 'tool_calls'));
    expect(parts).toEqual([
      {
        type: 'error',
        error: {
          code: 'model.invalid_tool_call',
          message:
            'The model sent tool call #1 (ls) without an id. Hearth never invents tool-call ids or names.',
        },
      },
    ]);
    expect(d.closed).toBe(true);
    expect(d.push(chunk({ content: 'more' }))).toEqual([]);
  });

  it('rejects a tool call without a name, and marks the error as after tool output when one had started', () => {
    const d = createChatDecoder();
    d.push(
      chunk({
        tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'ls', arguments: '{}' } }],
      }),
    );
    d.push(chunk({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { arguments: '{}' } }] }));
    expect(d.toolOutputStarted).toBe(true);
    const parts = d.push(chunk({}, 'tool_calls'));
    expect(parts).toEqual([
      { type: 'tool-input-end', blockId: 'tool-1' },
      {
        type: 'error',
        error: {
          code: 'model.invalid_tool_call',
          message:
            'The model sent tool call #2 (id b) without a function name. Hearth never invents tool-call ids or names.',
          retryable: false,
          afterToolOutput: true,
        },
      },
    ]);
  });

  it('marks any failure after a tool-input-start as not retryable', () => {
    const d = createChatDecoder();
    d.push(chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'ls', arguments: '{"pa' } }] }));
    const [, error] = d.fail({ code: 'model.stream_failed', message: 'dropped', retryable: true });
    expect(error).toEqual({
      type: 'error',
      error: { code: 'model.stream_failed', message: 'dropped', retryable: false, afterToolOutput: true },
    });
  });

  it('keeps retryable failures retryable before any tool output', () => {
    const d = createChatDecoder();
    d.push(chunk({ content: 'Hel' }));
    const parts = d.fail({ code: 'model.stream_failed', message: 'dropped', retryable: true });
    expect(parts).toEqual([
      { type: 'text-end', blockId: 'text-1' },
      { type: 'error', error: { code: 'model.stream_failed', message: 'dropped', retryable: true } },
    ]);
  });

  it('buffers arguments that arrive before the id and name', () => {
    const d = createChatDecoder();
    d.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }));
    const parts = d.push(
      chunk({ tool_calls: [{ index: 0, id: 'x', function: { name: 'f', arguments: '1}' } }] }),
    );
    expect(parts).toEqual([
      { type: 'tool-input-start', blockId: 'tool-1', callId: 'x', name: 'f' },
      { type: 'tool-input-delta', blockId: 'tool-1', delta: '{"a":1}' },
    ]);
  });

  it('treats a new id at a reused index as a new call', () => {
    const d = createChatDecoder();
    d.push(chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{}' } }] }));
    d.push(chunk({ tool_calls: [{ index: 0, id: 'b', function: { name: 'g', arguments: '{"x":1}' } }] }));
    const calls = d.push(chunk({}, 'tool_calls')).filter((p) => p.type === 'tool-call');
    expect(calls).toEqual([
      { type: 'tool-call', callId: 'a', name: 'f', rawArguments: '{}' },
      { type: 'tool-call', callId: 'b', name: 'g', rawArguments: '{"x":1}' },
    ]);
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool-calls'],
    ['function_call', 'tool-calls'],
    ['content_filter', 'content-filter'],
    ['eos_token', 'other'],
  ])('maps finish_reason %s to %s', (raw, unified) => {
    const d = createChatDecoder();
    d.push(chunk({}, raw));
    expect(d.end(true).at(-1)).toEqual({ type: 'finish', reason: { unified, raw }, usage: {} });
  });

  it('fails when the stream ends without finish_reason or [DONE]', () => {
    const d = createChatDecoder();
    d.push(chunk({ content: 'Hi' }));
    expect(d.end(false).at(-1)).toEqual({
      type: 'error',
      error: {
        code: 'model.stream_failed',
        message: 'The stream ended before the model finished its reply.',
        retryable: true,
      },
    });
  });

  it('accepts [DONE] without a finish_reason as finish other', () => {
    const d = createChatDecoder();
    d.push(chunk({ content: 'Hi' }));
    expect(d.end(true).at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'other', raw: null },
      usage: {},
    });
  });

  it('maps an in-stream rate limit', () => {
    const d = createChatDecoder();
    const parts = d.push({ error: { message: 'Slow down', type: 'rate_limit_error', code: 429 } });
    expect(parts.at(-1)).toEqual({
      type: 'error',
      error: {
        code: 'model.provider_rate_limited',
        message: 'The provider is rate-limiting requests: Slow down.',
        retryable: true,
      },
    });
  });
});
