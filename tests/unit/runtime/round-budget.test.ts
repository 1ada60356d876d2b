import { describe, expect, it } from 'vitest';
import { estimateCounter } from '$lib/chat/prompt/estimate';
import type { ModelMessage } from '$lib/domain/model';
import { fitRounds, modelMessageTokens, shortenedResult } from '$lib/runtime/round-budget';

const counter = estimateCounter(4);
const tokensOf = (m: ModelMessage) => modelMessageTokens(counter, m);
const text = (role: ModelMessage['role'], t: string): ModelMessage => ({
  role,
  parts: [{ type: 'text', text: t }],
});
const call = (id: string): ModelMessage => ({
  role: 'assistant',
  parts: [{ type: 'tool-call', callId: id, name: 'workspace_read_file', input: { path: `${id}.md` } }],
});
const result = (id: string, content: string): ModelMessage => ({
  role: 'tool',
  parts: [
    { type: 'tool-result', callId: id, name: 'workspace_read_file', content, isError: false, images: [] },
  ],
});
const contentOf = (m: ModelMessage) => (m.parts[0] as { content: string }).content;

/** The first prompt, then three rounds that each read a long file. */
const rounds: ModelMessage[] = [
  text('system', 'You write the next message.'),
  text('user', 'Hello there.'),
  call('a'),
  result('a', 'A'.repeat(20_000)),
  call('b'),
  result('b', 'B'.repeat(20_000)),
  call('c'),
  result('c', 'C'.repeat(20_000)),
];
const total = (messages: readonly ModelMessage[]) => messages.reduce((n, m) => n + tokensOf(m), 0);

describe('fitRounds', () => {
  it('under the budget: the messages unchanged', () => {
    const fit = fitRounds(rounds, { limit: total(rounds) + 100, fixed: 100 }, tokensOf);
    expect(fit.messages).toBe(rounds);
    expect(fit).toMatchObject({ shortened: 0, charsLeftOut: 0 });
    expect(fit.tokensAfter).toBe(fit.tokensBefore);
  });

  it('shortens the oldest result first, only as many as it takes', () => {
    // Room for everything but about 4,000 tokens: shortening the oldest result (20,000 characters,
    // about 5,000 tokens) to its head is enough.
    const limit = total(rounds) - 4_000;
    const fit = fitRounds(rounds, { limit, fixed: 0 }, tokensOf);
    expect(fit.shortened).toBe(1);
    expect(contentOf(fit.messages[3]!)).toBe(shortenedResult('A'.repeat(20_000), 2_000));
    expect(contentOf(fit.messages[3]!)).toMatch(
      /^A{2000}\n\[… 18,000 characters left out to fit the context budget; call the tool again to see them\]$/,
    );
    expect(fit.messages[5]).toBe(rounds[5]);
    expect(fit.charsLeftOut).toBe(18_000);
    expect(fit.tokensAfter).toBeLessThanOrEqual(limit);
    expect(fit.tokensAfter).toBe(total(fit.messages));
    // The messages given are not changed.
    expect(contentOf(rounds[3]!)).toHaveLength(20_000);
  });

  it('never shortens the newest round, even when the rest is not enough', () => {
    const fit = fitRounds(rounds, { limit: 10, fixed: 0 }, tokensOf);
    expect(fit.shortened).toBe(2);
    expect(fit.messages[7]).toBe(rounds[7]);
    // Past their first heads, the older results keep only a short one.
    expect(contentOf(fit.messages[3]!)).toMatch(/^A{200}\n\[… 19,800 characters left out/);
    expect(contentOf(fit.messages[5]!)).toMatch(/^B{200}\n\[… 19,800 characters left out/);
    expect(fit.tokensAfter).toBeGreaterThan(10);
    // Only results are shortened: the prompt's messages and the calls stay whole.
    for (const i of [0, 1, 2, 4, 6]) expect(fit.messages[i]).toBe(rounds[i]);
  });

  it('counts the fixed parts (system prompt, tool definitions) against the limit', () => {
    const limit = total(rounds) + 100;
    expect(fitRounds(rounds, { limit, fixed: 0 }, tokensOf).shortened).toBe(0);
    expect(fitRounds(rounds, { limit, fixed: 4_000 }, tokensOf).shortened).toBe(1);
  });

  it('leaves short results alone: shortening them would not help', () => {
    const short = [
      text('user', 'x'.repeat(40_000)),
      call('a'),
      result('a', 'tiny'),
      call('b'),
      result('b', 'also'),
    ];
    const fit = fitRounds(short, { limit: 10, fixed: 0 }, tokensOf);
    expect(fit.shortened).toBe(0);
    expect(fit.messages).toBe(short);
  });

  it('keeps a surrogate pair whole at the cut', () => {
    const emoji = `${'a'.repeat(1_999)}😀${'b'.repeat(5_000)}`;
    expect(shortenedResult(emoji, 2_000)).toMatch(/^a{1999}\n\[… 5,002 characters/);
  });
});
