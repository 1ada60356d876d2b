import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import type { StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { anthropicGateway } from '$lib/adapters/llm/anthropic/gateway';
import { geminiGateway } from '$lib/adapters/llm/gemini/gateway';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import { CHAT_SAMPLER_HOSTS, chatSamplerHost } from '$lib/adapters/llm/openai-chat/sampler';
import { withPinnedSampler } from '$lib/adapters/llm/pinned-sampler';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../support/scripted-llm-server';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { readFixture, requestFixture } from '../../support/image-requests';
import { SAMPLER_SCENARIOS, samplerRequest, type SamplerScenario } from '../../support/sampler-requests';

/**
 * Sampler settings on each of the three wires: the scripted server receives the recorded
 * bodies (each setting under its provider's name, a refused one absent), and a run journals
 * the notes about what was not sent.
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

const GATEWAYS: Record<keyof typeof SAMPLER_SCENARIOS, (s: SamplerScenario) => ModelGateway> = {
  'openai-chat': (s) =>
    openAiChatGateway({
      baseUrl: server.url,
      apiKey: KEY,
      stallMs: 5_000,
      samplerHost: chatSamplerHost(s.preset ?? 'custom'),
      maxTokensField: s.maxTokensField ?? 'max_tokens',
    }),
  anthropic: () =>
    anthropicGateway({ baseUrl: server.url, apiKey: KEY, stallMs: 5_000, promptCaching: false }),
  gemini: () => geminiGateway({ baseUrl: server.geminiUrl, apiKey: KEY, stallMs: 5_000 }),
};

const text = (parts: StreamPart[]) =>
  parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');

describe.each(Object.keys(GATEWAYS) as (keyof typeof GATEWAYS)[])('%s sampler on the wire', (wire) => {
  it.each(SAMPLER_SCENARIOS[wire])(
    '$name: the server receives request-sampler-$name.json',
    async (scenario) => {
      server.script({ text: ['ok'] });
      const parts = await collect(
        GATEWAYS[wire](scenario).stream(samplerRequest(scenario), new AbortController().signal),
      );
      expect(text(parts)).toBe('ok');
      const fixture = readFixture(requestFixture(wire, `request-sampler-${scenario.name}.json`));
      expect(server.requests[0]?.body).toEqual(fixture.body);
      expect(parts[0]).toEqual({ type: 'turn-start', warnings: fixture.warnings });
    },
  );
});

describe('a run with a connection that pins sampler settings', () => {
  it('sends the pinned settings and journals what the model refused', async () => {
    const gateway = withPinnedSampler(
      openAiChatGateway({
        baseUrl: server.url,
        apiKey: KEY,
        stallMs: 5_000,
        samplerHost: CHAT_SAMPLER_HOSTS.openai,
      }),
      { temperature: 0.4, topK: 20, maxOutputTokens: 200, seed: 11 },
    );
    const h = runtimeHarness(gateway);
    await h.ready;
    server.script({ text: ['Hello.'] });
    const session = await h.service.create();
    await collect(h.service.send(session.id, 'hi'));

    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({ temperature: 0.4, max_tokens: 200, seed: 11 });
    expect(body).not.toHaveProperty('top_k');
    const run = (await h.service.get(session.id)).runs[0]!;
    const journal: RunEvent[] = await h.journal.read(run.id, { limit: 500 });
    const notes = journal.filter((e) => e.type === 'model_request_notes');
    expect(notes.map((e) => e.payload)).toEqual([
      { round: 1, invocationId: expect.any(String), notes: ['Top-k was not sent: OpenAI does not take it.'] },
    ]);
    expect(notes[0]?.level).toBe('warn');
    // Journaled with the round, between its request and its completion.
    const order = journal.map((e) => e.type);
    expect(order.indexOf('model_request_notes')).toBeGreaterThan(order.indexOf('model_request_created'));
    expect(order.indexOf('model_request_notes')).toBeLessThan(order.indexOf('model_completed'));
  });
});
