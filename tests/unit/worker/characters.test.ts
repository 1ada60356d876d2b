import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import {
  DexieCharacterStore,
  DexieLorebookStore,
  DexiePersonaStore,
} from '$lib/adapters/db/character-stores';
import { DexieChatStore } from '$lib/adapters/db/chat-store';
import { utf8 } from '$lib/domain/base64';
import { parseCard } from '$lib/chat/card';
import { newLorebookEntry } from '$lib/chat/lorebook';
import { isPng } from '$lib/chat/png';
import type { ChatRecord } from '$lib/chat/records';
import type { RuntimeContext } from '$lib/worker/context';
import { characterHandlers } from '$lib/worker/handlers/characters';
import { lorebookHandlers } from '$lib/worker/handlers/lorebooks';
import { personaHandlers } from '$lib/worker/handlers/personas';
import { Transfer } from '$lib/worker/rpc';
import { memorySkills } from '../../support/memory-skills';
import { buildZip } from '../../support/zip-builder';
import { b64json, bytes, fixture, fixtureJson, pngWithText, tinyPng } from '../chat/helpers';

let db: HearthDatabase;
let n = 0;

type MethodsOf<H> = H extends { methods: infer M } ? M : never;
type AnyMethods = MethodsOf<ReturnType<typeof characterHandlers>> &
  MethodsOf<ReturnType<typeof personaHandlers>> &
  MethodsOf<ReturnType<typeof lorebookHandlers>>;

/** The three handler areas over a fresh database; results unwrapped from their Transfer. */
function api() {
  db = openHearthDatabase(`characters-api-${++n}-${Math.random()}`);
  const ctx = {
    db,
    stores: {
      characters: new DexieCharacterStore(db),
      personas: new DexiePersonaStore(db),
      lorebooks: new DexieLorebookStore(db),
      chats: new DexieChatStore(db),
    },
    skills: memorySkills(db),
  } as unknown as RuntimeContext;
  const methods = {
    ...characterHandlers(ctx).methods,
    ...personaHandlers(ctx).methods,
    ...lorebookHandlers(ctx).methods,
  } as AnyMethods;
  const signal = new AbortController().signal;
  return async <K extends keyof AnyMethods>(
    method: K,
    params: Parameters<AnyMethods[K]>[0],
  ): Promise<Exclude<Awaited<ReturnType<AnyMethods[K]>>, Transfer<unknown>>> => {
    const fn = methods[method] as (p: unknown, s: AbortSignal) => Promise<unknown>;
    const v = await fn(params, signal);
    return (v instanceof Transfer ? v.value : v) as never;
  };
}

afterEach(async () => {
  db.close();
  await db.delete();
});

const v2Json = fixtureJson('card-v2.json') as { data: Record<string, unknown> };
const v2Png = () => pngWithText([['chara', b64json(v2Json)]]);

/** Everything stored, to compare before and after a refused import. */
const snapshot = async () => ({
  characters: await db.characters.toArray(),
  lorebooks: await db.lorebooks.toArray(),
  settings: await db.settings.toArray(),
});

describe('characters API', () => {
  it('imports a V2 PNG card: avatar without card chunks, embedded lorebook attached', async () => {
    const call = api();
    const { character, lorebook } = await call('characters.import', {
      fileName: 'orrin.png',
      bytes: v2Png(),
    });
    expect(character.card.name).toBe('Orrin the Lamplighter');
    expect(character.card.alternateGreetings).toHaveLength(2);
    expect(character.card.characterBook).toBeNull();
    expect(character.card.avatar).toBeNull();
    expect(isPng(character.avatar!)).toBe(true);
    expect(parseCard(character.avatar!, 'a.png')).toMatchObject({
      ok: false,
      error: { code: 'card.no_card_data' },
    });
    expect(lorebook).not.toBeNull();
    expect(lorebook!.source).toEqual({ kind: 'card', fileName: 'orrin.png', characterId: character.id });
    expect(lorebook!.book.entries.length).toBeGreaterThan(0);
    expect(character.lorebookIds).toEqual([lorebook!.id]);

    const { characters, issues } = await call('characters.list', undefined);
    expect(issues).toEqual([]);
    expect(characters).toEqual([
      expect.objectContaining({
        id: character.id,
        name: 'Orrin the Lamplighter',
        lorebookIds: [lorebook!.id],
      }),
    ]);
    expect(isPng(characters[0]!.avatar!)).toBe(true);
    const books = await call('lorebooks.list', undefined);
    expect(books.lorebooks).toEqual([
      expect.objectContaining({ id: lorebook!.id, characterIds: [character.id], global: false }),
    ]);
  });

  it('imports JSON cards (V1 and V3) without an avatar', async () => {
    const call = api();
    for (const name of ['card-v1.json', 'card-v3.json']) {
      const { character } = await call('characters.import', { fileName: name, bytes: bytes(fixture(name)) });
      expect(character.avatar).toBeUndefined();
      expect(character.card.name).not.toBe('');
    }
    expect((await call('characters.list', undefined)).characters).toHaveLength(2);
  });

  it('imports a CHARX card written with ZIP64 extra fields, with its icon as the avatar', async () => {
    const call = api();
    const v3 = fixtureJson('card-v3.json') as { data: Record<string, unknown> };
    const card = {
      ...v3,
      data: { ...v3.data, assets: [{ type: 'icon', uri: 'embeded://icon.png', name: 'main', ext: 'png' }] },
    };
    const zip = buildZip([
      { name: 'card.json', data: bytes(JSON.stringify(card)), zip64Extra: true },
      { name: 'icon.png', data: tinyPng(), zip64Extra: true },
    ]);
    const { character } = await call('characters.import', { fileName: 'sable.charx', bytes: zip });
    expect(character.card.name).toBe('Sable');
    expect(character.avatar && isPng(character.avatar)).toBe(true);
    expect((await call('characters.list', undefined)).characters).toHaveLength(1);
  });

  const hostile: [string, Uint8Array, string, RegExp][] = [
    ['bad base64', pngWithText([['chara', '%%%not-base64%%%']]), 'card.invalid_base64', /base64/],
    ['invalid JSON', pngWithText([['chara', btoa('{"spec": ')]]), 'card.invalid_json', /not valid JSON/],
    [
      'a wrong spec',
      pngWithText([['chara', b64json({ spec: 'chara_card_v9', data: {} })]]),
      'card.unsupported_spec',
      /chara_card_v9/,
    ],
    ['a PNG without card data', tinyPng(), 'card.no_card_data', /no `chara`/],
    [
      'a broken embedded lorebook',
      bytes(
        JSON.stringify({ spec: 'chara_card_v2', data: { name: 'A', character_book: { entries: 'no' } } }),
      ),
      'card.invalid_card',
      /embedded lorebook/,
    ],
    ['an empty file', new Uint8Array(0), 'card.unsupported_format', /empty/],
    ['a JPEG', new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0]), 'card.unsupported_format', /JPEG/],
  ];

  it.each(hostile)('refuses %s, naming the problem, and changes nothing', async (_, input, code, message) => {
    const call = api();
    await call('characters.import', { fileName: 'keep.png', bytes: v2Png() });
    const before = await snapshot();
    const refused = call('characters.import', { fileName: 'evil.png', bytes: input });
    await expect(refused).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a card chunk over the size cap and changes nothing', async () => {
    const call = api();
    const before = await snapshot();
    const huge = pngWithText([['chara', 'A'.repeat(8 * 1024 * 1024 + 4)]]);
    await expect(call('characters.import', { fileName: 'huge.png', bytes: huge })).rejects.toMatchObject({
      code: 'card.chunk_too_large',
    });
    expect(await snapshot()).toEqual(before);
  }, 30_000);

  it('creates, edits, duplicates and deletes a character', async () => {
    const call = api();
    await expect(call('characters.create', { name: '   ' })).rejects.toMatchObject({
      code: 'character.invalid',
    });
    const created = await call('characters.create', { name: ' Mira ' });
    expect(created.card.name).toBe('Mira');

    const edited = await call('characters.update', {
      id: created.id,
      card: {
        description: 'A cartographer.',
        alternateGreetings: ['Hello', '  ', 'Hi'],
        tags: [' maps ', 'maps', ''],
      },
    });
    expect(edited.card.description).toBe('A cartographer.');
    expect(edited.card.alternateGreetings).toEqual(['Hello', 'Hi']);
    expect(edited.card.tags).toEqual(['maps']);
    expect((await call('characters.get', { id: created.id })).card.description).toBe('A cartographer.');

    await expect(call('characters.update', { id: created.id, card: { name: '' } })).rejects.toMatchObject({
      code: 'character.invalid',
    });
    await expect(
      call('characters.update', { id: created.id, card: { avatar: null } as never }),
    ).rejects.toMatchObject({ code: 'character.invalid' });

    const copy = await call('characters.duplicate', { id: created.id });
    expect(copy.id).not.toBe(created.id);
    expect(copy.card.name).toBe('Mira (copy)');
    expect(copy.card.description).toBe('A cartographer.');

    await call('characters.delete', { id: created.id });
    const { characters } = await call('characters.list', undefined);
    expect(characters.map((c) => c.name)).toEqual(['Mira (copy)']);
    await expect(call('characters.get', { id: created.id })).rejects.toMatchObject({
      code: 'character.not_found',
    });
  });

  it('sets and removes a PNG avatar, stripping card chunks; refuses other images', async () => {
    const call = api();
    const c = await call('characters.create', { name: 'Mira' });
    const withAvatar = await call('characters.update', { id: c.id, avatar: v2Png() });
    expect(isPng(withAvatar.avatar!)).toBe(true);
    expect(parseCard(withAvatar.avatar!, 'a.png')).toMatchObject({
      ok: false,
      error: { code: 'card.no_card_data' },
    });
    await expect(
      call('characters.update', { id: c.id, avatar: new Uint8Array([0xff, 0xd8, 0xff, 0xe0]) }),
    ).rejects.toMatchObject({ code: 'character.avatar_invalid' });
    const removed = await call('characters.update', { id: c.id, avatar: null });
    expect(removed.avatar).toBeUndefined();
  });

  it('sets, keeps and removes the character’s own author’s note; refuses a malformed one', async () => {
    const call = api();
    const c = await call('characters.create', { name: 'Mira' });
    const note = { text: 'Mira whispers.', mode: 'before', enabled: true } as const;
    expect((await call('characters.update', { id: c.id, note })).note).toEqual(note);
    // Other changes leave it as it is; it reads back from storage.
    await call('characters.update', { id: c.id, card: { description: 'A seer.' } });
    expect((await call('characters.get', { id: c.id })).note).toEqual(note);
    await expect(
      call('characters.update', { id: c.id, note: { ...note, mode: 'around' } as never }),
    ).rejects.toMatchObject({ code: 'character.invalid', message: expect.stringContaining('note.mode') });
    expect((await call('characters.get', { id: c.id })).note).toEqual(note);
    await call('characters.update', { id: c.id, note: null });
    expect((await call('characters.get', { id: c.id })).note).toBeUndefined();
  });

  it('attaches only existing lorebooks, each once', async () => {
    const call = api();
    const c = await call('characters.create', { name: 'Mira' });
    const a = await call('lorebooks.create', { name: 'A' });
    const b = await call('lorebooks.create', { name: 'B' });
    const updated = await call('characters.update', { id: c.id, lorebookIds: [b.id, a.id, b.id] });
    expect(updated.lorebookIds).toEqual([b.id, a.id]);
    await expect(call('characters.update', { id: c.id, lorebookIds: ['lb_missing'] })).rejects.toMatchObject({
      code: 'lorebook.not_found',
    });
    expect((await call('characters.get', { id: c.id })).lorebookIds).toEqual([b.id, a.id]);
  });

  it('exports a PNG with chara and ccv3 chunks that reads back, with the first lorebook embedded', async () => {
    const call = api();
    const { character, lorebook } = await call('characters.import', {
      fileName: 'orrin.png',
      bytes: v2Png(),
    });
    await call('characters.update', { id: character.id, card: { description: 'Edited.' } });
    const file = await call('characters.export', { id: character.id });
    expect(file.fileName).toBe('Orrin the Lamplighter.png');
    expect(file.mimeType).toBe('image/png');
    const back = parseCard(file.bytes, file.fileName);
    expect(back.ok).toBe(true);
    if (!back.ok) return;
    expect(back.value.origin.spec).toBe('v3');
    expect(back.value.description).toBe('Edited.');
    expect(back.value.characterBook?.entries.length).toBe(lorebook!.book.entries.length);
    const text = new TextDecoder('latin1').decode(file.bytes);
    expect(text).toContain('chara\0');
    expect(text).toContain('ccv3\0');

    const json = await call('characters.export', { id: character.id, format: 'json' });
    expect(json.fileName).toBe('Orrin the Lamplighter.json');
    const doc = JSON.parse(utf8.decode(json.bytes)) as { spec: string; data: { description: string } };
    expect(doc.spec).toBe('chara_card_v3');
    expect(doc.data.description).toBe('Edited.');
  });

  it('exports JSON when there is no avatar, and refuses PNG then', async () => {
    const call = api();
    const c = await call('characters.create', { name: 'A/B: test' });
    const file = await call('characters.export', { id: c.id });
    expect(file.fileName).toBe('A_B_ test.json');
    expect(parseCard(file.bytes, file.fileName)).toMatchObject({ ok: true, value: { name: 'A/B: test' } });
    await expect(call('characters.export', { id: c.id, format: 'png' })).rejects.toMatchObject({
      code: 'character.no_avatar',
    });
  });

  it('reports a corrupt row in the list instead of failing', async () => {
    const call = api();
    await call('characters.create', { name: 'Good' });
    await db.characters.put({ id: 'chr_bad', name: 'Bad', card: { name: 5 } } as never);
    const { characters, issues } = await call('characters.list', undefined);
    expect(characters.map((c) => c.name)).toEqual(['Good']);
    expect(issues).toEqual([{ id: 'chr_bad', message: expect.stringContaining('chr_bad') }]);
    await expect(call('characters.get', { id: 'chr_bad' })).rejects.toMatchObject({
      code: 'storage.corrupt_record',
    });
    await call('characters.delete', { id: 'chr_bad' });
    expect((await call('characters.list', undefined)).issues).toEqual([]);
  });

  it('deleting a character deletes its chats and their messages, and keeps its lorebooks', async () => {
    const call = api();
    const { character, lorebook } = await call('characters.import', { fileName: 'o.png', bytes: v2Png() });
    const chat = {
      id: 'chat-1',
      characterId: character.id,
      title: 'One',
      personaId: null,
      lorebookIds: [],
      createdAt: 1,
      updatedAt: 1,
    };
    await db.chats.bulkPut([chat, { ...chat, id: 'chat-2', characterId: 'someone-else' }]);
    const message = {
      name: 'x',
      isUser: true,
      isSystem: false,
      sendDate: null,
      mes: 'hi',
      extra: {},
      swipes: [],
      swipeId: 0,
      unknown: {},
    };
    await db.chatMessages.bulkPut([
      { ...message, chatId: 'chat-1', index: 0 },
      { ...message, chatId: 'chat-1', index: 1 },
      { ...message, chatId: 'chat-2', index: 0 },
    ]);
    await call('characters.delete', { id: character.id });
    expect(await db.chats.toCollection().primaryKeys()).toEqual(['chat-2']);
    expect((await db.chatMessages.toArray()).map((m) => m.chatId)).toEqual(['chat-2']);
    expect((await call('lorebooks.get', { id: lorebook!.id })).id).toBe(lorebook!.id);
  });
});

describe('personas API', () => {
  it('creates, edits, lists by name and deletes personas; the default follows', async () => {
    const call = api();
    const zed = await call('personas.create', { name: 'Zed', description: 'A traveller.' });
    const ann = await call('personas.create', { name: 'ann', avatar: tinyPng() });
    expect(isPng(ann.avatar!)).toBe(true);
    await expect(call('personas.create', { name: '' })).rejects.toMatchObject({ code: 'persona.invalid' });
    await expect(call('personas.create', { name: 'X', avatar: bytes('not an image') })).rejects.toMatchObject(
      { code: 'persona.invalid' },
    );

    const edited = await call('personas.update', { id: zed.id, description: 'A sailor.', avatar: null });
    expect(edited.description).toBe('A sailor.');

    await call('personas.setDefault', { id: zed.id });
    let list = await call('personas.list', undefined);
    expect(list.personas.map((p) => p.name)).toEqual(['ann', 'Zed']);
    expect(list.defaultPersonaId).toBe(zed.id);
    await expect(call('personas.setDefault', { id: 'per_missing' })).rejects.toMatchObject({
      code: 'persona.not_found',
    });

    await db.chats.put({
      id: 'c',
      characterId: 'x',
      title: 't',
      personaId: zed.id,
      lorebookIds: [],
      createdAt: 1,
      updatedAt: 1,
    });
    await call('personas.delete', { id: zed.id });
    list = await call('personas.list', undefined);
    expect(list.personas.map((p) => p.name)).toEqual(['ann']);
    expect(list.defaultPersonaId).toBeNull();
    expect((await db.chats.get('c'))!.personaId).toBeNull();
  });
});

describe('lorebooks API', () => {
  it('imports SillyTavern world info and exports it back with every entry', async () => {
    const call = api();
    const text = fixture('world-info.json');
    const book = await call('lorebooks.import', { fileName: 'Ashfall.json', bytes: bytes(text) });
    expect(book.book.name).toBe('Ashfall');
    expect(book.source).toEqual({ kind: 'worldInfo', fileName: 'Ashfall.json' });
    const file = await call('lorebooks.export', { id: book.id });
    expect(file.fileName).toBe('Ashfall.json');
    const exported = JSON.parse(utf8.decode(file.bytes)) as {
      entries: Record<string, { keysecondary: string[] }>;
    };
    const original = JSON.parse(text) as { entries: Record<string, unknown> };
    expect(Object.keys(exported.entries)).toEqual(Object.keys(original.entries));
    expect(exported.entries['0']!.keysecondary).toEqual(['fire', '/sc(a|o)les?/i']);

    const again = await call('lorebooks.import', { fileName: file.fileName, bytes: file.bytes });
    expect(again.book.entries).toEqual(book.book.entries);
  });

  it('refuses files that are not lorebooks and saves nothing', async () => {
    const call = api();
    const cases: [Uint8Array, RegExp][] = [
      [bytes('{"entries": '), /not valid JSON/],
      [bytes('{"entries": 5}'), /not a SillyTavern lorebook/],
      [bytes(fixture('card-v2.json')), /character card/],
      [new Uint8Array(0), /empty/],
    ];
    for (const [input, message] of cases) {
      await expect(call('lorebooks.import', { fileName: 'x.json', bytes: input })).rejects.toMatchObject({
        code: 'lorebook.invalid',
        message: expect.stringMatching(message),
      });
    }
    expect(await db.lorebooks.count()).toBe(0);
  });

  it('saves edited entries, validating the book', async () => {
    const call = api();
    const created = await call('lorebooks.create', { name: 'Places' });
    const entry = newLorebookEntry(0, {
      keys: ['harbor', '/docks?/i'],
      secondaryKeys: ['night'],
      selectiveLogic: 'not_all',
      content: 'The harbor.',
      groupOverride: true,
      delayUntilRecursion: 2,
    });
    const saved = await call('lorebooks.update', {
      id: created.id,
      book: { ...created.book, entries: [entry] },
    });
    expect((await call('lorebooks.get', { id: created.id })).book.entries).toEqual([entry]);
    expect(saved.book.entries[0]!.selectiveLogic).toBe('not_all');

    await expect(
      call('lorebooks.update', { id: created.id, book: { ...created.book, entries: [entry, entry] } }),
    ).rejects.toMatchObject({ code: 'lorebook.invalid', message: expect.stringContaining('uid 0') });
    await expect(
      call('lorebooks.update', { id: created.id, book: { ...created.book, name: ' ' } }),
    ).rejects.toMatchObject({ code: 'lorebook.invalid' });
    await expect(
      call('lorebooks.update', {
        id: created.id,
        book: { ...created.book, entries: [{ ...entry, selectiveLogic: 'sometimes' }] } as never,
      }),
    ).rejects.toMatchObject({ code: 'lorebook.invalid', message: expect.stringContaining('selectiveLogic') });
  });

  it('attaches globally and detaches everywhere on delete', async () => {
    const call = api();
    const a = await call('lorebooks.create', { name: 'A' });
    const b = await call('lorebooks.create', { name: 'B' });
    expect(await call('lorebooks.setGlobal', { id: a.id, global: true })).toEqual([a.id]);
    expect(await call('lorebooks.setGlobal', { id: b.id, global: true })).toEqual([a.id, b.id]);
    expect(await call('lorebooks.setGlobal', { id: b.id, global: false })).toEqual([a.id]);
    await expect(call('lorebooks.setGlobal', { id: 'lb_missing', global: true })).rejects.toMatchObject({
      code: 'lorebook.not_found',
    });
    const c = await call('characters.create', { name: 'C' });
    await call('characters.update', { id: c.id, lorebookIds: [a.id, b.id] });
    await db.chats.put({
      id: 'chat',
      characterId: c.id,
      title: 't',
      personaId: null,
      lorebookIds: [a.id],
      createdAt: 1,
      updatedAt: 1,
    });
    const listed = await call('lorebooks.list', undefined);
    expect(listed.lorebooks.map((l) => [l.name, l.global, l.characterIds])).toEqual([
      ['A', true, [c.id]],
      ['B', false, [c.id]],
    ]);

    await call('lorebooks.delete', { id: a.id });
    expect((await call('characters.get', { id: c.id })).lorebookIds).toEqual([b.id]);
    expect((await db.chats.get('chat'))!.lorebookIds).toEqual([]);
    expect((await call('lorebooks.list', undefined)).lorebooks.map((l) => l.name)).toEqual(['B']);
    expect(await new DexieLorebookStore(db).globalIds()).toEqual([]);
  });

  it('reports a corrupt lorebook row and still lists the rest', async () => {
    const call = api();
    await call('lorebooks.create', { name: 'Fine' });
    await db.lorebooks.put({ id: 'lb_bad', name: 'Bad', book: { entries: 'x' } } as never);
    const { lorebooks, issues } = await call('lorebooks.list', undefined);
    expect(lorebooks.map((l) => l.name)).toEqual(['Fine']);
    expect(issues.map((i) => i.id)).toEqual(['lb_bad']);
  });
});

describe('the library at size: favourites, chat activity, search text', () => {
  it('lists each character with its favourite mark, chats, last chat and card text', async () => {
    const call = api();
    const a = await call('characters.create', { name: 'Aster' });
    const b = await call('characters.create', { name: 'Bramble' });
    await call('characters.update', {
      id: a.id,
      card: { description: 'A lighthouse keeper.', creatorNotes: 'Calm.' },
    });
    const chats = new DexieChatStore(db);
    const chat = (id: string, characterId: string, updatedAt: number): ChatRecord => ({
      id,
      characterId,
      title: id,
      personaId: null,
      lorebookIds: [],
      createdAt: 1,
      updatedAt,
    });
    await chats.put(chat('c1', a.id, 5_000));
    await chats.put(chat('c2', a.id, 9_000));

    const marked = await call('characters.setFavorite', { id: b.id, favorite: true });
    expect(marked).toMatchObject({ id: b.id, favorite: true, chats: 0, lastChattedAt: null });
    // Its own chats are counted, by their index.
    expect(await call('characters.setFavorite', { id: a.id, favorite: false })).toMatchObject({
      favorite: false,
      chats: 2,
      lastChattedAt: 9_000,
    });
    const { characters } = await call('characters.list', undefined);
    expect(characters.map((c) => [c.name, c.favorite, c.chats, c.lastChattedAt])).toEqual([
      ['Aster', false, 2, 9_000],
      ['Bramble', true, 0, null],
    ]);
    expect(characters[0]!.searchText).toContain('A lighthouse keeper.');
    expect(characters[0]!.searchText).toContain('Calm.');

    // The mark is SillyTavern's: the exported card carries `extensions.fav`.
    const file = await call('characters.export', { id: b.id, format: 'json' });
    const json = JSON.parse(new TextDecoder().decode(file.bytes)) as {
      data: { extensions: { fav?: unknown } };
    };
    expect(json.data.extensions.fav).toBe(true);
    await call('characters.setFavorite', { id: b.id, favorite: false });
    expect((await call('characters.list', undefined)).characters[1]!.favorite).toBe(false);
    await expect(call('characters.setFavorite', { id: 'nope', favorite: true })).rejects.toMatchObject({
      error: { code: 'character.not_found' },
    });
  });
});
