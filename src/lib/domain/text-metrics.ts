/**
 * Text metrics shared by every UI-facing payload (tools.md §13): `chars` counts Unicode scalar
 * values; `words` counts runs of letters/digits plus one word per CJK, kana or hangul character.
 */
const CJK =
  /[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\u3040-\u309F\u30A0-\u30FF\uFF66-\uFF9F\uAC00-\uD7AF\u1100-\u11FF\u3130-\u318F\u{20000}-\u{2EBEF}\u{30000}-\u{3134F}]/u;
const ALNUM = /[\p{L}\p{N}]/u;

export interface TextMetrics {
  chars: number;
  words: number;
}

export function countChars(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function countWords(text: string): number {
  let words = 0;
  let inWord = false;
  for (const ch of text) {
    if (CJK.test(ch)) {
      words++;
      inWord = false;
    } else if (ALNUM.test(ch)) {
      if (!inWord) words++;
      inWord = true;
    } else {
      inWord = false;
    }
  }
  return words;
}

export const textMetrics = (text: string): TextMetrics => ({
  chars: countChars(text),
  words: countWords(text),
});
