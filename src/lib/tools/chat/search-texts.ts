/**
 * What `chat_search` keeps of the message texts it has scored, so that searching the same chat
 * again costs neither lowercasing nor full scans for words a message cannot contain. Entries are
 * found by the text itself, so an edited message is simply a new text (nothing can go stale), and
 * the texts kept longest are forgotten past a total of `MAX_CACHED_CHARS` (first in, first out:
 * reordering on every hit would cost more than the search it saves).
 *
 * For each form of a text (as is, or lowercased) a bitmap records which pairs of adjacent UTF-16
 * units occur, with units folded to 37 classes (`a`-`z` and `A`-`Z` alike, `0`-`9`, anything
 * else). A token one of whose pairs is missing cannot occur in the text.
 */

export const MAX_CACHED_CHARS = 16_000_000;

const CLASSES = 37;
const PAIR_WORDS = Math.ceil((CLASSES * CLASSES) / 32);

const unitClass = (c: number): number =>
  c >= 97 && c <= 122 ? c - 96 : c >= 65 && c <= 90 ? c - 64 : c >= 48 && c <= 57 ? c - 21 : 0;

/** Bit positions of the token's adjacent-unit pairs (empty for a one-unit token). */
export function tokenPairs(token: string): number[] {
  const pairs: number[] = [];
  for (let i = 1; i < token.length; i++)
    pairs.push(unitClass(token.charCodeAt(i - 1)) * CLASSES + unitClass(token.charCodeAt(i)));
  return pairs;
}

export function pairBitmap(text: string): Uint32Array {
  const bits = new Uint32Array(PAIR_WORDS);
  let previous = text.length > 0 ? unitClass(text.charCodeAt(0)) : 0;
  for (let i = 1; i < text.length; i++) {
    const current = unitClass(text.charCodeAt(i));
    const pair = previous * CLASSES + current;
    bits[pair >>> 5]! |= 1 << (pair & 31);
    previous = current;
  }
  return bits;
}

/** Whether every pair may occur (false: the token surely does not occur). */
export function mayContain(bits: Uint32Array, pairs: readonly number[]): boolean {
  for (const pair of pairs) if ((bits[pair >>> 5]! & (1 << (pair & 31))) === 0) return false;
  return true;
}

/** One form of a text, as searched. */
export interface SearchForm {
  text: string;
  pairs: Uint32Array;
}

interface Entry {
  raw?: SearchForm;
  lower?: SearchForm;
}

/** Texts by content, oldest first. */
export class SearchTexts {
  #entries = new Map<string, Entry>();
  #chars = 0;

  constructor(private readonly maxChars: number = MAX_CACHED_CHARS) {}

  /** `text` lowercased or as is, with its pair bitmap. */
  form(text: string, lower: boolean): SearchForm {
    let entry = this.#entries.get(text);
    if (!entry) {
      entry = {};
      this.#entries.set(text, entry);
      this.#chars += text.length;
      this.#evict();
    }
    if (lower) {
      if (!entry.lower) {
        const lowered = text.toLowerCase();
        entry.lower = { text: lowered, pairs: pairBitmap(lowered) };
      }
      return entry.lower;
    }
    return (entry.raw ??= { text, pairs: pairBitmap(text) });
  }

  get size(): number {
    return this.#entries.size;
  }

  #evict(): void {
    for (const text of this.#entries.keys()) {
      if (this.#chars <= this.maxChars || this.#entries.size === 1) return;
      this.#entries.delete(text);
      this.#chars -= text.length;
    }
  }
}
