import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { SessionMessage } from '$lib/domain/session';
import { contextOf, planCompaction } from '$lib/runtime/compaction';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';
import { draftFromPreset } from '$lib/domain/connection';

const msg = (
  index: number,
  role: SessionMessage['role'],
  text: string,
  extra: Partial<SessionMessage> = {},
): SessionMessage => ({
  sessionId: 's',
  index,
  runId: null,
  createdAt: 0,
  role,
  parts: [{ type: 'text', text }],
  ...extra,
});

describe('compaction planning', () => {
  const history = [
    msg(0, 'user', 'a'.repeat(400)),
    msg(1, 'assistant', 'b'.repeat(400)),
    msg(2, 'user', 'c'.repeat(400)),
    msg(3, 'assistant', 'd'.repeat(400)),
    msg(4, 'user', 'now'),
  ];

  it('keeps the newest turns in full and cuts before a person’s message', () => {
    // Each long message is about 110 tokens; 40% of 600 keeps the newest two turns' worth.
    const plan = planCompaction(history, 600);
    expect(plan?.summarize.map((m) => m.index)).toEqual([0, 1]);
    expect(plan?.keep.map((m) => m.index)).toEqual([2, 3, 4]);
    // A tight window still keeps the newest turn whole.
    expect(planCompaction(history, 100)?.keep.map((m) => m.index)).toEqual([4]);
    // Everything fits: nothing to summarise.
    expect(planCompaction(history, 10_000)).toBeNull();
  });

  it('has nothing to do with fewer than two older messages', () => {
    expect(planCompaction([msg(0, 'user', 'x'.repeat(5000))], 100)).toBeNull();
  });

  it('sends the newest summary instead of what it covers', () => {
    const summary = msg(5, 'user', 'SUMMARY', { summaryOf: { from: 0, to: 2 } });
    expect(contextOf([...history, summary]).map((m) => m.index)).toEqual([5, 3, 4]);
  });
});

describe('Session compaction', () => {
  it('summarises older turns when the next request would not fit, keeping the originals', async () => {
    const model = scriptedGateway([
      { text: 'SUMMARY: the person wants a story about foxes.' },
      { text: 'Here it is.' },
    ]);
    const h = runtimeHarness(model.gateway);
    await h.deps.connections.put({
      ...draftFromPreset('custom'),
      kind: 'remote',
      id: 'small',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      model: 'tiny',
      contextWindow: 1_200,
    });
    const session = await h.service.create({ connectionId: 'small' });
    const base = { sessionId: session.id, runId: null, createdAt: 0 };
    await h.sessions.appendMessages([
      { ...base, index: 0, role: 'user', parts: [{ type: 'text', text: `EARLY ${'fox '.repeat(400)}` }] },
      { ...base, index: 1, role: 'assistant', parts: [{ type: 'text', text: 'noted '.repeat(300) }] },
    ]);
    const updates = await collect(h.service.send(session.id, 'write it now'));

    expect(model.requests[0]).toMatchObject({ toolChoice: 'none', tools: [] });
    expect(JSON.stringify(model.requests[0]!.messages)).toContain('EARLY');
    const answered = JSON.stringify(model.requests[1]!.messages);
    expect(answered).toContain('SUMMARY: the person wants a story about foxes.');
    expect(answered).not.toContain('EARLY');
    expect(answered).toContain('write it now');
    const compacted = updates.flatMap((u) =>
      u.type === 'event' && u.event.type === 'session_compacted' ? [u.event.payload] : [],
    );
    expect(compacted[0]).toMatchObject({ fromIndex: 0, toIndex: 1, summarizedMessages: 2 });
    const stored = await h.service.get(session.id);
    expect(stored.messages.map((m) => m.index)).toEqual([0, 1, 2, 3, 4]);
    expect(stored.messages[3]).toMatchObject({ summaryOf: { from: 0, to: 1 } });
  });

  /** A session on a connection to `model`, with an early message of about 3,000 tokens. */
  async function longSession(model: string, contextWindow?: number) {
    const script = scriptedGateway([{ text: 'SUMMARY: foxes.' }, { text: 'Here it is.' }]);
    const h = runtimeHarness(script.gateway);
    await h.deps.connections.put({
      ...draftFromPreset('custom'),
      kind: 'remote',
      id: 'known',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      model,
      ...(contextWindow ? { contextWindow } : {}),
    });
    const session = await h.service.create({ connectionId: 'known' });
    const base = { sessionId: session.id, runId: null, createdAt: 0 };
    await h.sessions.appendMessages([
      { ...base, index: 0, role: 'user', parts: [{ type: 'text', text: `EARLY ${'fox '.repeat(3_000)}` }] },
      { ...base, index: 1, role: 'assistant', parts: [{ type: 'text', text: 'noted '.repeat(300) }] },
    ]);
    const updates = await collect(h.service.send(session.id, 'write it now'));
    const compacted = updates.filter((u) => u.type === 'event' && u.event.type === 'session_compacted');
    return { requests: script.requests, compacted: compacted.length };
  }

  it("compacts to a known model's window when the connection has none typed in", async () => {
    // phi-3-mini-4k: 4,096 tokens, which the early message alone nearly fills.
    const { requests, compacted } = await longSession('phi-3-mini-4k-instruct');
    expect(compacted).toBe(1);
    expect(requests[0]).toMatchObject({ toolChoice: 'none', tools: [] });
    expect(JSON.stringify(requests[1]!.messages)).not.toContain('EARLY');
    expect(JSON.stringify(requests[1]!.messages)).toContain('SUMMARY: foxes.');
  });

  it("the connection's typed window overrides the known one", async () => {
    const { requests, compacted } = await longSession('phi-3-mini-4k-instruct', 100_000);
    expect(compacted).toBe(0);
    expect(JSON.stringify(requests[0]!.messages)).toContain('EARLY');
  });

  it('an unknown model without a typed window is not compacted', async () => {
    const { requests, compacted } = await longSession('my-finetune');
    expect(compacted).toBe(0);
    expect(requests).toHaveLength(1);
    expect(JSON.stringify(requests[0]!.messages)).toContain('EARLY');
  });
});
