import { describe, expect, it } from 'vitest';
import { createTokenizers, openAiCounter, openAiEncodingOf } from '$lib/adapters/tokenizer/tokenizers';
import { calibrate, estimateCounter } from '$lib/chat/prompt/estimate';

const settings = () => {
  const map = new Map<string, unknown>();
  return {
    get: async <T>(k: string) => map.get(k) as T | undefined,
    set: async <T>(k: string, v: T) => void map.set(k, v),
  };
};

describe('tokenizers', () => {
  it('OpenAI models get their encoding; others none', () => {
    expect(openAiEncodingOf('gpt-4o-mini')).toBe('o200k_base');
    expect(openAiEncodingOf('openai/gpt-5')).toBe('o200k_base');
    expect(openAiEncodingOf('o3-mini')).toBe('o200k_base');
    expect(openAiEncodingOf('gpt-4-turbo')).toBe('cl100k_base');
    expect(openAiEncodingOf('claude-sonnet-4')).toBeNull();
    expect(openAiEncodingOf('gemini-2.5-pro')).toBeNull();
  });

  it('counts with the real encodings (o200k and cl100k differ on the same text)', async () => {
    const o200k = await openAiCounter('o200k_base');
    const cl100k = await openAiCounter('cl100k_base');
    expect(o200k.count('hello world')).toBe(2);
    expect(o200k.count('')).toBe(0);
    const text = 'Привет, мир! Seraphina tends the glade of Eldoria. 你好世界';
    expect(o200k.count(text)).not.toBe(cl100k.count(text));
  });

  it('the estimate counts wide characters one each and the rest by the ratio', () => {
    const e = estimateCounter(4);
    expect(e.count('abcdefgh')).toBe(2);
    expect(e.count('你好世界')).toBe(4);
    expect(e.count('')).toBe(0);
  });

  it('calibration moves halfway to what the provider reported, within 1-8', () => {
    // estimated 100 tokens at 3.3 chars/token = 330 chars; provider says 80 tokens: 4.125 observed.
    expect(calibrate(3.3, 100, 80)).toBeCloseTo((3.3 + 4.125) / 2, 6);
    expect(calibrate(3.3, 100, 0)).toBe(3.3);
    expect(calibrate(7.9, 1, 1000_000)).toBeGreaterThanOrEqual(1);
    expect(calibrate(7.9, 1000_000, 1)).toBe(8);
  });

  it('an estimate for a model is corrected by what its provider reports; an exact one is not', async () => {
    const t = createTokenizers(settings());
    const before = (await t.forModel('claude-x')).count('a'.repeat(330));
    await t.observe('claude-x', before, 80);
    const after = (await t.forModel('claude-x')).count('a'.repeat(330));
    expect(before).toBe(100);
    expect(after).toBeLessThan(before);
    expect(after).toBeGreaterThan(80);
    await t.observe('gpt-4o', 100, 1);
    expect((await t.forModel('gpt-4o')).name).toBe('o200k_base');
  });
});
