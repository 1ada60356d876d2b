import type { CharacterSummary } from '$lib/worker/protocol';

/**
 * What the Characters page shows of a library of hundreds of cards: the ones whose name, creator,
 * tags or card text hold every word typed, with every chosen tag, favourites only if asked, in
 * the chosen order.
 */

export const CHARACTER_SORTS = ['name', 'lastChatted', 'added', 'chats'] as const;
export type CharacterSort = (typeof CHARACTER_SORTS)[number];

export const SORT_LABELS: Record<CharacterSort, string> = {
  name: 'Name',
  lastChatted: 'Last chatted',
  added: 'Date added',
  chats: 'Most chats',
};

export interface CharacterQuery {
  text: string;
  /** A character must have each of these tags. */
  tags: readonly string[];
  favoritesOnly: boolean;
  sort: CharacterSort;
}

export const EMPTY_QUERY: CharacterQuery = { text: '', tags: [], favoritesOnly: false, sort: 'name' };

const haystacks = new WeakMap<CharacterSummary, string>();

/** The lowercased text a summary is searched in, built once per summary. */
function haystackOf(c: CharacterSummary): string {
  let text = haystacks.get(c);
  if (text === undefined) {
    text = [c.name, c.creator, ...c.tags, c.searchText].join('\n').toLowerCase();
    haystacks.set(c, text);
  }
  return text;
}

const byName = (a: CharacterSummary, b: CharacterSummary) =>
  a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }) ||
  (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const ORDER: Record<CharacterSort, (a: CharacterSummary, b: CharacterSummary) => number> = {
  name: byName,
  lastChatted: (a, b) => (b.lastChattedAt ?? -1) - (a.lastChattedAt ?? -1) || byName(a, b),
  added: (a, b) => b.createdAt - a.createdAt || byName(a, b),
  chats: (a, b) => b.chats - a.chats || byName(a, b),
};

export function queryCharacters(
  characters: readonly CharacterSummary[],
  query: CharacterQuery,
): CharacterSummary[] {
  const words = query.text.toLowerCase().split(/\s+/).filter(Boolean);
  const tags = query.tags.map((t) => t.toLowerCase());
  return characters
    .filter((c) => {
      if (query.favoritesOnly && !c.favorite) return false;
      if (tags.length > 0) {
        const own = new Set(c.tags.map((t) => t.toLowerCase()));
        if (!tags.every((t) => own.has(t))) return false;
      }
      if (words.length === 0) return true;
      const text = haystackOf(c);
      return words.every((w) => text.includes(w));
    })
    .sort(ORDER[query.sort]);
}

/** Every tag of the library with how many characters have it, the most used first. */
export function tagCounts(characters: readonly CharacterSummary[]): { tag: string; count: number }[] {
  const counts = new Map<string, { tag: string; count: number }>();
  for (const c of characters) {
    const own = new Map(
      c.tags
        .map((t) => t.trim())
        .filter(Boolean)
        .map((t) => [t.toLowerCase(), t]),
    );
    for (const [key, tag] of own) {
      const seen = counts.get(key);
      if (seen) seen.count++;
      else counts.set(key, { tag, count: 1 });
    }
  }
  return [...counts.values()].sort(
    (a, b) => b.count - a.count || a.tag.localeCompare(b.tag, undefined, { sensitivity: 'base' }),
  );
}

/** Consecutive characters in rows of `columns` (the virtual grid renders a row at a time). */
export function rowsOf<T>(items: readonly T[], columns: number): T[][] {
  const n = Math.max(1, Math.floor(columns));
  const rows: T[][] = [];
  for (let i = 0; i < items.length; i += n) rows.push(items.slice(i, i + n));
  return rows;
}
