import { describe, expect, it } from 'vitest';
import { EMPTY_QUERY, queryCharacters, rowsOf, tagCounts } from '$lib/ui/characters/character-query';
import type { CharacterSummary } from '$lib/worker/protocol';

const character = (name: string, init: Partial<CharacterSummary> = {}): CharacterSummary => ({
  id: `id-${name}`,
  name,
  creator: '',
  tags: [],
  avatar: null,
  lorebookIds: [],
  createdAt: 0,
  updatedAt: 0,
  favorite: false,
  chats: 0,
  lastChattedAt: null,
  searchText: '',
  ...init,
});

const library = [
  character('Seraphina', {
    creator: 'Cohee',
    tags: ['Fantasy', 'Healer'],
    searchText: 'A guardian of the Eldoria forest.',
    createdAt: 3,
    chats: 4,
    lastChattedAt: 50,
  }),
  character('aqua', {
    tags: ['fantasy', 'Comedy'],
    favorite: true,
    createdAt: 1,
    chats: 9,
    lastChattedAt: 20,
  }),
  character('Megumin', { tags: ['Comedy'], searchText: 'Explosion magic only.', createdAt: 2 }),
];
const names = (list: CharacterSummary[]) => list.map((c) => c.name);

describe('queryCharacters', () => {
  it('sorts by name without regard to case, by last chat, by date added, by chats', () => {
    expect(names(queryCharacters(library, EMPTY_QUERY))).toEqual(['aqua', 'Megumin', 'Seraphina']);
    const by = (sort: (typeof EMPTY_QUERY)['sort']) =>
      names(queryCharacters(library, { ...EMPTY_QUERY, sort }));
    // Never chatted last.
    expect(by('lastChatted')).toEqual(['Seraphina', 'aqua', 'Megumin']);
    expect(by('added')).toEqual(['Seraphina', 'Megumin', 'aqua']);
    expect(by('chats')).toEqual(['aqua', 'Seraphina', 'Megumin']);
  });

  it('finds every word typed in the name, creator, tags or card text', () => {
    const find = (text: string) => names(queryCharacters(library, { ...EMPTY_QUERY, text }));
    expect(find('cohee')).toEqual(['Seraphina']);
    expect(find('  ELDORIA   guardian ')).toEqual(['Seraphina']);
    expect(find('explosion')).toEqual(['Megumin']);
    expect(find('comedy')).toEqual(['aqua', 'Megumin']);
    expect(find('comedy explosion')).toEqual(['Megumin']);
    expect(find('nobody')).toEqual([]);
  });

  it('keeps characters with every chosen tag (any case), and favourites only when asked', () => {
    const q = (tags: string[], favoritesOnly = false) =>
      names(queryCharacters(library, { ...EMPTY_QUERY, tags, favoritesOnly }));
    expect(q(['FANTASY'])).toEqual(['aqua', 'Seraphina']);
    expect(q(['fantasy', 'comedy'])).toEqual(['aqua']);
    expect(q([], true)).toEqual(['aqua']);
    expect(q(['Healer'], true)).toEqual([]);
  });
});

describe('tagCounts', () => {
  it('counts each tag once per character, case folded, the most used first', () => {
    expect(tagCounts([...library, character('Darkness', { tags: ['Comedy', 'comedy ', ''] })])).toEqual([
      { tag: 'Comedy', count: 3 },
      { tag: 'Fantasy', count: 2 },
      { tag: 'Healer', count: 1 },
    ]);
  });
});

describe('rowsOf', () => {
  it('cuts the list into rows of the grid’s columns, at least one', () => {
    expect(rowsOf([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(rowsOf([1, 2], 0)).toEqual([[1], [2]]);
    expect(rowsOf([], 3)).toEqual([]);
  });
});
