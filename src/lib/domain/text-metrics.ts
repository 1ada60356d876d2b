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

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Code units minus the surrogate pairs: a lone surrogate counts as one, as string iteration does. */
export function countChars(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1))) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

const OTHER = 0;
const LETTER = 1;
const IDEOGRAPH = 2;
type CharClass = typeof OTHER | typeof LETTER | typeof IDEOGRAPH;

/** Non-ASCII characters classified so far (a text repeats few of them). */
const classes = new Map<number, CharClass>();

function classOf(codePoint: number): CharClass {
  let known = classes.get(codePoint);
  if (known === undefined) {
    const ch = String.fromCodePoint(codePoint);
    known = CJK.test(ch) ? IDEOGRAPH : ALNUM.test(ch) ? LETTER : OTHER;
    if (classes.size < 65_536) classes.set(codePoint, known);
  }
  return known;
}

export function countWords(text: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let kind: CharClass;
    if (c < 0x80) {
      kind =
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ? LETTER : OTHER;
    } else if (isHighSurrogate(c) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      kind = classOf(text.codePointAt(i)!);
      i++;
    } else {
      kind = classOf(c);
    }
    if (kind === IDEOGRAPH) {
      words++;
      inWord = false;
    } else if (kind === LETTER) {
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
