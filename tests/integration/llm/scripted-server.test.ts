import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { assembleReply } from '$lib/domain/model-reply';
import { anthropicGateway } from '$lib/adapters/llm/anthropic/gateway';
import { geminiGateway } from '$lib/adapters/llm/gemini/gateway';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import { startScriptedLlmServer, type ScriptedLlmServer, type Turn } from '../../support/scripted-llm-server';
import { collect } from '../../support/replay-fetch';

const KEY = 'scripted-key';
let server: ScriptedLlmServer;

beforeAll(async () => {
  server = await startScriptedLlmServer({ apiKey: KEY, models: ['m-1', 'm-2'] });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  expect(server.pending()).toBe(0);
});

const request: ModelRequest = {
  model: 'm-1',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
  tools: [
    {
      name: 'ls',
      description: 'Lists.',
      parameters: { type: 'object', properties: { dir: { type: 'string' } } },
    },
  ],
  toolChoice: 'auto',
};

const gateways = (): [string, ModelGateway][] => [
  ['openai', openAiChatGateway({ baseUrl: server.url, apiKey: KEY })],
  ['anthropic', anthropicGateway({ baseUrl: server.url, apiKey: KEY })],
  ['gemini', geminiGateway({ baseUrl: server.geminiUrl, apiKey: KEY })],
];

const TURN: Turn = {
  reasoning: ['Let me ', 'look.'],
  text: ['Looking ', 'now.'],
  toolCalls: [{ id: 'call_X', name: 'ls', arguments: ['{"dir":', '"work"}'] }],
  usage: { prompt_tokens: 11, completion_tokens: 7 },
};

describe('the scripted server speaks every wire format from one script', () => {
  it.each([0, 1, 2])('the same turn decodes to the same canonical reply (%i)', async (i) => {
    const [format, gateway] = gateways()[i]!;
    server.script(TURN);
    const parts: StreamPart[] = await collect(gateway.stream(request, new AbortController().signal));
    const reply = assembleReply(parts).map((p) =>
      p.type === 'reasoning' ? { type: p.type, text: p.text } : p,
    );
    expect(reply).toEqual([
      { type: 'reasoning', text: 'Let me look.' },
      { type: 'text', text: 'Looking now.' },
      { type: 'tool-call', callId: 'call_X', name: 'ls', input: { dir: 'work' } },
    ]);
    expect(parts.at(-1)).toMatchObject({
      type: 'finish',
      reason: { unified: 'tool-calls' },
      usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 },
    });
    expect(server.requests[0]?.format).toBe(format);
  });

  it('an OpenAI in-stream error chunk', async () => {
    server.script({ fault: 'stream-error', kind: 'server', afterChunks: 2 });
    const parts = await collect(gateways()[0]![1].stream(request, new AbortController().signal));
    expect(parts.at(-1)).toEqual({
      type: 'error',
      error: {
        code: 'model.request_failed',
        message: 'The provider reported an error: Internal server error.',
        retryable: true,
      },
    });
  });

  it('lists models in each format', async () => {
    const get = async (url: string, headers: Record<string, string>) =>
      (await fetch(url, { headers })).json() as Promise<Record<string, unknown>>;
    expect(await get(`${server.url}/models`, { authorization: `Bearer ${KEY}` })).toMatchObject({
      object: 'list',
      data: [{ id: 'm-1' }, { id: 'm-2' }],
    });
    expect(
      await get(`${server.url}/models`, { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }),
    ).toMatchObject({
      data: [
        { type: 'model', id: 'm-1' },
        { type: 'model', id: 'm-2' },
      ],
      has_more: false,
    });
    expect(await get(`${server.geminiUrl}/models`, { 'x-goog-api-key': KEY })).toMatchObject({
      models: [{ name: 'models/m-1' }, { name: 'models/m-2' }],
    });
  });

  it('answers a non-streamed Anthropic request with a Message', async () => {
    server.script({ reasoning: ['hm'], reasoningSignature: 'S', text: ['Hi'] });
    const res = await fetch(`${server.url}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm-1', max_tokens: 10, messages: [], stream: false }),
    });
    expect(await res.json()).toMatchObject({
      type: 'message',
      content: [
        { type: 'thinking', thinking: 'hm', signature: 'S' },
        { type: 'text', text: 'Hi' },
      ],
      stop_reason: 'end_turn',
    });
  });

  it('rejects requests the real APIs would reject', async () => {
    const noVersion = await fetch(`${server.url}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
      body: '{}',
    });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const noSse = await fetch(`${server.geminiUrl}/models/m-1:streamGenerateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': KEY },
      body: '{}',
    });
    expect(noSse.status).toBe(400);
    const keyInQuery = await fetch(`${server.geminiUrl}/models?key=${KEY}`);
    expect(keyInQuery.status).toBe(200);
  });

  it('answers CORS preflight for the Anthropic and Gemini headers', async () => {
    const res = await fetch(`${server.url}/messages`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers':
          'anthropic-dangerous-direct-browser-access, anthropic-version, content-type, x-api-key',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')).toContain(
      'anthropic-dangerous-direct-browser-access',
    );
    const bare = await fetch(`${server.geminiUrl}/models`, { method: 'OPTIONS' });
    expect(bare.headers.get('access-control-allow-headers')).toContain('x-goog-api-key');
  });
});
