/**
 * Seeded randomness for the chat layer. Nothing here reads a clock or `Math.random`: the same seed
 * gives the same numbers on every machine, so a run's lorebook activation and macro rolls can be
 * reproduced from its recorded seed.
 */

/** 32-bit hash of a string (FNV-1a over UTF-16 code units, then a murmur3-style finaliser). */
export function hash32(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A generator of floats in [0, 1) from a 32-bit state (the mulberry32 construction). */
function generator(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stream of floats in [0, 1) fully determined by `seed`. */
export function createRng(seed: string | number): () => number {
  return generator(hash32(String(seed)));
}

/**
 * One float in [0, 1) determined by the seed and a list of parts (a "named draw"). Unlike a shared
 * stream, a draw does not depend on how many other draws happened before it, so adding an unrelated
 * lorebook entry does not change the roll of another.
 */
export function seededUnit(seed: string | number, ...parts: readonly (string | number)[]): number {
  const key = [String(seed), ...parts.map(String)].join('\u0000');
  return generator(hash32(key, 0x9e3779b9))();
}
