/**
 * An index of the words of the texts `chat_search` has scored, so that searching the same chat
 * again costs about one lookup per message instead of a substring search per token and message.
 *
 * A word is a maximal run of the characters a query token is made of (`\p{Alphabetic}`, `\p{N}`,
 * `_`). Such a token occurs in a text exactly when it occurs inside one of the text's words, so the
 * texts containing a token are the postings of the vocabulary words that contain it; the
 * vocabulary is searched as one string. A token of two letters or digits is inside most words, so
 * it is answered from a bitmap of each text's adjacent pairs instead. Texts are found by content
 * (an edited message is a new text) and forgotten first in, first out past `maxChars`; once the
 * forgotten ones' postings outnumber the rest, the kept texts are indexed anew.
 *
 * There is one index per form of the texts (lowercased, or as is), as the scorer searches them.
 * Indexing a chat costs more than scanning it once, so a search that finds its texts not indexed
 * yet leaves them to `indexSoon`, which indexes them in slices between the worker's other work.
 */

/** Characters of text kept indexed, per form (the texts indexed first are forgotten first). */
export const MAX_CACHED_CHARS = 16_000_000;

const WORD_TOKEN = /^[\p{Alphabetic}\p{N}_]+$/u;
const WORD_CHAR = /[\p{Alphabetic}\p{N}_]/u;
/** Separates the vocabulary's words in its joined string; not a word character. */
const SEPARATOR = '\n';

/** Whether `token` is made of word characters only (then the index can answer for it). */
export const isWordToken = (token: string): boolean => WORD_TOKEN.test(token);

/** Per UTF-16 unit: 0 not classified yet, 1 a word character, 2 not (surrogate pairs: see `forEachWord`). */
const unitClasses = new Uint8Array(0x10000);
for (let c = 0; c < 128; c++) unitClasses[c] = WORD_CHAR.test(String.fromCharCode(c)) ? 1 : 2;

function isWordUnit(c: number): boolean {
  let k = unitClasses[c]!;
  if (k === 0) {
    k = WORD_CHAR.test(String.fromCharCode(c)) ? 1 : 2;
    unitClasses[c] = k;
  }
  return k === 1;
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;

/** Calls `visit(start, end, hash)` for each word of `text` (`hash`: FNV-1a over its UTF-16 units). */
function forEachWord(text: string, visit: (start: number, end: number, hash: number) => void): void {
  let start = -1;
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let word: boolean;
    let width = 1;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        word = WORD_CHAR.test(text.slice(i, i + 2));
        width = 2;
      } else word = false;
    } else word = isWordUnit(c);
    if (word) {
      if (start < 0) {
        start = i;
        h = FNV_OFFSET;
      }
      h = Math.imul(h ^ c, FNV_PRIME);
      if (width === 2) h = Math.imul(h ^ text.charCodeAt(i + 1), FNV_PRIME);
    } else if (start >= 0) {
      visit(start, i, h);
      start = -1;
    }
    i += width - 1;
  }
  if (start >= 0) visit(start, text.length, h);
}

/** Distinct words by id, found by hash without cutting the word out of its text first. */
class Vocabulary {
  readonly words: string[] = [];
  #hashes: number[] = [];
  /** Open addressing: word ids, -1 for a free slot; at most half full. */
  #table = new Int32Array(1024).fill(-1);

  /** The id of `text.slice(start, end)`, whose hash is `hash`, added when new. */
  id(text: string, start: number, end: number, hash: number): number {
    const length = end - start;
    const mask = this.#table.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const id = this.#table[slot]!;
      if (id < 0) {
        this.#table[slot] = this.words.length;
        this.words.push(text.slice(start, end));
        this.#hashes.push(hash);
        if (this.words.length * 2 > this.#table.length) this.#grow();
        return this.words.length - 1;
      }
      const word = this.words[id]!;
      if (this.#hashes[id] === hash && word.length === length && text.startsWith(word, start)) return id;
    }
  }

  #grow(): void {
    const table = new Int32Array(this.#table.length * 2).fill(-1);
    const mask = table.length - 1;
    this.#hashes.forEach((hash, id) => {
      let slot = hash & mask;
      while (table[slot]! >= 0) slot = (slot + 1) & mask;
      table[slot] = id;
    });
    this.#table = table;
  }
}

/** Index of a unit in `a`-`z`, `0`-`9` (0 to 35), or -1. */
const pairUnit = (c: number): number => (c >= 97 && c <= 122 ? c - 97 : c >= 48 && c <= 57 ? c - 22 : -1);
const PAIR_UNITS = 36;
const PAIR_WORDS = Math.ceil((PAIR_UNITS * PAIR_UNITS) / 32);

/** The bit of a two-unit token of `a`-`z`, `0`-`9` in a pair bitmap, or -1 for any other token. */
function exactPair(token: string): number {
  if (token.length !== 2) return -1;
  const a = pairUnit(token.charCodeAt(0));
  const b = pairUnit(token.charCodeAt(1));
  return a < 0 || b < 0 ? -1 : a * PAIR_UNITS + b;
}

/** Sets the bits of the two-unit strings of `a`-`z`, `0`-`9` in `text` (exact: no other unit is folded in). */
function setPairBits(text: string, bits: Uint32Array, at: number): void {
  let previous = text.length > 0 ? pairUnit(text.charCodeAt(0)) : -1;
  for (let i = 1; i < text.length; i++) {
    const current = pairUnit(text.charCodeAt(i));
    if (previous >= 0 && current >= 0) {
      const pair = previous * PAIR_UNITS + current;
      bits[at + (pair >>> 5)]! |= 1 << (pair & 31);
    }
    previous = current;
  }
}

class FormIndex {
  /** Text -> id, oldest first. */
  #ids = new Map<string, number>();
  #chars = 0;
  /** Per text id: how many distinct words its form has. */
  #counts: number[] = [];
  /** Per text id, `PAIR_WORDS` words: its pair bitmap (see `exactPair`). */
  #pairs = new Uint32Array(PAIR_WORDS * 1024);
  #vocab = new Vocabulary();
  /** Text ids per word id (forgotten texts included until the next compaction). */
  #postings: number[][] = [];
  /** Postings of kept and of forgotten texts. */
  #live = 0;
  #dead = 0;
  /** The vocabulary joined by `SEPARATOR`, and where each word starts; extended on use. */
  #joined = '';
  #starts: number[] = [];
  /** Per word id: the last text id that listed it (dedupes a text's words). */
  #lastText: number[] = [];

  constructor(
    private readonly transform: (text: string) => string,
    private readonly maxChars: number,
  ) {}

  get size(): number {
    return this.#ids.size;
  }

  /** Text ids are below this. */
  get idLimit(): number {
    return this.#counts.length;
  }

  /** Pair bitmaps, `PAIR_WORDS` words from `id * PAIR_WORDS` for each text id. */
  get pairs(): Uint32Array {
    return this.#pairs;
  }

  /**
   * Once forgotten texts' postings outnumber the others, indexes the kept texts again, as if they
   * came first (not within one search: the ids it gave out stay valid until then).
   */
  compact(): void {
    if (this.#dead <= this.#live) return;
    this.#counts = [];
    this.#pairs = new Uint32Array(PAIR_WORDS * 1024);
    this.#vocab = new Vocabulary();
    this.#postings = [];
    this.#live = 0;
    this.#dead = 0;
    this.#joined = '';
    this.#starts = [];
    this.#lastText = [];
    for (const text of this.#ids.keys()) this.#ids.set(text, this.#add(text));
  }

  /** The text's id, or -1 when it is not indexed. */
  known(text: string): number {
    return this.#ids.get(text) ?? -1;
  }

  /** The text's id, indexing it first if it is new. */
  id(text: string): number {
    const known = this.#ids.get(text);
    if (known !== undefined) return known;
    const id = this.#add(text);
    this.#ids.set(text, id);
    this.#chars += text.length;
    this.#evict();
    return id;
  }

  /** Indexes `text` under the next id. */
  #add(text: string): number {
    const id = this.#counts.length;
    const form = this.transform(text);
    let count = 0;
    forEachWord(form, (start, end, hash) => {
      if (this.#wordId(form, start, end, hash, id) >= 0) count++;
    });
    this.#counts.push(count);
    this.#live += count;
    if ((id + 1) * PAIR_WORDS > this.#pairs.length) {
      const grown = new Uint32Array(this.#pairs.length * 2);
      grown.set(this.#pairs);
      this.#pairs = grown;
    }
    setPairBits(form, this.#pairs, id * PAIR_WORDS);
    return id;
  }

  /** The id of `form.slice(start, end)`, with `text` in its postings; -1 when the text already listed it. */
  #wordId(form: string, start: number, end: number, hash: number, text: number): number {
    const id = this.#vocab.id(form, start, end, hash);
    if (id === this.#postings.length) {
      this.#postings.push([]);
      this.#lastText.push(-1);
    }
    if (this.#lastText[id] === text) return -1;
    this.#lastText[id] = text;
    this.#postings[id]!.push(text);
    return id;
  }

  #evict(): void {
    for (const [text, id] of this.#ids) {
      if (this.#chars <= this.maxChars || this.#ids.size === 1) return;
      this.#ids.delete(text);
      this.#chars -= text.length;
      this.#live -= this.#counts[id]!;
      this.#dead += this.#counts[id]!;
    }
  }

  /** Calls `visit` with the postings of every vocabulary word containing `token`. */
  forEachPosting(token: string, visit: (postings: readonly number[]) => void): void {
    this.#extendJoined();
    const joined = this.#joined;
    const starts = this.#starts;
    for (let at = joined.indexOf(token); at >= 0;) {
      // The last word starting at or before `at`.
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (starts[mid]! <= at) lo = mid;
        else hi = mid - 1;
      }
      visit(this.#postings[lo]!);
      if (lo + 1 >= starts.length) return;
      at = joined.indexOf(token, starts[lo + 1]!);
    }
  }

  #extendJoined(): void {
    const from = this.#starts.length;
    const words = this.#vocab.words;
    if (from === words.length) return;
    let position = this.#joined.length + (from > 0 ? SEPARATOR.length : 0);
    for (let w = from; w < words.length; w++) {
      this.#starts.push(position);
      position += words[w]!.length + SEPARATOR.length;
    }
    const added = words.slice(from).join(SEPARATOR);
    this.#joined = from > 0 ? `${this.#joined}${SEPARATOR}${added}` : added;
  }
}

/** How long one slice of background indexing may hold the thread. */
const SLICE_MS = 4;

export class WordIndex {
  #lower: FormIndex;
  #raw: FormIndex;
  /** Per form: the texts left to index in the background (the latest search's), and where it is. */
  #pending = new Map<FormIndex, { texts: readonly string[]; next: number }>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #settled: (() => void)[] = [];

  constructor(maxChars: number = MAX_CACHED_CHARS) {
    this.#lower = new FormIndex((t) => t.toLowerCase(), maxChars);
    this.#raw = new FormIndex((t) => t, maxChars);
  }

  /**
   * Indexes `texts` in one form in slices of a few milliseconds, each after the worker's waiting
   * work. A later call for the same form replaces what is left of an earlier one.
   */
  indexSoon(texts: readonly string[], lower: boolean): void {
    this.#pending.set(lower ? this.#lower : this.#raw, { texts, next: 0 });
    this.#timer ??= setTimeout(() => this.#slice(), 0);
  }

  /** Resolves once the texts left by `indexSoon` are indexed. */
  settled(): Promise<void> {
    if (this.#timer === undefined) return Promise.resolve();
    return new Promise((resolve) => this.#settled.push(resolve));
  }

  #slice(): void {
    const until = performance.now() + SLICE_MS;
    for (const [form, work] of this.#pending) {
      while (work.next < work.texts.length && performance.now() < until) {
        // Checked every few texts: a clock read costs about as much as indexing a short message.
        for (let n = 0; n < 8 && work.next < work.texts.length; n++) form.id(work.texts[work.next++]!);
      }
      if (work.next < work.texts.length) break;
      this.#pending.delete(form);
    }
    if (this.#pending.size > 0) {
      this.#timer = setTimeout(() => this.#slice(), 0);
      return;
    }
    this.#timer = undefined;
    for (const resolve of this.#settled.splice(0)) resolve();
  }

  /** Texts kept in one form's index. */
  size(lower: boolean): number {
    return (lower ? this.#lower : this.#raw).size;
  }

  /**
   * For each text, the summed weight of the tokens that occur in its form (lowercased when
   * `lower`); null when some token is not a word token (see `isWordToken`), or, with `indexed`,
   * when some text is not indexed yet (else it is indexed first).
   */
  matchedWeights(
    texts: readonly string[],
    tokens: readonly string[],
    weights: readonly number[],
    lower: boolean,
    indexed = false,
  ): Float64Array | null {
    if (!tokens.every(isWordToken)) return null;
    const form = lower ? this.#lower : this.#raw;
    form.compact();
    const ids = new Int32Array(texts.length);
    for (let i = 0; i < texts.length; i++) {
      const id = indexed ? form.known(texts[i]!) : form.id(texts[i]!);
      if (id < 0) return null;
      ids[i] = id;
    }
    const matched = new Float64Array(form.idLimit);
    // A pair of letters or digits is in nearly every text's words: the pair bitmaps answer faster.
    const pairTokens: { bit: number; weight: number }[] = [];
    tokens.forEach((token, t) => {
      const bit = exactPair(token);
      if (bit >= 0) pairTokens.push({ bit, weight: weights[t]! });
    });
    if (pairTokens.length > 0) {
      const bits = form.pairs;
      const done = new Uint8Array(form.idLimit);
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        if (done[id] === 1) continue;
        done[id] = 1;
        const at = id * PAIR_WORDS;
        for (const { bit, weight } of pairTokens)
          if ((bits[at + (bit >>> 5)]! & (1 << (bit & 31))) !== 0) matched[id]! += weight;
      }
    }
    const seen = new Int32Array(form.idLimit);
    tokens.forEach((token, t) => {
      if (exactPair(token) >= 0) return;
      const weight = weights[t]!;
      const stamp = t + 1;
      form.forEachPosting(token, (postings) => {
        for (const id of postings)
          if (seen[id] !== stamp) {
            seen[id] = stamp;
            matched[id]! += weight;
          }
      });
    });
    const out = new Float64Array(texts.length);
    for (let i = 0; i < texts.length; i++) out[i] = matched[ids[i]!]!;
    return out;
  }
}
