import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicGateway } from '$lib/adapters/llm/anthropic/gateway';
import { geminiGateway } from '$lib/adapters/llm/gemini/gateway';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../support/scripted-llm-server';

const KEY = 'k-runtime';
let server: ScriptedLlmServer;
beforeAll(async () => {
  server = await startScriptedLlmServer({ apiKey: KEY });
});
afterAll(() => server.close());

const formats: [string, () => ModelGateway][] = [
  ['openai', () => openAiChatGateway({ baseUrl: server.url, apiKey: KEY })],
  ['anthropic', () => anthropicGateway({ baseUrl: server.url, apiKey: KEY })],
  ['gemini', () => geminiGateway({ baseUrl: server.geminiUrl, apiKey: KEY })],
];

describe('a Session run over real HTTP, per wire format', () => {
  it.each(formats)(
    '%s: two rounds, the tool result and the reasoning signature go back',
    async (format, make) => {
      server.requests.length = 0;
      server.script(
        {
          reasoning: ['I should ', 'save it.'],
          reasoningSignature: 'sig-round-1',
          text: ['Saving.'],
          toolCalls: [
            {
              id: format === 'gemini' ? undefined : 'call_7',
              name: 'workspace_write_file',
              arguments: ['{"path":"work/n', 'ote.md","content":"hi"}'],
            },
          ],
        },
        { text: ['Saved ', 'work/note.md.'] },
      );
      const h = runtimeHarness(make());
      const session = await h.service.create();
      const updates = await collect(h.service.send(session.id, 'save hi'));
      const last = updates.filter((u) => u.type === 'event').at(-1);
      expect(last).toMatchObject({ event: { type: 'run_completed' } });

      const ws = await h.workspaces.open(`sessions/${session.id}`);
      const file = ws.ok ? await ws.value.read('work/note.md' as never) : null;
      expect(file?.ok && new TextDecoder().decode(file.value)).toBe('hi');

      const second = JSON.stringify(server.requests.filter((r) => r.format === format)[1]!.body);
      // The tool result is paired with its call.
      expect(second).toContain('Wrote');
      if (format === 'anthropic') {
        expect(second).toContain('"signature":"sig-round-1"');
        expect(second).toContain('"tool_use_id":"call_7"');
      }
      if (format === 'gemini') expect(second).toContain('sig-round-1');
      if (format === 'openai') expect(second).toContain('"tool_call_id":"call_7"');
      const stored = await h.service.get(session.id);
      expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    },
  );
});
