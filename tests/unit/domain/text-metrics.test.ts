import { describe, expect, it } from 'vitest';
import { countChars, countWords, textMetrics } from '$lib/domain/text-metrics';

describe('countChars', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['héllo', 5],
    ['日本語', 3],
    ['🎉', 1],
    ['a🎉b', 3],
    ['e\u0301', 2],
    ['\r\n', 2],
    ['\u{20000}', 1],
  ])('counts %j as %i Unicode scalar values', (text, n) => expect(countChars(text)).toBe(n));
});

describe('countWords', () => {
  it.each([
    ['', 0],
    ['   \n\t', 0],
    ['hello world', 2],
    ['hello, world!', 2],
    ["don't", 2],
    ['snake_case', 2],
    ['v2 r2d2 2024', 3],
    ['héllo wörld', 2],
    ['Привет мир', 2],
    ['中文字', 3],
    ['hello世界', 3],
    ['日本語abc', 4],
    ['ひらがな', 4],
    ['カタカナ', 4],
    ['ｱｲｳ', 3],
    ['안녕 하세요', 5],
    ['ᄀᄁ', 2],
    ['ㄱㄴ', 2],
    ['\u{20000}\u{2EBE0}\u{30000}', 3],
    ['豈', 1],
    ['ＡＢＣ', 1],
    ['🎉 party 🎉', 1],
  ])('counts %j as %i words', (text, n) => expect(countWords(text)).toBe(n));
});

describe('textMetrics', () => {
  it('combines both counts', () => {
    expect(textMetrics('Hello 世界!\n')).toEqual({ chars: 10, words: 3 });
  });
});

/** The definition, one Unicode scalar value at a time, as tools.md §13 states it. */
function byDefinition(text: string) {
  const cjk =
    /[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\u3040-\u309F\u30A0-\u30FF\uFF66-\uFF9F\uAC00-\uD7AF\u1100-\u11FF\u3130-\u318F\u{20000}-\u{2EBEF}\u{30000}-\u{3134F}]/u;
  let chars = 0;
  let words = 0;
  let inWord = false;
  for (const ch of text) {
    chars++;
    if (cjk.test(ch)) {
      words++;
      inWord = false;
    } else if (/[\p{L}\p{N}]/u.test(ch)) {
      if (!inWord) words++;
      inWord = true;
    } else inWord = false;
  }
  return { chars, words };
}

describe('textMetrics against its definition', () => {
  const alphabet = [
    'a',
    'Z',
    '0',
    ' ',
    '\n',
    '_',
    "'",
    'é',
    'ß',
    'Ж',
    '日',
    'ひ',
    'ｱ',
    '한',
    'ᄀ',
    '٣',
    '🎉',
    '\u{20000}',
    '\u{1D400}',
    '\uD800',
    '\uDC00',
    '\uFFFF',
    '\u0301',
    '\u00A0',
    '中',
    'Ａ',
    '-',
  ];
  it('agrees on random texts with astral characters, combining marks and lone surrogates', () => {
    let seed = 7;
    const next = () => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0), seed);
    for (let round = 0; round < 500; round++) {
      let text = '';
      const length = next() % 40;
      for (let i = 0; i < length; i++) text += alphabet[next() % alphabet.length];
      expect(textMetrics(text), JSON.stringify(text)).toEqual(byDefinition(text));
    }
  });
});
