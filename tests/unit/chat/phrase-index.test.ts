import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PhraseIndex } from '$lib/chat/phrase-index';

const brute = (phrases: string[], text: string) =>
  new Set(phrases.flatMap((p, id) => (p !== '' && text.includes(p) ? [id] : [])));

describe('PhraseIndex', () => {
  it('finds overlapping and nested phrases', () => {
    const phrases = ['he', 'she', 'his', 'hers', 'ushers', 'x', 'é猫', '🐈'];
    expect(new PhraseIndex(phrases).scan('ushers and é猫 🐈')).toEqual(brute(phrases, 'ushers and é猫 🐈'));
  });

  it('handles duplicates and empty phrases', () => {
    const idx = new PhraseIndex(['a', 'a', '', 'ab']);
    expect(idx.scan('zab')).toEqual(new Set([0, 1, 3]));
    expect(new PhraseIndex([]).scan('anything')).toEqual(new Set());
  });

  it('agrees with a substring search on any input', () => {
    const small = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é', '\u0001'), maxLength: 5 });
    fc.assert(
      fc.property(
        fc.array(small, { maxLength: 30 }),
        fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é', ' '), maxLength: 60 }),
        (phrases, text) => {
          expect(new PhraseIndex(phrases).scan(text)).toEqual(brute(phrases, text));
        },
      ),
      { numRuns: 500 },
    );
  });
  it('agrees with a substring search when the phrases use too many characters for a table', () => {
    // 2,100 distinct characters: (nodes × characters) passes the table's limit.
    const chars = Array.from({ length: 2_100 }, (_, i) => String.fromCharCode(0x4e00 + i));
    const phrases = [...chars, `${chars[5]}${chars[6]}`, `${chars[6]}${chars[5]}${chars[7]}`, 'ab'];
    const text = `x${chars[6]}${chars[5]}${chars[7]}ab${chars[2_099]}`;
    expect(new PhraseIndex(phrases).scan(text)).toEqual(brute(phrases, text));
  });
});
