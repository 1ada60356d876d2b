import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelMessage, ModelRequest, ModelToolSpec, StreamPart } from '$lib/domain/model';
import type { HearthError } from '$lib/domain/errors';
import { assembleReply } from '$lib/domain/model-reply';
import { geminiGateway } from '$lib/adapters/llm/gemini/gateway';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../support/scripted-llm-server';
import { collect } from '../../support/replay-fetch';

const KEY = 'AIza-scripted-key';
let server: ScriptedLlmServer;

beforeAll(async () => {
  server = await startScriptedLlmServer({ apiKey: KEY, models: ['gemini-scripted'] });
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
      type: 'object',
      properties: { path: { type: 'string', title: 'Path' } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    name: 'workspace_list_files',
    description: 'Lists files.',
    parameters: { type: 'object', properties: {} },
  },
];

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'gemini-scripted',
  messages: [
    { role: 'system', parts: [{ type: 'text', text: 'You are Hearth.' }] },
    { role: 'user', parts: [{ type: 'text', text: 'Hello' }] },
  ],
  tools: [],
  toolChoice: 'auto',
  ...over,
});

/** `apiKey: null` sends no key at all. */
const gateway = (stallMs = 5_000, apiKey: string | null = KEY) =>
  geminiGateway({ baseUrl: server.geminiUrl, stallMs, ...(apiKey !== null ? { apiKey } : {}) });
const streamParts = (over: Partial<ModelRequest> = {}, stallMs?: number) =>
  collect(gateway(stallMs).stream(request(over), new AbortController().signal));

function errorOf(parts: StreamPart[]): HearthError {
  const last = parts.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error part, got ${JSON.stringify(last)}`);
  return last.error;
}

const text = (parts: StreamPart[]) =>
  parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');

describe('gemini gateway against the scripted server', () => {
  it('streams text and usage; sends the key in x-goog-api-key, never in the URL', async () => {
    server.script({ text: ['Hel', 'lo ', 'wörld 😀'], usage: { prompt_tokens: 5, completion_tokens: 3 } });
    const parts = await streamParts();
    expect(text(parts)).toBe('Hello wörld 😀');
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'stop', raw: 'STOP' },
      usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 },
    });
    const [recorded] = server.requests;
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/v1beta/models/gemini-scripted:streamGenerateContent?alt=sse',
      format: 'gemini',
      body: {
        systemInstruction: { parts: [{ text: 'You are Hearth.' }] },
        contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      },
    });
    expect(recorded?.headers['x-goog-api-key']).toBe(KEY);
    expect(recorded?.path).not.toContain(KEY);
  });

  it('a two-round tool loop with id-less calls: local keys, signatures replayed on the same parts', async () => {
    server.script(
      {
        reasoning: ['Need the ', 'file list and a.md.'],
        reasoningSignature: 'gsig-thought',
        toolCalls: [
          {
            id: null,
            name: 'workspace_read_file',
            arguments: ['{"path":', '"work/a.md"}'],
            signature: 'gsig-call',
          },
          { id: null, name: 'workspace_list_files', arguments: [] },
        ],
        usage: { prompt_tokens: 40, completion_tokens: 12 },
      },
      { text: ['Both read.'], textSignature: 'gsig-text' },
    );
    const first = await streamParts({ tools: TOOLS });
    expect(first.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'tool-calls', raw: 'STOP' },
      usage: { inputTokens: 40, outputTokens: 12, totalTokens: 52 },
    });
    const calls = first.flatMap((p) => (p.type === 'tool-call' ? [p] : []));
    expect(calls).toEqual([
      {
        type: 'tool-call',
        callId: expect.stringMatching(/^gemini-local:resp-scripted-\d+:0$/),
        name: 'workspace_read_file',
        rawArguments: '{"path":"work/a.md"}',
        providerMetadata: { gemini: { thoughtSignature: 'gsig-call' } },
      },
      {
        type: 'tool-call',
        callId: expect.stringMatching(/^gemini-local:resp-scripted-\d+:1$/),
        name: 'workspace_list_files',
        rawArguments: '{}',
      },
    ]);

    const assistant: ModelMessage = { role: 'assistant', parts: assembleReply(first) };
    expect(assistant.parts[0]).toEqual({
      type: 'reasoning',
      text: 'Need the file list and a.md.',
      providerMetadata: { gemini: { thoughtSignature: 'gsig-thought' } },
    });
    const results: ModelMessage = {
      role: 'tool',
      parts: calls.map((c, i) => ({
        type: 'tool-result' as const,
        callId: c.callId,
        name: c.name,
        content: i === 0 ? '# A' : 'work/a.md',
        isError: false,
        images: [],
      })),
    };
    const second = await streamParts({ tools: TOOLS, messages: [...request().messages, assistant, results] });
    expect(text(second)).toBe('Both read.');
    expect(assembleReply(second)).toEqual([
      { type: 'text', text: 'Both read.', providerMetadata: { gemini: { thoughtSignature: 'gsig-text' } } },
    ]);

    const sent = server.requests[1]?.body as Record<string, unknown>;
    expect(sent.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hello' }] },
      {
        role: 'model',
        parts: [
          { text: 'Need the file list and a.md.', thought: true, thoughtSignature: 'gsig-thought' },
          {
            functionCall: { name: 'workspace_read_file', args: { path: 'work/a.md' } },
            thoughtSignature: 'gsig-call',
          },
          { functionCall: { name: 'workspace_list_files', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'workspace_read_file', response: { output: '# A' } } },
          { functionResponse: { name: 'workspace_list_files', response: { output: 'work/a.md' } } },
        ],
      },
    ]);
    expect(sent.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'workspace_read_file',
            description: 'Reads a file.',
            parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
          { name: 'workspace_list_files', description: 'Lists files.' },
        ],
      },
    ]);
    expect(JSON.stringify(sent)).not.toContain('gemini-local');
  });

  it('calls with provider ids send them back on the call and its response', async () => {
    server.script(
      { toolCalls: [{ id: 'fc_1', name: 'workspace_list_files', arguments: ['{}'] }] },
      { text: ['ok'] },
    );
    const first = await streamParts({ tools: TOOLS });
    const assistant: ModelMessage = { role: 'assistant', parts: assembleReply(first) };
    const result: ModelMessage = {
      role: 'tool',
      parts: [
        {
          type: 'tool-result',
          callId: 'fc_1',
          name: 'workspace_list_files',
          content: 'none',
          isError: true,
          images: [],
        },
      ],
    };
    await streamParts({ tools: TOOLS, messages: [...request().messages, assistant, result] });
    const contents = (server.requests[1]?.body as { contents: unknown[] }).contents;
    expect(contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          {
            functionCall: { id: 'fc_1', name: 'workspace_list_files', args: {} },
            thoughtSignature: 'skip_thought_signature_validator',
          },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'fc_1', name: 'workspace_list_files', response: { error: 'none' } } },
        ],
      },
    ]);
  });

  it('a wrong key is model.provider_denied (Google answers 400 API_KEY_INVALID); no key is 403', async () => {
    const wrong = await collect(gateway(5_000, 'AIza-wrong').stream(request(), new AbortController().signal));
    expect(errorOf(wrong)).toEqual({
      code: 'model.provider_denied',
      message: 'The API key was refused (HTTP 400): API key not valid. Please pass a valid API key.',
      status: 400,
    });
    const none = await collect(gateway(5_000, null).stream(request(), new AbortController().signal));
    expect(errorOf(none)).toMatchObject({ code: 'model.provider_denied', status: 403 });
  });

  it('http 429 with RetryInfo and 503 are retryable', async () => {
    server.script(
      {
        fault: 'http',
        status: 429,
        body: JSON.stringify({
          error: {
            code: 429,
            message: 'Quota exceeded.',
            status: 'RESOURCE_EXHAUSTED',
            details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }],
          },
        }),
      },
      { fault: 'http', status: 503 },
    );
    expect(errorOf(await streamParts())).toEqual({
      code: 'model.provider_rate_limited',
      message: 'The provider is rate-limiting requests (HTTP 429): Quota exceeded.',
      status: 429,
      retryable: true,
      retryAfterMs: 2000,
    });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.request_failed',
      status: 503,
      retryable: true,
    });
  });

  it('an error chunk mid-stream is retryable; a rate-limit chunk is a rate limit', async () => {
    server.script({ fault: 'stream-error', afterChunks: 2 }, { fault: 'stream-error', kind: 'rate_limit' });
    const parts = await streamParts();
    expect(text(parts)).toBe('Hello, ');
    expect(errorOf(parts)).toEqual({
      code: 'model.request_failed',
      message: 'The provider reported an error: Overloaded.',
      retryable: true,
    });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.provider_rate_limited',
      retryable: true,
    });
  });

  it('a drop after a function call is never retryable; a drop in text is', async () => {
    server.script(
      {
        fault: 'drop',
        afterChunks: 1,
        reply: { toolCalls: [{ name: 'workspace_list_files', arguments: ['{}'] }] },
      },
      { fault: 'drop', afterChunks: 2 },
    );
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.stream_failed',
      retryable: false,
      afterToolOutput: true,
    });
    expect(errorOf(await streamParts())).toMatchObject({ code: 'model.stream_failed', retryable: true });
  });

  it('hang, heartbeats, malformed JSON and web pages', async () => {
    server.script(
      { fault: 'hang' },
      { fault: 'endless', intervalMs: 20 },
      { fault: 'malformed' },
      { fault: 'html' },
    );
    expect(errorOf(await streamParts({}, 200))).toMatchObject({ code: 'model.stream_stalled' });
    expect(errorOf(await streamParts({}, 250))).toMatchObject({
      code: 'model.stream_stalled',
      message: expect.stringContaining('only keep-alive comments'),
    });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.upstream_invalid_response',
      message: expect.stringContaining('not valid JSON'),
    });
    expect(errorOf(await streamParts())).toMatchObject({
      code: 'model.upstream_invalid_response',
      message: expect.stringContaining('returned a web page'),
    });
  });

  it('no finishReason is model.stream_failed; MALFORMED_FUNCTION_CALL is model.invalid_tool_call; MAX_TOKENS is length', async () => {
    server.script(
      { text: ['Hi'], finishReason: null },
      { finishReason: 'MALFORMED_FUNCTION_CALL' },
      { text: ['cut'], finishReason: 'length' },
    );
    expect(errorOf(await streamParts())).toMatchObject({ code: 'model.stream_failed' });
    expect(errorOf(await streamParts())).toMatchObject({ code: 'model.invalid_tool_call', retryable: true });
    expect((await streamParts()).at(-1)).toMatchObject({
      type: 'finish',
      reason: { unified: 'length', raw: 'MAX_TOKENS' },
    });
  });
});
