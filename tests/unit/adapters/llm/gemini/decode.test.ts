import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { assembleReply } from '$lib/domain/model-reply';
import { createGeminiDecoder } from '$lib/adapters/llm/gemini/decode';
import { encodeGeminiRequest } from '$lib/adapters/llm/gemini/encode';
import { mapGeminiFinish } from '$lib/adapters/llm/gemini/finish';
import { geminiGateway } from '$lib/adapters/llm/gemini/gateway';
import { collect, replayFetch } from '../../../../support/replay-fetch';

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

const sampleRequest = (): ModelRequest => ({
  model: 'gemini-2.5-flash',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  toolChoice: 'auto',
});

async function replay(name: string, chunkSize = 7): Promise<StreamPart[]> {
  const gateway = geminiGateway({
    apiKey: 'AIza-test',
    fetch: replayFetch(fixture(name), { chunkSize }),
    callKeySeed: () => 'seed',
  });
  return collect(gateway.stream(sampleRequest(), new AbortController().signal));
}

const types = (parts: StreamPart[]) => parts.map((p) => p.type);

describe('gemini decoding of recorded streams', () => {
  it('plain text over CRLF events, usage from the last chunk', async () => {
    expect(await replay('text.sse')).toEqual([
      { type: 'turn-start', warnings: [] },
      { type: 'response-metadata', id: 'Jd9oaLKSJ_2AxN8P3ZCCsQs', model: 'gemini-2.5-flash' },
      { type: 'text-start', blockId: 'text-1' },
      { type: 'text-delta', blockId: 'text-1', delta: 'The' },
      { type: 'text-delta', blockId: 'text-1', delta: ' quick brown fox jumps' },
      { type: 'text-delta', blockId: 'text-1', delta: ' — grüß dich 😀' },
      { type: 'text-end', blockId: 'text-1' },
      {
        type: 'finish',
        reason: { unified: 'stop', raw: 'STOP' },
        usage: { inputTokens: 9, outputTokens: 12, totalTokens: 21 },
      },
    ]);
  });

  it('gives the same parts whatever the chunking', async () => {
    for (const name of ['thinking.sse', 'function-calls.sse', 'text.sse']) {
      const reference = await replay(name, 1 << 20);
      for (const size of [1, 2, 3, 5, 64]) expect(await replay(name, size)).toEqual(reference);
    }
  });

  it('parallel function calls without ids get local keys; args objects become raw JSON; STOP means tool-calls', async () => {
    const parts = await replay('function-calls.sse');
    expect(types(parts)).toEqual([
      'turn-start',
      'response-metadata',
      ...(['tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-call'] as const),
      ...(['tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-call'] as const),
      ...(['tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-call'] as const),
      'finish',
    ]);
    expect(parts.filter((p) => p.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        callId: 'gemini-local:wqFoaPXzKsK4xN8Pq7W9uQk:0',
        name: 'get_weather',
        rawArguments: '{"location":"Paris","unit":"celsius"}',
        providerMetadata: {
          gemini: { thoughtSignature: 'CiQB0e2Kb7mZrWJnUv5hXSbE3kQ2yC1xVb1Jd0Zk/5a3xVKfWSoKZAHR7Yr8' },
        },
      },
      {
        type: 'tool-call',
        callId: 'gemini-local:wqFoaPXzKsK4xN8Pq7W9uQk:1',
        name: 'get_weather',
        rawArguments: '{"location":"London"}',
      },
      {
        type: 'tool-call',
        callId: 'gemini-local:wqFoaPXzKsK4xN8Pq7W9uQk:2',
        name: 'workspace_list_files',
        rawArguments: '{}',
      },
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'tool-calls', raw: 'STOP' },
      usage: { inputTokens: 70, outputTokens: 110, totalTokens: 180, reasoningTokens: 80 },
    });
  });

  it('function calls with provider ids keep them byte for byte, and round-trip through the encoder', async () => {
    const parts = await replay('function-call-ids.sse');
    const stored = assembleReply(parts);
    expect(stored).toEqual([
      { type: 'text', text: 'Reading both files.' },
      {
        type: 'tool-call',
        callId: 'fc_01j8u2kd',
        name: 'workspace_read_file',
        input: { path: 'work/a.md' },
        providerMetadata: { gemini: { thoughtSignature: 'EpsECpgEAXLI2nzq3Y8dXRWmP7o9+Jv1S0jWcE0=' } },
      },
      {
        type: 'tool-call',
        callId: 'fc_01j8u2ke',
        name: 'workspace_read_file',
        input: { path: 'notes/résumé.md' },
      },
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'tool-calls', raw: 'STOP' },
      usage: {
        inputTokens: 210,
        outputTokens: 185,
        totalTokens: 395,
        reasoningTokens: 144,
        cachedInputTokens: 128,
      },
    });
    const next = encodeGeminiRequest({
      ...sampleRequest(),
      messages: [...sampleRequest().messages, { role: 'assistant', parts: stored }],
    });
    expect(next.body.contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Reading both files.' },
        {
          functionCall: { id: 'fc_01j8u2kd', name: 'workspace_read_file', args: { path: 'work/a.md' } },
          thoughtSignature: 'EpsECpgEAXLI2nzq3Y8dXRWmP7o9+Jv1S0jWcE0=',
        },
        {
          functionCall: { id: 'fc_01j8u2ke', name: 'workspace_read_file', args: { path: 'notes/résumé.md' } },
        },
      ],
    });
  });

  it('thought parts as reasoning; a trailing signature-only part closes the text block with the signature', async () => {
    const parts = await replay('thinking.sse');
    expect(parts.filter((p) => !p.type.endsWith('-delta'))).toEqual([
      { type: 'turn-start', warnings: [] },
      { type: 'response-metadata', id: 'Sz5naKSrM_OExN8P1rKUuAs', model: 'gemini-2.5-pro' },
      { type: 'reasoning-start', blockId: 'reasoning-1' },
      { type: 'reasoning-end', blockId: 'reasoning-1' },
      { type: 'text-start', blockId: 'text-2' },
      {
        type: 'text-end',
        blockId: 'text-2',
        providerMetadata: { gemini: { thoughtSignature: 'CsQBAdHtim9Qn3cWJwG0cFh0d1w0b9x1QzE2YnV3MQ==' } },
      },
      {
        type: 'finish',
        reason: { unified: 'stop', raw: 'STOP' },
        usage: { inputTokens: 15, outputTokens: 221, totalTokens: 236, reasoningTokens: 212 },
      },
    ]);
    expect(assembleReply(parts)).toEqual([
      {
        type: 'reasoning',
        text: '**Weighing the numbers**\n\nThe user compares 9.11 and 9.9. As decimals, 9.9 = 9.90 > 9.11.',
      },
      {
        type: 'text',
        text: '9.9 is larger than 9.11.',
        providerMetadata: { gemini: { thoughtSignature: 'CsQBAdHtim9Qn3cWJwG0cFh0d1w0b9x1QzE2YnV3MQ==' } },
      },
    ]);
  });

  it('an error chunk mid-stream is a retryable failure', async () => {
    const parts = await replay('error-chunk.sse');
    expect(parts.slice(-2)).toEqual([
      { type: 'text-end', blockId: 'text-1' },
      {
        type: 'error',
        error: {
          code: 'model.request_failed',
          message: 'The provider reported an error: The model is overloaded. Please try again later.',
          retryable: true,
        },
      },
    ]);
  });

  it('SAFETY and a blocked prompt finish as content-filter', async () => {
    expect((await replay('safety.sse')).at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'content-filter', raw: 'SAFETY' },
      usage: { inputTokens: 9, outputTokens: 2, totalTokens: 11 },
    });
    expect(await replay('prompt-blocked.sse')).toEqual([
      { type: 'turn-start', warnings: [] },
      { type: 'response-metadata', id: 'blk1', model: 'gemini-2.5-flash' },
      {
        type: 'finish',
        reason: { unified: 'content-filter', raw: 'PROHIBITED_CONTENT' },
        usage: { inputTokens: 7, totalTokens: 7 },
      },
    ]);
  });

  it('MALFORMED_FUNCTION_CALL is a retryable model.invalid_tool_call quoting Gemini', async () => {
    expect((await replay('malformed-call.sse')).at(-1)).toEqual({
      type: 'error',
      error: {
        code: 'model.invalid_tool_call',
        message:
          'The model produced a function call Gemini could not accept (MALFORMED_FUNCTION_CALL): Malformed function call: print(default_api.get_weather(location="Paris".',
        retryable: true,
      },
    });
  });

  it('a function call without a name is model.invalid_tool_call', async () => {
    expect((await replay('call-without-name.sse')).at(-1)).toEqual({
      type: 'error',
      error: {
        code: 'model.invalid_tool_call',
        message: 'The model sent function call #1 without a name. Hearth never invents tool-call names.',
      },
    });
  });
});

describe('createGeminiDecoder', () => {
  const chunk = (parts: object[], extra: object = {}) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
  });

  it('uses the seed for local keys when a response has no id', () => {
    const d = createGeminiDecoder({ callKeySeed: 'abc123' });
    const parts = d.push(chunk([{ functionCall: { name: 'ls', args: {} } }], { finishReason: 'STOP' }));
    expect(parts.find((p) => p.type === 'tool-call')).toEqual({
      type: 'tool-call',
      callId: 'gemini-local:abc123:0',
      name: 'ls',
      rawArguments: '{}',
    });
  });

  it('fails a stream that ends without a finishReason', () => {
    const d = createGeminiDecoder();
    d.push(chunk([{ text: 'Hi' }]));
    expect(d.end()).toEqual([
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
  });

  it('marks a failure after a function call as not retryable', () => {
    const d = createGeminiDecoder();
    d.push(chunk([{ functionCall: { id: 'f1', name: 'write', args: { a: 1 } } }]));
    expect(d.toolOutputStarted).toBe(true);
    expect(d.fail({ code: 'model.stream_failed', message: 'dropped', retryable: true }).at(-1)).toEqual({
      type: 'error',
      error: { code: 'model.stream_failed', message: 'dropped', retryable: false, afterToolOutput: true },
    });
  });

  it('keeps parts it does not interpret as native parts, in place', () => {
    const d = createGeminiDecoder();
    const parts = [
      ...d.push(
        chunk([
          { text: 'Computing.' },
          { executableCode: { language: 'PYTHON', code: 'print(1+1)' } },
          { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2\n' } },
          { text: 'It is 2.' },
        ]),
      ),
      ...d.push(chunk([], { finishReason: 'STOP' })),
      ...d.end(),
    ];
    expect(assembleReply(parts)).toEqual([
      { type: 'text', text: 'Computing.' },
      {
        type: 'native',
        provider: 'gemini',
        value: { executableCode: { language: 'PYTHON', code: 'print(1+1)' } },
      },
      {
        type: 'native',
        provider: 'gemini',
        value: { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2\n' } },
      },
      { type: 'text', text: 'It is 2.' },
    ]);
  });

  it('a signature on a text part closes its block: the next text starts a new one', () => {
    const d = createGeminiDecoder();
    const parts = [
      ...d.push(chunk([{ text: 'one', thoughtSignature: 'S1' }, { text: 'two' }], { finishReason: 'STOP' })),
      ...d.end(),
    ];
    expect(assembleReply(parts)).toEqual([
      { type: 'text', text: 'one', providerMetadata: { gemini: { thoughtSignature: 'S1' } } },
      { type: 'text', text: 'two' },
    ]);
  });

  it('decodes a non-SSE JSON array reply', () => {
    const d = createGeminiDecoder();
    const parts = [
      ...d.pushJson([chunk([{ text: 'Hel' }]), chunk([{ text: 'lo' }], { finishReason: 'STOP' })]),
      ...d.end(),
    ];
    expect(assembleReply(parts)).toEqual([{ type: 'text', text: 'Hello' }]);
  });

  it.each([
    ['RESOURCE_EXHAUSTED', 429, 'model.provider_rate_limited', true],
    ['INTERNAL', 500, 'model.request_failed', true],
    ['PERMISSION_DENIED', 403, 'model.provider_denied', undefined],
    ['INVALID_ARGUMENT', 400, 'model.request_failed', false],
  ])('maps an in-stream %s error to %s', (status, code, expected, retryable) => {
    const d = createGeminiDecoder();
    const last = d.push({ error: { code, status, message: 'm' } }).at(-1);
    expect(last).toMatchObject({ type: 'error', error: { code: expected } });
    expect(last?.type === 'error' && last.error.retryable).toBe(retryable);
  });

  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool-calls'],
    ['MAX_TOKENS', false, 'length'],
    ['SAFETY', false, 'content-filter'],
    ['RECITATION', false, 'content-filter'],
    ['PROHIBITED_CONTENT', false, 'content-filter'],
    ['OTHER', false, 'other'],
    ['FINISH_REASON_UNSPECIFIED', false, 'other'],
  ])('maps finishReason %s (calls: %s) to %s', (raw, calls, unified) => {
    expect(mapGeminiFinish(raw, calls)).toEqual({ unified, raw });
  });
});
