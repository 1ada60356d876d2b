import { describe, expect, it } from 'vitest';
import {
  LorebookSchema,
  exportCharacterBook,
  exportWorldInfo,
  newLorebookEntry,
  parseCharacterBook,
  parseWorldInfo,
  type Lorebook,
} from '$lib/chat/lorebook';
import { fixtureJson } from './helpers';

const must = <T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }): T => {
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

describe('parseWorldInfo', () => {
  const json = fixtureJson('world-info.json') as { entries: Record<string, Record<string, unknown>> };

  it('reads every SillyTavern field', () => {
    const book = must(parseWorldInfo(json, 'Ashfall'));
    expect(LorebookSchema.safeParse(book).success).toBe(true);
    expect(book.name).toBe('Ashfall');
    expect(book.entries.map((e) => e.uid)).toEqual([0, 1, 5]);
    expect(book.entries[0]).toEqual(
      newLorebookEntry(0, {
        keys: ['dragon', 'wyrm'],
        secondaryKeys: ['fire', '/sc(a|o)les?/i'],
        comment: 'Dragons of the Ashfall',
        content: 'Ashfall dragons nest in dead volcanoes and hoard maps, not gold.',
        selectiveLogic: 'and_any',
        addMemo: true,
        order: 120,
        position: 'before',
        preventRecursion: true,
        matchCharacterDescription: true,
        matchScenario: true,
        probability: 75,
        group: 'beasts, lore',
        groupWeight: 60,
        scanDepth: 6,
        caseSensitive: true,
        matchWholeWords: true,
        useGroupScoring: false,
        automationId: 'qr-dragon',
        sticky: 2,
        cooldown: 1,
        delay: 0,
        triggers: ['normal', 'swipe'],
        characterFilter: { isExclude: true, names: ['Villain.png'], tags: ['tag-1'] },
        displayIndex: 0,
        extra: { hearthTestUnknownEntryField: { kept: ['verbatim'] } },
      }),
    );
    expect(book.entries[1]).toMatchObject({
      constant: true,
      selectiveLogic: 'not_any',
      position: 'depth',
      depth: 1,
      role: 'assistant',
      ignoreBudget: true,
      excludeRecursion: true,
      delayUntilRecursion: 2,
      useProbability: false,
      groupOverride: true,
      delay: 3,
    });
    expect(book.entries[2]).toMatchObject({
      disabled: true,
      vectorized: true,
      selective: false,
      selectiveLogic: 'not_all',
      position: 'outlet',
      outletName: 'maps',
      role: 'user',
      scanDepth: 0,
      delayUntilRecursion: 1,
      matchPersonaDescription: true,
      matchCreatorNotes: true,
    });
    expect(book.extra).toEqual({
      originalData: { name: 'Ashfall', entries: [] },
      hearthTestUnknownTopLevel: 42,
    });
  });

  it('exports exactly the fields it read (SillyTavern can import the result)', () => {
    const book = must(parseWorldInfo(json, 'Ashfall'));
    const out = exportWorldInfo(book) as typeof json;
    expect(out.entries).toEqual(json.entries);
    expect(out).toMatchObject({
      originalData: { name: 'Ashfall', entries: [] },
      hearthTestUnknownTopLevel: 42,
    });
  });

  it('parse -> export -> parse is identity', () => {
    const book = must(parseWorldInfo(json, 'Ashfall'));
    expect(must(parseWorldInfo(exportWorldInfo(book)))).toEqual(book);
  });

  it('fills SillyTavern defaults for missing fields and tolerates loose types', () => {
    const book = must(
      parseWorldInfo({
        entries: {
          '3': { key: 'a, b ,c', content: 'x', order: '7', disable: 'true', delayUntilRecursion: true },
          '4': { uid: 3, content: 'duplicate uid' },
        },
      }),
    );
    expect(book.entries[0]).toMatchObject({
      uid: 3,
      keys: ['a', 'b', 'c'],
      order: 7,
      disabled: true,
      delayUntilRecursion: 1,
      selective: true,
      probability: 100,
      useProbability: true,
      depth: 4,
      groupWeight: 100,
      position: 'before',
      role: 'system',
    });
    expect(book.entries[1]!.uid).toBe(0); // the duplicate gets the next free uid
  });

  it.each([
    ['not an object', 'hello', /JSON object/],
    ['entries missing', { name: 'x' }, /`entries` must be an object/],
    ['an entry that is not an object', { entries: { '0': 5 } }, /entry "0" is not an object/],
    ['a lorebook_v3 without data', { spec: 'lorebook_v3' }, /`data` object/],
  ])('refuses %s', (_, input, message) => {
    const r = parseWorldInfo(input);
    expect(r).toMatchObject({ ok: false, error: { code: 'lorebook.invalid' } });
    expect(!r.ok && r.error.message).toMatch(message);
  });

  it('accepts a V3 lorebook file and a bare character_book', () => {
    const cb = {
      name: 'B',
      entries: [{ keys: ['k'], content: 'c', enabled: true, insertion_order: 3, extensions: {} }],
    };
    expect(must(parseWorldInfo({ spec: 'lorebook_v3', data: cb })).entries[0]).toMatchObject({
      keys: ['k'],
      order: 3,
    });
    expect(must(parseWorldInfo(cb)).name).toBe('B');
  });
});

describe('character_book', () => {
  const card = fixtureJson('card-v2.json') as { data: { character_book: Record<string, unknown> } };
  const raw = card.data.character_book;

  it('maps V2 fields and SillyTavern extensions, keeping unknown ones', () => {
    const book = must(parseCharacterBook(raw));
    expect(book.extensions).toEqual({ 'vendor/book': 'keep me' });
    expect(book.entries[0]).toMatchObject({
      uid: 0,
      keys: ['lamp', 'lamps'],
      position: 'before',
      selective: true,
      extensions: { 'vendor/entry': { color: 'amber' } },
      extra: { use_regex: true },
      sticky: 0,
    });
    expect(book.entries[2]).toMatchObject({
      uid: 2,
      disabled: true,
      selective: false,
      displayIndex: 2,
      position: 'after',
    });
  });

  it('parse -> export -> parse is identity', () => {
    const book = must(parseCharacterBook(raw));
    expect(must(parseCharacterBook(exportCharacterBook(book)))).toEqual(book);
  });

  it('keeps the unknown fields of the input in the export', () => {
    const out = exportCharacterBook(must(parseCharacterBook(raw))) as { entries: Record<string, unknown>[] };
    const entries = raw.entries as Record<string, Record<string, unknown>>[];
    expect(out.entries[0]).toMatchObject({
      use_regex: true,
      extensions: { 'vendor/entry': { color: 'amber' } },
    });
    expect(out.entries[1]).toMatchObject({ priority: 10 });
    for (const [i, e] of entries.entries()) {
      for (const key of Object.keys(e)) expect(out.entries[i], key).toHaveProperty(key);
    }
  });

  it('converts between world info and character_book without losing activation fields', () => {
    const wi = must(parseWorldInfo(fixtureJson('world-info.json'), 'Ashfall'));
    const viaCard = must(parseCharacterBook(exportCharacterBook(wi)));
    const strip = (b: Lorebook) =>
      b.entries.map(({ extra: _x, addMemo: _a, displayIndex: _d, ...rest }) => rest);
    expect(strip(viaCard)).toEqual(strip(wi));
    expect(exportCharacterBook(wi)).not.toHaveProperty('originalData');
  });

  it('refuses an entry that is not an object', () => {
    expect(parseCharacterBook({ entries: [null] })).toMatchObject({
      ok: false,
      error: { code: 'lorebook.invalid' },
    });
  });
});
