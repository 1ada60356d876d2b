import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isWordToken, WordIndex } from '$lib/tools/chat/word-index';

/** What the index must answer: per text, the weights of the tokens its form contains. */
function plainWeights(
  texts: readonly string[],
  tokens: readonly string[],
  weights: readonly number[],
  lower: boolean,
): number[] {
  return texts.map((text) => {
    const form = lower ? text.toLowerCase() : text;
    return tokens.reduce((sum, token, i) => sum + (form.includes(token) ? weights[i]! : 0), 0);
  });
}

// Letters of both cases, digits, `_`, separators, accented and CJK letters, `İ` (two units once
// lowercased), a combining mark, an astral letter and lone surrogate halves.
const unit = fc.constantFrom(
  'a',
  'b',
  'B',
  'z',
  '0',
  '9',
  '_',
  ' ',
  '-',
  'é',
  'É',
  'İ',
  '\u0307',
  '猫',
  '𝐀',
  '\uD835',
  '\uDC00',
);
const text = fc.string({ unit, maxLength: 30 });
const token = fc.string({ unit, minLength: 1, maxLength: 4 }).filter(isWordToken);

describe('isWordToken', () => {
  it.each([
    ['dragon', true],
    ['猫の', true],
    ['a_1', true],
    ['𝐀b', true],
    ['', false],
    ['a b', false],
    ['a-b', false],
    ['\uD835', false],
  ])('%j: %s', (t, expected) => {
    expect(isWordToken(t)).toBe(expected);
  });
});

describe('WordIndex', () => {
  it('answers as a substring search of every text, whatever it indexed before', () => {
    const index = new WordIndex();
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 6 }),
        fc.array(token, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (texts, tokens, lower) => {
          const weights = tokens.map((_, i) => i + 1);
          const got = index.matchedWeights(texts, tokens, weights, lower);
          expect(got && [...got]).toEqual(plainWeights(texts, tokens, weights, lower));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('still answers exactly while it forgets texts and drops their postings', () => {
    const index = new WordIndex(40);
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 8 }),
        fc.array(token, { minLength: 1, maxLength: 3 }),
        (texts, tokens) => {
          const weights = tokens.map(() => 2);
          const got = index.matchedWeights(texts, tokens, weights, true);
          expect(got && [...got]).toEqual(plainWeights(texts, tokens, weights, true));
          // The newest text is kept even when it alone passes the limit.
          if (texts.length > 0) expect(index.size(true)).toBeGreaterThan(0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('answers for the new text of an edited message', () => {
    const index = new WordIndex();
    expect([...index.matchedWeights(['the old lamp'], ['lamp', 'la'], [4, 2], true)!]).toEqual([6]);
    expect([...index.matchedWeights(['the old door'], ['lamp', 'la'], [4, 2], true)!]).toEqual([0]);
    expect([...index.matchedWeights(['the old lamp'], ['lamp', 'la'], [4, 2], true)!]).toEqual([6]);
  });

  it('counts a text given twice once per position, and a token given twice twice', () => {
    const index = new WordIndex();
    const got = index.matchedWeights(['Red fox', 'red fox', 'Red fox'], ['re', 're', 'fox'], [2, 2, 3], true);
    expect([...got!]).toEqual([7, 7, 7]);
  });

  it('keeps the lowercased and the unchanged forms apart', () => {
    const index = new WordIndex();
    expect([...index.matchedWeights(['ÄPFEL äpfel'], ['äp'], [1], false)!]).toEqual([1]);
    expect([...index.matchedWeights(['ÄPFEL'], ['äp'], [1], false)!]).toEqual([0]);
    expect([...index.matchedWeights(['ÄPFEL'], ['äp'], [1], true)!]).toEqual([1]);
    expect([index.size(false), index.size(true)]).toEqual([2, 1]);
  });

  it('answers only for indexed texts when asked to, and indexes them in the background', async () => {
    const index = new WordIndex();
    const texts = Array.from({ length: 3_000 }, (_, i) => `message ${i} about the lamp`);
    expect(index.matchedWeights(texts, ['lamp'], [4], true, true)).toBeNull();
    index.indexSoon(texts, true);
    expect(index.size(true)).toBe(0);
    await index.settled();
    expect(index.size(true)).toBe(3_000);
    const got = index.matchedWeights(texts, ['lamp', '299'], [4, 3], true, true);
    expect(got && [...got]).toEqual(plainWeights(texts, ['lamp', '299'], [4, 3], true));
  });

  it('keeps only the latest texts left to index for a form', async () => {
    const index = new WordIndex();
    index.indexSoon(['an old chat'], true);
    index.indexSoon(['a new chat', 'and more'], true);
    index.indexSoon(['Kept As Is'], false);
    await index.settled();
    expect([index.size(true), index.size(false)]).toEqual([2, 1]);
    expect(index.matchedWeights(['an old chat'], ['old'], [3], true, true)).toBeNull();
  });

  it('does not answer for tokens with characters outside words', () => {
    expect(new WordIndex().matchedWeights(['a b'], ['a b'], [3], true)).toBeNull();
  });
});
