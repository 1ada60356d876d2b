/**
 * Finds which of many phrases occur in a text in one pass over the text (an Aho-Corasick
 * automaton over UTF-16 code units). Activation uses it so that scanning a large lorebook costs
 * about one pass over the chat instead of one substring search per key.
 *
 * Nodes live in flat arrays (children as sibling lists, plus a direct table for ASCII children of
 * the root), which keeps building an index of thousands of keys to a few milliseconds.
 */
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
