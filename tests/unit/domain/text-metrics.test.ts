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
