/**
 * Finds which of many phrases occur in a text in one pass over the text (an Aho-Corasick
 * automaton over UTF-16 code units). Activation uses it so that scanning a large lorebook costs
 * about one pass over the chat instead of one substring search per key.
 *
 * Nodes live in flat arrays (children as sibling lists, plus a direct table for ASCII children of
 * the root), which keeps building an index of thousands of keys to a few milliseconds. Unless the
 * phrases use too many distinct characters, the automaton is then completed into a table of one
 * transition per node and character of the phrases (any other character leads back to the root),
 * so the scan costs one lookup per character.
 */

/** Most cells (nodes × (distinct characters + 1)) of the transition table: 16 MB. */
const MAX_TABLE_CELLS = 4_000_000;
export class PhraseIndex {
  #firstChild: number[] = [-1];
  #nextSibling: number[] = [-1];
  #label: number[] = [0];
  #fail: number[] = [0];
  /** The nearest node on the failure chain (itself included) that ends a phrase, or -1. */
  #outLink: number[] = [-1];
  /** Phrase ids ending exactly at a node. */
  #out = new Map<number, number[]>();
  #rootAscii = new Int32Array(128).fill(-1);
  /** Character code -> symbol (1-based; 0: in no phrase), for the transition table. */
  #asciiSymbol = new Int32Array(128);
  #symbols = new Map<number, number>();
  #width = 0;
  #table: Int32Array | null = null;
  /** With the table: ids of the phrases found on reaching a node. */
  #ends: (number[] | undefined)[] = [];

  constructor(phrases: readonly string[]) {
    phrases.forEach((phrase, id) => {
      if (phrase === '') return;
      let node = 0;
      for (let i = 0; i < phrase.length; i++) node = this.#childOrAdd(node, phrase.charCodeAt(i));
      const ends = this.#out.get(node);
      if (ends) ends.push(id);
      else this.#out.set(node, [id]);
    });
    // Breadth-first: failure links and output links.
    const queue: number[] = [];
    for (let c = this.#firstChild[0]!; c !== -1; c = this.#nextSibling[c]!) queue.push(c);
    for (let q = 0; q < queue.length; q++) {
      const u = queue[q]!;
      this.#outLink[u] = this.#out.has(u) ? u : this.#outLink[this.#fail[u]!]!;
      for (let v = this.#firstChild[u]!; v !== -1; v = this.#nextSibling[v]!) {
        const c = this.#label[v]!;
        let f = this.#fail[u]!;
        let target = this.#child(f, c);
        while (target === -1 && f !== 0) {
          f = this.#fail[f]!;
          target = this.#child(f, c);
        }
        this.#fail[v] = target === -1 ? 0 : target;
        queue.push(v);
      }
    }
    this.#buildTable(phrases, queue);
  }

  /** Transition table rows in breadth-first order, so a node's failure row is already complete. */
  #buildTable(phrases: readonly string[], order: readonly number[]): void {
    for (const phrase of phrases)
      for (let i = 0; i < phrase.length; i++) {
        const c = phrase.charCodeAt(i);
        if (!this.#symbols.has(c)) this.#symbols.set(c, this.#symbols.size + 1);
      }
    const width = this.#symbols.size + 1;
    if (this.#label.length * width > MAX_TABLE_CELLS) return;
    for (const [c, symbol] of this.#symbols) if (c < 128) this.#asciiSymbol[c] = symbol;
    const table = new Int32Array(this.#label.length * width);
    for (const u of [0, ...order]) {
      const row = u * width;
      const failRow = this.#fail[u]! * width;
      if (u !== 0) table.set(table.subarray(failRow, failRow + width), row);
      for (let v = this.#firstChild[u]!; v !== -1; v = this.#nextSibling[v]!)
        table[row + this.#symbols.get(this.#label[v]!)!] = v;
    }
    // Every phrase ending at a node, its failure chain included.
    for (const u of order) {
      const own = this.#out.get(u);
      const inherited = this.#ends[this.#fail[u]!];
      if (own || inherited) this.#ends[u] = [...(own ?? []), ...(inherited ?? [])];
    }
    this.#width = width;
    this.#table = table;
  }

  #child(node: number, c: number): number {
    if (node === 0 && c < 128) return this.#rootAscii[c]!;
    for (let k = this.#firstChild[node]!; k !== -1; k = this.#nextSibling[k]!)
      if (this.#label[k] === c) return k;
    return -1;
  }

  #childOrAdd(node: number, c: number): number {
    const existing = this.#child(node, c);
    if (existing !== -1) return existing;
    const k = this.#label.length;
    this.#label.push(c);
    this.#firstChild.push(-1);
    this.#nextSibling.push(this.#firstChild[node]!);
    this.#fail.push(0);
    this.#outLink.push(-1);
    this.#firstChild[node] = k;
    if (node === 0 && c < 128) this.#rootAscii[c] = k;
    return k;
  }

  /** Ids of the phrases that occur in `text`. */
  scan(text: string): Set<number> {
    const found = new Set<number>();
    const table = this.#table;
    if (table) {
      const width = this.#width;
      let node = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        const symbol = c < 128 ? this.#asciiSymbol[c]! : (this.#symbols.get(c) ?? 0);
        node = table[node * width + symbol]!;
        const ends = this.#ends[node];
        if (ends) for (const id of ends) found.add(id);
      }
      return found;
    }
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      let next = this.#child(node, c);
      while (next === -1 && node !== 0) {
        node = this.#fail[node]!;
        next = this.#child(node, c);
      }
      node = next === -1 ? 0 : next;
      for (let n = this.#outLink[node]!; n !== -1; n = this.#outLink[this.#fail[n]!]!) {
        for (const id of this.#out.get(n)!) found.add(id);
      }
    }
    return found;
  }
}
