import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelMessage, ModelRequest, ModelToolSpec, StreamPart } from '$lib/domain/model';
import type { HearthError } from '$lib/domain/errors';
import { assembleReply } from '$lib/domain/model-reply';
import { anthropicGateway } from '$lib/adapters/llm/anthropic/gateway';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../support/scripted-llm-server';
import { collect } from '../../support/replay-fetch';

const KEY = 'sk-ant-scripted-key';
let server: ScriptedLlmServer;

beforeAll(async () => {
  server = await startScriptedLlmServer({ apiKey: KEY, models: ['claude-scripted'] });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  expect(server.pending()).toBe(0);
});

const TOOLS: ModelToolSpec[] = [
  {
    name: 'workspace_read_file',
    description: 'Reads a file.',
    parameters: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
    },
  },
];

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'claude-scripted',
  messages: [
    { role: 'system', parts: [{ type: 'text', text: 'You are Hearth.' }] },
    { role: 'user', parts: [{ type: 'text', text: 'Hello' }] },
  ],
  tools: [],
  toolChoice: 'auto',
  ...over,
});

const gateway = (stallMs = 5_000, apiKey = KEY) => anthropicGateway({ baseUrl: server.url, apiKey, stallMs });
const streamParts = (over: Partial<ModelRequest> = {}, stallMs?: number) =>
  collect(gateway(stallMs).stream(request(over), new AbortController().signal));

function errorOf(parts: StreamPart[]): HearthError {
  const last = parts.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error part, got ${JSON.stringify(last)}`);
  return last.error;
}

const text = (parts: StreamPart[]) =>
  parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');

describe('anthropic gateway against the scripted server', () => {
  it('streams text and usage; sends the Messages API headers and body', async () => {
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
      reason: { unified: 'stop', raw: 'end_turn' },
      usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 },
    });
    const [recorded] = server.requests;
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/v1/messages',
      format: 'anthropic',
      body: {
        model: 'claude-scripted',
        max_tokens: 8192,
        stream: true,
        system: [{ type: 'text', text: 'You are Hearth.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      },
    });
    expect(recorded?.headers['x-api-key']).toBe(KEY);
    expect(recorded?.headers['anthropic-version']).toBe('2023-06-01');
    expect(recorded?.headers['anthropic-dangerous-direct-browser-access']).toBe('true');
    expect(recorded?.headers.authorization).toBeUndefined();
  });

  it('a two-round tool loop replays thinking, its signature, redacted thinking and the tool_use id', async () => {
    server.script(
      {
        reasoning: ['I should ', 'read it.'],
        reasoningSignature: 'sig-round-1',
        redactedThinking: ['RED-1'],
        text: ['Reading.'],
        toolCalls: [{ name: 'workspace_read_file', arguments: ['{"pa', 'th":"work/', 'a.md"}'] }],
        usage: { prompt_tokens: 50, completion_tokens: 20 },
      },
      { text: ['It says ', '# A.'] },
    );
    const tools = TOOLS;
    const first = await streamParts({ tools });
    const call = first.find((p) => p.type === 'tool-call');
    expect(call).toEqual({
      type: 'tool-call',
      callId: expect.stringMatching(/^toolu_scripted_\d+$/),
      name: 'workspace_read_file',
      rawArguments: '{"path":"work/a.md"}',
    });
    expect(first.at(-1)).toMatchObject({
      type: 'finish',
      reason: { unified: 'tool-calls', raw: 'tool_use' },
    });
    if (call?.type !== 'tool-call') return;

    // What the runtime stores between rounds.
    const assistant: ModelMessage = { role: 'assistant', parts: assembleReply(first) };
    expect(assistant.parts).toEqual([
      { type: 'reasoning', text: 'I should read it.', signature: 'sig-round-1' },
      { type: 'native', provider: 'anthropic', value: { type: 'redacted_thinking', data: 'RED-1' } },
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', callId: call.callId, name: 'workspace_read_file', input: { path: 'work/a.md' } },
    ]);
    const result: ModelMessage = {
      role: 'tool',
      parts: [
        {
          type: 'tool-result',
          callId: call.callId,
          name: call.name,
          content: '# A',
          isError: false,
          images: [],
        },
      ],
    };
    const second = await streamParts({ tools, messages: [...request().messages, assistant, result] });
    expect(text(second)).toBe('It says # A.');
    expect(second.at(-1)).toMatchObject({ type: 'finish', reason: { unified: 'stop', raw: 'end_turn' } });

    const sent = server.requests[1]?.body as { messages: unknown[] };
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should read it.', signature: 'sig-round-1' },
          { type: 'redacted_thinking', data: 'RED-1' },
          { type: 'text', text: 'Reading.' },
          {
            type: 'tool_use',
            id: call.callId,
            name: 'workspace_read_file',
            input: { path: 'work/a.md' },
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.callId, content: '# A' }] },
    ]);
    expect(server.requests[1]?.body).toMatchObject({
      tools: [
        {
          name: 'workspace_read_file',
          input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          cache_control: { type: 'ephemeral' },
        },
      ],
      tool_choice: { type: 'auto' },
    });
  });

  it('parallel tool calls keep their ids and order', async () => {
    server.script({
      toolCalls: [
        { id: 'toolu_A', name: 'workspace_read_file', arguments: ['{"path":"a"}'] },
        { id: 'toolu_B', name: 'workspace_read_file', arguments: ['{"path":', '"b"}'] },
      ],
    });
    const parts = await streamParts({ tools: TOOLS });
    expect(
      parts.filter((p) => p.type === 'tool-call').map((p) => p.type === 'tool-call' && p.callId),
    ).toEqual(['toolu_A', 'toolu_B']);
  });

  it('a wrong key is model.provider_denied with Anthropic’s message (no turn is used)', async () => {
    const parts = await collect(
      gateway(5_000, 'sk-ant-wrong').stream(request(), new AbortController().signal),
    );
    expect(errorOf(parts)).toEqual({
      code: 'model.provider_denied',
      message: 'The API key was refused (HTTP 401): invalid x-api-key.',
      status: 401,
    });
  });

  it('http 529 overloaded is retryable', async () => {
    server.script({ fault: 'http', status: 529 });
    expect(errorOf(await streamParts())).toEqual({
      code: 'model.request_failed',
      message: 'The provider is overloaded (HTTP 529): Scripted HTTP 529.',
      status: 529,
      retryable: true,
    });
  });

  it('an overloaded_error event mid-stream is retryable', async () => {
    server.script({ fault: 'stream-error', afterChunks: 5 });
    const parts = await streamParts();
    expect(text(parts)).toBe('Hello, ');
    expect(errorOf(parts)).toEqual({
      code: 'model.request_failed',
      message: 'The provider is overloaded: Overloaded.',
      retryable: true,
    });
  });

  it('a rate_limit_error event mid-stream is a rate limit', async () => {
    server.script({ fault: 'stream-error', kind: 'rate_limit' });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.provider_rate_limited',
      retryable: true,
    });
  });

  it('a drop during tool input is never retryable', async () => {
    server.script({
      fault: 'drop',
      afterChunks: 5,
      reply: { toolCalls: [{ name: 'workspace_write_file', arguments: ['{"path":', '"a.md"', '}'] }] },
    });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.stream_failed',
      retryable: false,
      afterToolOutput: true,
    });
  });

  it('hang and heartbeat-only streams stall out', async () => {
    server.script({ fault: 'hang' });
    expect(errorOf(await streamParts({}, 200))).toMatchObject({
      code: 'model.stream_stalled',
      retryable: true,
    });
    server.script({ fault: 'endless', intervalMs: 20 });
    expect(errorOf(await streamParts({}, 250))).toEqual({
      code: 'model.stream_stalled',
      message: 'The provider sent only keep-alive comments and no data for 250 ms; the reply was abandoned.',
      retryable: true,
    });
  });

  it('malformed and web-page replies are model.upstream_invalid_response', async () => {
    server.script({ fault: 'malformed' });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.upstream_invalid_response',
      message: expect.stringContaining('not valid JSON'),
    });
    server.script({ fault: 'html' });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.upstream_invalid_response',
      message: expect.stringContaining('returned a web page'),
    });
  });

  it('a tool_use without an id is model.invalid_tool_call', async () => {
    server.script({ toolCalls: [{ id: null, name: 'ls', arguments: ['{}'] }] });
    expect(errorOf(await streamParts())).toMatchObject({ code: 'model.invalid_tool_call' });
  });

  it('a stream that ends without a stop reason is model.stream_failed', async () => {
    server.script({ text: ['Hi'], finishReason: null });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.stream_failed',
      message: 'The stream ended before the model finished its reply.',
    });
  });

  it('max_tokens during a tool call finishes as length with the partial arguments', async () => {
    server.script({
      toolCalls: [
        { id: 'toolu_T', name: 'workspace_write_file', arguments: ['{"path":"a.md","content":"lo'] },
      ],
      finishReason: 'length',
    });
    const parts = await streamParts({ tools: TOOLS });
    expect(parts.slice(-2)).toMatchObject([
      { type: 'tool-call', callId: 'toolu_T', rawArguments: '{"path":"a.md","content":"lo' },
      { type: 'finish', reason: { unified: 'length', raw: 'max_tokens' } },
    ]);
  });
});
