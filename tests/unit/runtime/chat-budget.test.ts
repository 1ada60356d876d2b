import { describe, expect, it } from 'vitest';
import { draftFromPreset } from '$lib/domain/connection';
import type { RunEvent } from '$lib/domain/events';
import type { ModelMessage } from '$lib/domain/model';
import type { RunUpdate } from '$lib/domain/run-update';
import { chatRunWorkspaceKey } from '$lib/runtime/chats';
import { chatHarness } from '../../support/chat-harness';
import { collect } from '../../support/runtime-harness';
import { scriptedGateway, type ScriptedTurn } from '../../support/scripted-gateway';

const events = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event as RunEvent] : []));
const write = (id: string, content: string) => ({
  callId: id,
  name: 'workspace_write_file',
  arguments: JSON.stringify({ path: 'output/main.md', content }),
});
const commit = (id: string) => ({
  callId: id,
  name: 'workspace_commit',
  arguments: JSON.stringify({ path: 'output/main.md', finish: true }),
});
const read = (id: string, indexes: number[]) => ({
  callId: id,
  name: 'chat_read_messages',
  arguments: JSON.stringify({ messages: indexes.map((index) => ({ index })) }),
});
/** The text of the result of call `callId` in a request, if it carries one. */
const resultOf = (messages: readonly ModelMessage[], callId: string) =>
  messages
    .flatMap((m) => m.parts)
    .flatMap((p) => (p.type === 'tool-result' && p.callId === callId ? [p.content] : []))[0];

/** A chat with Brindle on a remote connection to `model`, and `rows` long messages after the greeting. */
async function longChat(
  turns: ScriptedTurn[],
  options: { model?: string; rows?: number; chars?: number } = {},
) {
  const model = scriptedGateway(turns);
  const h = await chatHarness(model.gateway);
  await h.deps.connections.put({
    ...draftFromPreset('anthropic'),
    kind: 'remote',
    id: 'remote',
    apiKey: '',
    model: options.model ?? 'claude-3-5-sonnet-20241022',
  });
  const chat = await h.service.create('c1');
  await h.service.update(chat.id, { connectionId: 'remote' });
  const rows = options.rows ?? 6;
  await h.deps.chats.putMessages(
    Array.from({ length: rows }, (_, i) => ({
      chatId: chat.id,
      index: i + 1,
      name: i % 2 ? 'Brindle' : 'User',
      isUser: i % 2 === 0,
      isSystem: false,
      sendDate: null,
      mes: `Message ${i + 1}. ${'The lantern swung in the rain. '.repeat((options.chars ?? 6_000) / 30)}`,
      extra: {},
      swipes: [],
      swipeId: 0,
      unknown: {},
    })),
  );
  return { ...h, model, chat };
}

describe("a Chat run's budget beyond its first request", () => {
  it('shortens older tool results when a request would overflow the budget, never the newest round', async () => {
    const { service, model, chat, workspaces } = await longChat([
      { toolCalls: [read('r1', [1, 2, 3])] },
      { toolCalls: [read('r2', [4, 5, 6])] },
      { toolCalls: [write('w1', 'The lamp is lit.')] },
      { toolCalls: [commit('c1')] },
    ]);
    const updates = await collect(service.send(chat.id, 'What did we say?'));
    expect(events(updates).at(-1)?.type).toBe('run_completed');
    const [, second, third, fourth] = model.requests;

    // The newest round's result is sent whole, though it alone is over the Default preset's 4k budget.
    expect(resultOf(second!.messages, 'r1')).not.toContain('left out');
    // Next round: the older one is shortened with a note, the newest one whole.
    expect(resultOf(third!.messages, 'r1')).toMatch(
      /\n\[… [\d,]+ characters left out to fit the context budget; call the tool again to see them\]$/,
    );
    expect(resultOf(third!.messages, 'r2')).not.toContain('left out');
    expect(resultOf(fourth!.messages, 'r2')).toContain('left out');

    const shortened = events(updates).flatMap((e) =>
      e.type === 'chat_tool_results_shortened' ? [e.payload] : [],
    );
    expect(shortened.map((s) => [s.round, s.results])).toEqual([
      [3, 1],
      [4, 2],
    ]);
    expect(shortened[0]!.tokensAfter).toBeLessThan(shortened[0]!.tokensBefore);

    // The run's own records keep the results whole.
    const runId = (await service.get(chat.id)).runs[0]!.id;
    const ws = await workspaces.open(chatRunWorkspaceKey(chat.id, runId));
    if (!ws.ok) throw new Error('no run workspace');
    const kept = await ws.value.read('run/transcript/000001.json' as never);
    if (!kept.ok) throw new Error('no transcript record');
    const record = JSON.parse(new TextDecoder().decode(kept.value)) as { message: ModelMessage };
    expect(resultOf([record.message], 'r1')).not.toContain('left out');
    expect(resultOf([record.message], 'r1')!.length).toBeGreaterThan(18_000);
  });

  it('a run that stays within its budget sends every result whole and says nothing of it', async () => {
    const { service, model, chat } = await longChat(
      [{ toolCalls: [read('r1', [1])] }, { toolCalls: [write('w1', 'Yes.')] }, { toolCalls: [commit('c1')] }],
      { rows: 2, chars: 300 },
    );
    const updates = await collect(service.send(chat.id, 'Hello'));
    expect(resultOf(model.requests[2]!.messages, 'r1')).not.toContain('left out');
    expect(events(updates).some((e) => e.type === 'chat_tool_results_shortened')).toBe(false);
  });

  it("records the first prompt's budget: the tokens against the limit and how much of the chat fit", async () => {
    const { service, chat } = await longChat(
      [{ toolCalls: [write('w1', 'Hi.')] }, { toolCalls: [commit('c1')] }],
      {
        rows: 400,
        chars: 300,
      },
    );
    const updates = await collect(service.send(chat.id, 'Hello'));
    const assembled = events(updates).find((e) => e.type === 'chat_prompt_assembled');
    if (assembled?.type !== 'chat_prompt_assembled') throw new Error('no chat_prompt_assembled');
    const b = assembled.payload;
    // The greeting, 400 messages and the person's: 402, of which the 4k budget holds a few dozen.
    expect(b.history.total).toBe(402);
    expect(b.history.sent).toBeGreaterThan(5);
    expect(b.history.sent).toBeLessThan(60);
    expect(b).toMatchObject({ maxContextTokens: 4095, maxReplyTokens: 300, limit: 3792 });
    expect(b.used).toBeLessThanOrEqual(b.limit);
    expect(b.agentTokens).toBeGreaterThan(0);
    expect(b.tokenizer).toMatch(/^estimate/);
    // The oldest message sent is where the chat says the model's memory begins.
    expect(b.history.oldestSent).toBe(402 - b.history.sent);
    expect((await service.get(chat.id)).memoryFrom).toBe(b.history.oldestSent);
  });

  it('a chat whose every message fit has no memory line', async () => {
    const { service, chat } = await longChat(
      [{ toolCalls: [write('w1', 'Hi.')] }, { toolCalls: [commit('c1')] }],
      {
        rows: 2,
        chars: 300,
      },
    );
    expect((await service.get(chat.id)).memoryFrom).toBeNull();
    await collect(service.send(chat.id, 'Hello'));
    expect((await service.get(chat.id)).memoryFrom).toBeNull();
  });

  it('calibrates the estimate from the input tokens the provider reported for the first request', async () => {
    const { service, chat, deps } = await longChat(
      [
        // The provider counted far more than the estimate (3.3 characters per token) did.
        { toolCalls: [write('w1', 'Hi.')], usage: { inputTokens: 1_000_000 } },
        { toolCalls: [commit('c1')], usage: { inputTokens: 1_000_000 } },
      ],
      { rows: 2, chars: 300 },
    );
    expect((await deps.tokenizers.forModel('claude-3-5-sonnet-20241022')).name).toBe(
      'estimate (3.30 characters per token)',
    );
    await collect(service.send(chat.id, 'Hello'));
    // Halfway to what it observed (nearly 0 characters per token), once: only the first request
    // counts (twice would be below 1, and kept at 1).
    const calibrated = (await deps.tokenizers.forModel('claude-3-5-sonnet-20241022')).name;
    expect(calibrated).toMatch(/^estimate \(1\.6\d characters per token\)$/);
    // The next reply's prompt is counted with the new ratio.
    const preview = await service.previewPrompt(chat.id);
    expect(preview.budget.tokenizer).toBe(calibrated);
  });

  it('calibrates nothing without a reported count', async () => {
    const { service, chat, deps } = await longChat(
      [
        { toolCalls: [write('w1', 'Hi.')], usage: {} },
        { toolCalls: [commit('c1')], usage: {} },
      ],
      { rows: 2, chars: 300 },
    );
    await collect(service.send(chat.id, 'Hello'));
    expect((await deps.tokenizers.forModel('claude-3-5-sonnet-20241022')).name).toBe(
      'estimate (3.30 characters per token)',
    );
  });
});
