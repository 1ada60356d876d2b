import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelMessage, StreamPart } from '$lib/domain/model';
import { assembleReply } from '$lib/domain/model-reply';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { anthropicGateway } from '$lib/adapters/llm/anthropic/gateway';
import { geminiGateway } from '$lib/adapters/llm/gemini/gateway';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../support/scripted-llm-server';
import { collect } from '../../support/replay-fetch';
import {
  IMAGE_SCENARIOS,
  imageRequests,
  JPEG,
  PNG,
  readFixture,
  requestFixture,
} from '../../support/image-requests';

/**
 * Images in requests, on each of the three wires: the scripted server receives the recorded
 * bodies, and a tool's images reach the model in the request after the call.
 */

const KEY = 'scripted-key';
let server: ScriptedLlmServer;

beforeAll(async () => {
  server = await startScriptedLlmServer({ apiKey: KEY });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  expect(server.pending()).toBe(0);
});

interface Wire {
  /** The adapter, as the recorded request fixtures are named. */
  name: 'openai-chat' | 'anthropic' | 'gemini';
  model: string;
  gateway(): ModelGateway;
  /** The part of the second request that carries the tool's result with its two images. */
  toolResult(body: unknown): unknown;
  expectedToolResult(callId: string): unknown;
}

const WIRES: Wire[] = [
  {
    name: 'openai-chat',
    model: 'gpt-4o-mini',
    gateway: () => openAiChatGateway({ baseUrl: server.url, apiKey: KEY, stallMs: 5_000 }),
    toolResult: (body) => (body as { messages: unknown[] }).messages.slice(1),
    expectedToolResult: (callId) => [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: callId,
            type: 'function',
            function: { name: 'mcp__x__screenshot', arguments: '{"url":"https://example.test"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: callId, content: 'Took 2 screenshots.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: `Images returned by ${callId} (mcp__x__screenshot):` },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${JPEG}` } },
        ],
      },
    ],
  },
  {
    name: 'anthropic',
    model: 'claude-sonnet-4-5',
    gateway: () => anthropicGateway({ baseUrl: server.url, apiKey: KEY, stallMs: 5_000 }),
    toolResult: (body) => (body as { messages: unknown[] }).messages.at(-1),
    expectedToolResult: (callId) => ({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: callId,
          content: [
            { type: 'text', text: 'Took 2 screenshots.' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: JPEG } },
          ],
        },
      ],
    }),
  },
  {
    name: 'gemini',
    model: 'gemini-3-flash-preview',
    gateway: () => geminiGateway({ baseUrl: server.geminiUrl, apiKey: KEY, stallMs: 5_000 }),
    toolResult: (body) => (body as { contents: unknown[] }).contents.at(-1),
    expectedToolResult: (callId) => ({
      role: 'user',
      parts: [
        {
          functionResponse: {
            id: callId,
            name: 'mcp__x__screenshot',
            response: { output: 'Took 2 screenshots.' },
            parts: [
              { inlineData: { mimeType: 'image/png', data: PNG } },
              { inlineData: { mimeType: 'image/jpeg', data: JPEG } },
            ],
          },
        },
      ],
    }),
  },
];

const text = (parts: StreamPart[]) =>
  parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');

describe.each(WIRES)('$name images on the wire (scripted server)', (wire) => {
  it.each(IMAGE_SCENARIOS)(
    '%s: the server receives the recorded body (request-%s.json)',
    async (scenario) => {
      server.script({ text: ['ok'] });
      const parts = await collect(
        wire.gateway().stream(imageRequests[scenario](wire.model), new AbortController().signal),
      );
      expect(text(parts)).toBe('ok');
      const fixture = readFixture(requestFixture(wire.name, `request-${scenario}.json`));
      expect(server.requests[0]?.body).toEqual(fixture.body);
      expect(parts[0]).toEqual({ type: 'turn-start', warnings: fixture.warnings });
    },
  );

  it('a tool’s two images reach the request after the scripted call', async () => {
    server.script(
      { toolCalls: [{ name: 'mcp__x__screenshot', arguments: ['{"url":', '"https://example.test"}'] }] },
      { text: ['I see a chart.'] },
    );
    const base = imageRequests['user-image'](wire.model);
    const tools = imageRequests['tool-images'](wire.model).tools;
    const first = await collect(wire.gateway().stream({ ...base, tools }, new AbortController().signal));
    const call = first.find((p) => p.type === 'tool-call');
    if (call?.type !== 'tool-call') throw new Error('expected a tool call');
    const assistant: ModelMessage = { role: 'assistant', parts: assembleReply(first) };
    const result: ModelMessage = {
      role: 'tool',
      parts: [
        {
          type: 'tool-result',
          callId: call.callId,
          name: call.name,
          content: 'Took 2 screenshots.',
          isError: false,
          images: [
            { path: 'work/plot.png', mimeType: 'image/png', data: PNG },
            { path: 'tool-results/shot.jpg', mimeType: 'image/jpeg', data: JPEG },
          ],
        },
      ],
    };
    const second = await collect(
      wire
        .gateway()
        .stream(
          { ...base, tools, messages: [...base.messages, assistant, result] },
          new AbortController().signal,
        ),
    );
    expect(text(second)).toBe('I see a chart.');
    expect(wire.toolResult(server.requests[1]?.body)).toEqual(wire.expectedToolResult(call.callId));
  });
});
