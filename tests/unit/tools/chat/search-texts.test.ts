import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countChars } from '$lib/domain/text-metrics';
import { tokenScorer, tokenWeight } from '$lib/tools/chat/search';
import { mayContain, pairBitmap, SearchTexts, tokenPairs } from '$lib/tools/chat/search-texts';

/** The scorer with nothing remembered: lowercase and `indexOf` every token. */
function plainScore(tokens: string[], text: string): { score: number; matchAt: number } {
  const weights = tokens.map(tokenWeight);
  const total = weights.reduce((a, b) => a + b, 0);
  if (text.trim() === '' || total === 0) return { score: 0, matchAt: -1 };
  const haystack = tokens.some((t) => /[A-Za-z]/.test(t)) ? text.toLowerCase() : text;
  let matched = 0;
  let first = -1;
  tokens.forEach((token, i) => {
    const at = haystack.indexOf(token);
    if (at < 0) return;
    matched += weights[i]!;
    if (first < 0 || at < first) first = at;
  });
  return { score: matched / total, matchAt: first < 0 ? -1 : countChars(haystack.slice(0, first)) };
}

const unit = fc.constantFrom('a', 'B', 'z', '0', '9', '_', ' ', 'é', 'İ', '猫', '\uD83D', '\uDC08');

describe('pair bitmaps', () => {
  it('never rule out a token that occurs', () => {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), fc.nat(40), fc.nat(6), (text, at, length) => {
        const token = text.slice(at, at + length);
        expect(mayContain(pairBitmap(text), tokenPairs(token))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('rule out a token with a pair the text lacks', () => {
    expect(mayContain(pairBitmap('the harbor'), tokenPairs('treaty'))).toBe(false);
    expect(mayContain(pairBitmap('the harbor'), tokenPairs('harb'))).toBe(true);
  });
});

describe('SearchTexts', () => {
  it('scores exactly as a fresh scan, whatever was searched before', () => {
    const texts = new SearchTexts();
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit, minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.string({ unit, maxLength: 30 }), { maxLength: 5 }),
        (tokens, messages) => {
          const scorer = tokenScorer(tokens, texts);
          for (const m of messages) expect(scorer(m)).toEqual(plainScore(tokens, m));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('follows an edited message: the new text is looked up, not the old one', () => {
    const texts = new SearchTexts();
    const scorer = tokenScorer(['lamp'], texts);
    expect(scorer('a lamp').score).toBe(1);
    expect(scorer('a door').score).toBe(0);
    expect(scorer('a lamp').score).toBe(1);
  });

  it('keeps both forms of a text apart', () => {
    const texts = new SearchTexts();
    expect(texts.form('Kelvin K', true).text).toBe('kelvin k');
    expect(texts.form('Kelvin K', false).text).toBe('Kelvin K');
    expect(texts.size).toBe(1);
  });

  it('forgets the oldest texts past its size, and still scores them when they come back', () => {
    const texts = new SearchTexts(10);
    texts.form('aaaa', true);
    texts.form('bbbb', true);
    texts.form('cccc', true); // 12 characters: 'aaaa' goes
    expect(texts.size).toBe(2);
    const scorer = tokenScorer(['aa'], texts);
    expect(scorer('aaaa')).toEqual({ score: 1, matchAt: 0 }); // scanned again; 'bbbb' goes
    expect(texts.size).toBe(2);
    expect(tokenScorer(['bb'], texts)('bbbb').score).toBe(1);
    texts.form('a very long text', true); // alone over the limit: kept alone
    expect(texts.size).toBe(1);
  });
});
