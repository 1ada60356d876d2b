import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { assembleReply } from '$lib/domain/model-reply';
import { createAnthropicDecoder } from '$lib/adapters/llm/anthropic/decode';
import { mapAnthropicFinish } from '$lib/adapters/llm/anthropic/finish';
import { anthropicGateway } from '$lib/adapters/llm/anthropic/gateway';
import { collect, replayFetch } from '../../../../support/replay-fetch';

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

const sampleRequest = (): ModelRequest => ({
  model: 'claude-sonnet-4-5',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  toolChoice: 'auto',
});

async function replay(name: string, chunkSize = 7): Promise<StreamPart[]> {
  const gateway = anthropicGateway({
    apiKey: 'sk-ant-test',
    fetch: replayFetch(fixture(name), { chunkSize }),
  });
  return collect(gateway.stream(sampleRequest(), new AbortController().signal));
}

const types = (parts: StreamPart[]) => parts.map((p) => p.type);

describe('anthropic decoding of recorded streams', () => {
  it('plain text (pings ignored, UTF-8 split across chunks)', async () => {
    expect(await replay('text.sse')).toEqual([
      { type: 'turn-start', warnings: [] },
      { type: 'response-metadata', id: 'msg_01XFDUDYJgAACzvnptvVoYEL', model: 'claude-sonnet-4-5-20250929' },
      { type: 'text-start', blockId: 'text-1' },
      { type: 'text-delta', blockId: 'text-1', delta: 'Hello' },
      { type: 'text-delta', blockId: 'text-1', delta: '! Grüße ' },
      { type: 'text-delta', blockId: 'text-1', delta: 'aus 東京 😀' },
      { type: 'text-end', blockId: 'text-1' },
      {
        type: 'finish',
        reason: { unified: 'stop', raw: 'end_turn' },
        usage: { inputTokens: 25, outputTokens: 15, totalTokens: 40, cachedInputTokens: 0 },
      },
    ]);
  });

  it('gives the same parts whatever the chunking', async () => {
    for (const name of ['thinking.sse', 'parallel-tool-use.sse']) {
      const reference = await replay(name, 1 << 20);
      for (const size of [1, 2, 3, 5, 64]) expect(await replay(name, size)).toEqual(reference);
    }
  });

  it('text then a tool call whose input_json_delta is split over many events', async () => {
    const parts = await replay('tool-use.sse');
    const args = '{"location": "San Francisco, CA", "unit": "fahrenheit"}';
    expect(types(parts)).toEqual([
      'turn-start',
      'response-metadata',
      'text-start',
      'text-delta',
      'text-end',
      'tool-input-start',
      ...Array<'tool-input-delta'>(8).fill('tool-input-delta'),
      'tool-input-end',
      'tool-call',
      'finish',
    ]);
    expect(parts[5]).toEqual({
      type: 'tool-input-start',
      blockId: 'tool-2',
      callId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      name: 'get_weather',
    });
    expect(parts.flatMap((p) => (p.type === 'tool-input-delta' ? [p.delta] : [])).join('')).toBe(args);
    expect(parts.slice(-2)).toEqual([
      {
        type: 'tool-call',
        callId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        rawArguments: args,
      },
      {
        type: 'finish',
        reason: { unified: 'tool-calls', raw: 'tool_use' },
        usage: { inputTokens: 472, outputTokens: 89, totalTokens: 561 },
      },
    ]);
  });

  it('parallel tool calls in order; a call without input deltas carries its start input', async () => {
    const parts = await replay('parallel-tool-use.sse');
    expect(parts.filter((p) => p.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        callId: 'toolu_01A09q90qw90lq917835lq9',
        name: 'workspace_read_file',
        rawArguments: '{"path": "work/résumé.md"}',
      },
      {
        type: 'tool-call',
        callId: 'toolu_01B19r01rx01mr028946mr0',
        name: 'workspace_list_files',
        rawArguments: '{}',
      },
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: { inputTokens: 1452, outputTokens: 71, totalTokens: 1523, cachedInputTokens: 640 },
    });
  });

  it('thinking with its signature, redacted thinking as a native part, then text', async () => {
    const parts = await replay('thinking.sse');
    expect(parts.filter((p) => p.type !== 'reasoning-delta')).toEqual([
      { type: 'turn-start', warnings: [] },
      { type: 'response-metadata', id: 'msg_01HCDu5LRGeP2o7s2xGmxyx8', model: 'claude-sonnet-4-5-20250929' },
      { type: 'reasoning-start', blockId: 'reasoning-1' },
      {
        type: 'reasoning-end',
        blockId: 'reasoning-1',
        signature:
          'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+YmBLfsHvYQOi0cQTyGtESp2gPM/3WYd0E7Fb/aqL5SiN2=',
      },
      {
        type: 'native',
        provider: 'anthropic',
        value: {
          type: 'redacted_thinking',
          data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pzmI5Tc=',
        },
      },
      { type: 'text-start', blockId: 'text-2' },
      {
        type: 'text-delta',
        blockId: 'text-2',
        delta: 'The greatest common divisor of 1071 and 462 is **21**.',
      },
      { type: 'text-end', blockId: 'text-2' },
      {
        type: 'finish',
        reason: { unified: 'stop', raw: 'end_turn' },
        usage: { inputTokens: 3084, outputTokens: 310, totalTokens: 3394, cachedInputTokens: 1024 },
      },
    ]);
    // What the runtime stores, and what the encoder replays on the next turn.
    expect(assembleReply(parts)).toEqual([
      {
        type: 'reasoning',
        text: 'I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0',
        signature:
          'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+YmBLfsHvYQOi0cQTyGtESp2gPM/3WYd0E7Fb/aqL5SiN2=',
      },
      {
        type: 'native',
        provider: 'anthropic',
        value: {
          type: 'redacted_thinking',
          data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pzmI5Tc=',
        },
      },
      { type: 'text', text: 'The greatest common divisor of 1071 and 462 is **21**.' },
    ]);
  });

  it('an overloaded_error event mid-stream is a retryable failure', async () => {
    const parts = await replay('error-overloaded.sse');
    expect(parts.slice(-2)).toEqual([
      { type: 'text-end', blockId: 'text-1' },
      {
        type: 'error',
        error: {
          code: 'model.request_failed',
          message: 'The provider is overloaded: Overloaded.',
          retryable: true,
        },
      },
    ]);
  });

  it('truncated tool JSON at max_tokens passes through raw with finish length (the runtime rejects it as tool.invalid_arguments)', async () => {
    const parts = await replay('tool-use-truncated.sse');
    expect(parts.slice(-2)).toEqual([
      {
        type: 'tool-call',
        callId: 'toolu_01Trunc8d',
        name: 'workspace_write_file',
        rawArguments: '{"path": "work/a.md", "content": "# Chapter 1\\nIt was',
      },
      {
        type: 'finish',
        reason: { unified: 'length', raw: 'max_tokens' },
        usage: { inputTokens: 90, outputTokens: 64, totalTokens: 154 },
      },
    ]);
    // The model's replay is `{}`; what it sent is kept for the person to see.
    expect(assembleReply(parts)).toEqual([
      {
        type: 'tool-call',
        callId: 'toolu_01Trunc8d',
        name: 'workspace_write_file',
        input: {},
        rawArguments: '{"path": "work/a.md", "content": "# Chapter 1\\nIt was',
      },
    ]);
  });

  it('a tool_use without an id is model.invalid_tool_call and no id is invented', async () => {
    const parts = await replay('tool-use-no-id.sse');
    expect(types(parts)).toEqual(['turn-start', 'response-metadata', 'error']);
    expect(parts.at(-1)).toEqual({
      type: 'error',
      error: {
        code: 'model.invalid_tool_call',
        message:
          'The model sent tool call #1 (workspace_list_files) without an id. Hearth never invents tool-call ids or names.',
      },
    });
  });
});

describe('createAnthropicDecoder', () => {
  const ev = (type: string, data: object = {}) => ({ type, ...data });

  it('opens with turn-start carrying the encoder warnings, and ignores pings', () => {
    const d = createAnthropicDecoder({ warnings: ['w'] });
    expect(d.push(ev('ping'))).toEqual([{ type: 'turn-start', warnings: ['w'] }]);
    expect(d.push(ev('ping'))).toEqual([]);
  });

  it('uses the SSE event name when the data has no type', () => {
    const d = createAnthropicDecoder();
    d.push({ message: { id: 'm' } }, 'message_start');
    expect(d.push({ delta: { stop_reason: 'end_turn' } }, 'message_delta')).toEqual([]);
    expect(d.push({}, 'message_stop').at(-1)).toMatchObject({ type: 'finish', reason: { raw: 'end_turn' } });
  });

  it('marks any failure after a tool-input-start as not retryable', () => {
    const d = createAnthropicDecoder();
    d.push(
      ev('content_block_start', {
        index: 0,
        content_block: { type: 'tool_use', id: 't1', name: 'ls', input: {} },
      }),
    );
    d.push(ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"a' } }));
    expect(d.toolOutputStarted).toBe(true);
    expect(d.fail({ code: 'model.stream_failed', message: 'dropped', retryable: true })).toEqual([
      { type: 'tool-input-end', blockId: 'tool-1' },
      {
        type: 'error',
        error: { code: 'model.stream_failed', message: 'dropped', retryable: false, afterToolOutput: true },
      },
    ]);
  });

  it('fails a stream that ends with no stop reason; accepts one whose message_stop was lost', () => {
    const cut = createAnthropicDecoder();
    cut.push(ev('content_block_start', { index: 0, content_block: { type: 'text', text: 'Hi' } }));
    expect(cut.end()).toEqual([
      { type: 'text-end', blockId: 'text-1' },
      {
        type: 'error',
        error: {
          code: 'model.stream_failed',
          message: 'The stream ended before the model finished its reply.',
          retryable: true,
        },
      },
    ]);
    const lenient = createAnthropicDecoder();
    lenient.push(ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }));
    expect(lenient.end().at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'stop', raw: 'end_turn' },
      usage: { outputTokens: 2 },
    });
  });

  it('skips blocks of unknown types (server tools) with their deltas', () => {
    const d = createAnthropicDecoder();
    d.push(
      ev('content_block_start', {
        index: 0,
        content_block: { type: 'server_tool_use', id: 's', name: 'web_search' },
      }),
    );
    expect(
      d.push(
        ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{}' } }),
      ),
    ).toEqual([]);
    expect(d.push(ev('content_block_stop', { index: 0 }))).toEqual([]);
    expect(d.toolOutputStarted).toBe(false);
  });

  it.each([
    ['rate_limit_error', 'model.provider_rate_limited', true],
    ['api_error', 'model.request_failed', true],
    ['authentication_error', 'model.provider_denied', undefined],
    ['invalid_request_error', 'model.request_failed', undefined],
  ])('maps an in-stream %s to %s', (type, code, retryable) => {
    const d = createAnthropicDecoder();
    const error = d.push(ev('error', { error: { type, message: 'm' } })).at(-1);
    expect(error).toMatchObject({ type: 'error', error: { code } });
    expect(error?.type === 'error' && error.error.retryable).toBe(retryable);
  });

  it('decodes a non-streamed Message body', () => {
    const d = createAnthropicDecoder();
    const parts = [
      ...d.pushJson({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'Hi' },
          { type: 'tool_use', id: 'toolu_1', name: 'ls', input: { dir: 'work' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 3, output_tokens: 4 },
      }),
      ...d.end(),
    ];
    expect(assembleReply(parts)).toEqual([
      { type: 'reasoning', text: 'hmm', signature: 'sig' },
      { type: 'text', text: 'Hi' },
      { type: 'tool-call', callId: 'toolu_1', name: 'ls', input: { dir: 'work' } },
    ]);
    expect(parts.find((p) => p.type === 'tool-call')).toMatchObject({ rawArguments: '{"dir":"work"}' });
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['tool_use', 'tool-calls'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'content-filter'],
    ['pause_turn', 'other'],
  ])('maps stop_reason %s to %s', (raw, unified) => {
    expect(mapAnthropicFinish(raw)).toEqual({ unified, raw });
  });
});
