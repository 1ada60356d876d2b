import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { utf8 } from '$lib/domain/base64';
import {
  CharacterCardSchema,
  MAX_CARD_CHUNK_BYTES,
  cardToJson,
  exportCardJson,
  exportCardPng,
  newCharacterCard,
  parseCard,
  type CharacterCard,
} from '$lib/chat/card';
import { decodeTextChunk, readPngChunks } from '$lib/chat/png';
import { buildZip } from '../../support/zip-builder';
import { b64json, bytes, fixture, fixtureJson, pngWithText, tinyPng } from './helpers';

const must = (r: ReturnType<typeof parseCard>): CharacterCard => {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
};

/** The card's data without where it came from (export always writes V2 + V3). */
const data = (c: CharacterCard) => {
  const { origin: _origin, ...rest } = c;
  return rest;
};

const cardChunks = (png: Uint8Array) => {
  const read = readPngChunks(png);
  if (!read.ok) throw new Error(read.error.message);
  return read.value.filter((c) => c.type === 'tEXt').map((c) => decodeTextChunk(c.data)!);
};

describe('parseCard: JSON', () => {
  it('reads a V1 card, mapping legacy fields and keeping unknown ones', () => {
    const card = must(parseCard(bytes(fixture('card-v1.json')), 'mirela.json'));
    expect(card).toMatchObject({
      name: 'Captain Mirela Voss',
      personality: 'blunt, loyal, superstitious about weather',
      creatorNotes: 'A short test character.',
      tags: ['airship', 'captain'],
      characterBook: null,
      avatar: null,
      origin: { spec: 'v1', container: 'json' },
    });
    expect(card.extraFields).toEqual({
      avatar: 'none',
      chat: 'Captain Mirela Voss - 2024-5-1 @12h 00m 00s 0ms',
      talkativeness: '0.5',
      fav: false,
      create_date: '2024-5-1 @12h 00m 00s 0ms',
    });
    expect(CharacterCardSchema.safeParse(card).success).toBe(true);
  });

  it('reads every V2 field, the embedded lorebook and unknown extension data', () => {
    const card = must(parseCard(bytes(fixture('card-v2.json')), 'orrin.json'));
    expect(card.name).toBe('Orrin the Lamplighter');
    expect(card.description).toContain('lights the lamps');
    expect(card.systemPrompt).toBe('You are {{char}}. Stay in character.');
    expect(card.postHistoryInstructions).toBe('Keep replies under 200 words.');
    expect(card.alternateGreetings).toHaveLength(2);
    expect(card.tags).toEqual(['fantasy', 'city', 'slice of life']);
    expect(card.creator).toBe('hearth-tests');
    expect(card.characterVersion).toBe('1.2');
    expect(card.extensions['hearth_test/unknown']).toEqual({ nested: [1, 2, { deep: true }] });
    expect(card.extraData).toEqual({ hearth_test_data_field: 'unknown data field' });
    expect(card.extraFields).toMatchObject({ avatar: 'none', create_date: '2024-6-2 @09h 15m 30s 120ms' });
    expect(card.extraFields).not.toHaveProperty('description'); // stale V1 copy, regenerated on export
    const book = card.characterBook!;
    expect(book).toMatchObject({
      name: 'Brindle Street',
      scanDepth: 4,
      tokenBudget: 512,
      recursiveScanning: true,
    });
    expect(book.entries.map((e) => e.uid)).toEqual([0, 7, 2]);
    expect(book.entries[1]).toMatchObject({
      keys: ['/widow\\s+hask/i'],
      secondaryKeys: ['bakery', 'bread'],
      selectiveLogic: 'and_all',
      position: 'depth',
      depth: 2,
      role: 'user',
      probability: 80,
      group: 'townsfolk',
      groupWeight: 30,
      extra: { priority: 10 },
    });
    expect(book.entries[0]!.extensions).toEqual({ 'vendor/entry': { color: 'amber' } });
    expect(book.entries[2]).toMatchObject({ disabled: true, constant: true, position: 'after' });
    expect(CharacterCardSchema.safeParse(card).success).toBe(true);
  });

  it('reads every V3 field', () => {
    const card = must(parseCard(bytes(fixture('card-v3.json')), 'sable.json'));
    expect(card).toMatchObject({
      name: 'Sable',
      nickname: 'Sab',
      creatorNotesMultilingual: { en: 'English notes.', fr: 'Notes en français.' },
      groupOnlyGreetings: ["*Sable weaves between everyone's legs.*"],
      source: ['https://example.invalid/sable'],
      creationDate: 1717300000,
      modificationDate: 1717400000,
      origin: { spec: 'v3', specVersion: '3.0', container: 'json' },
    });
    expect(card.assets).toEqual([
      { type: 'icon', uri: 'ccdefault:', name: 'main', ext: 'png', extra: {} },
      {
        type: 'emotion',
        uri: 'embeded://assets/emotion/images/happy.png',
        name: 'happy',
        ext: 'png',
        extra: { x_vendor: 1 },
      },
    ]);
  });

  it('accepts a UTF-8 BOM and leading whitespace', () => {
    const text = '\uFEFF  \n' + fixture('card-v3.json');
    expect(must(parseCard(bytes(text), 'sable.txt')).name).toBe('Sable');
  });

  it('tolerates nulls and numbers where text is expected', () => {
    const json = {
      spec: 'chara_card_v2',
      data: { name: 'N', creator_notes: null, character_version: 2, tags: null },
    };
    const card = must(parseCard(bytes(JSON.stringify(json)), 'n.json'));
    expect(card).toMatchObject({ creatorNotes: '', characterVersion: '2', tags: [] });
  });
});

describe('parseCard: PNG', () => {
  const v2 = fixtureJson('card-v2.json');
  const v3 = fixtureJson('card-v3.json');

  it('reads a V2 card from its chara chunk and keeps the image without card chunks', () => {
    const png = pngWithText([['chara', b64json(v2)]]);
    const card = must(parseCard(png, 'orrin.png'));
    expect(card.origin).toEqual({ spec: 'v2', specVersion: '2.0', container: 'png' });
    expect(card.name).toBe('Orrin the Lamplighter');
    expect(card.avatar).toEqual(tinyPng());
  });

  it('prefers ccv3 over chara when both are present', () => {
    const png = pngWithText([
      ['chara', b64json(v2)],
      ['ccv3', b64json(v3)],
    ]);
    const card = must(parseCard(png, 'both.png'));
    expect(card.name).toBe('Sable');
    expect(card.origin.spec).toBe('v3');
    expect(cardChunks(card.avatar!)).toEqual([]);
  });

  it('reads a V1 card from a chara chunk', () => {
    const png = pngWithText([['Chara', b64json(fixtureJson('card-v1.json'))]]);
    expect(must(parseCard(png, 'v1.png')).origin.spec).toBe('v1');
  });

  it('ignores unrelated text chunks', () => {
    const png = pngWithText([
      ['Software', 'Some Paint Program'],
      ['chara', b64json(v2)],
    ]);
    const card = must(parseCard(png, 'x.png'));
    expect(cardChunks(card.avatar!)).toEqual([{ keyword: 'Software', text: 'Some Paint Program' }]);
  });
});

describe('parseCard: hostile input is refused with a named problem', () => {
  const v2 = fixtureJson('card-v2.json');
  const cases: [string, Uint8Array, string, RegExp][] = [
    ['a PNG without card data', tinyPng(), 'card.no_card_data', /no `chara` or `ccv3`/],
    [
      'bad base64',
      pngWithText([['chara', '%%%not-base64%%%']]),
      'card.invalid_base64',
      /`chara` chunk.*base64/,
    ],
    [
      'invalid JSON in the chunk',
      pngWithText([['ccv3', btoa('{"spec": ')]]),
      'card.invalid_json',
      /`ccv3` chunk.*not valid JSON/,
    ],
    [
      'a wrong spec',
      pngWithText([['chara', b64json({ spec: 'chara_card_v9', data: {} })]]),
      'card.unsupported_spec',
      /chara_card_v9/,
    ],
    ['a missing spec and name', bytes('{"hello": "world"}'), 'card.unsupported_spec', /no card spec/],
    ['a lorebook', bytes('{"entries": {}}'), 'card.unsupported_spec', /lorebook/],
    ['a V2 card without data', bytes('{"spec": "chara_card_v2"}'), 'card.invalid_card', /`data` object/],
    [
      'a card without a name',
      bytes('{"spec": "chara_card_v3", "data": {"name": "  "}}'),
      'card.invalid_card',
      /no character name/,
    ],
    [
      'a field of the wrong type',
      bytes(JSON.stringify({ spec: 'chara_card_v2', data: { name: 'A', description: { x: 1 } } })),
      'card.invalid_card',
      /`data.description` must be text/,
    ],
    [
      'a broken embedded lorebook',
      bytes(
        JSON.stringify({ spec: 'chara_card_v2', data: { name: 'A', character_book: { entries: 'no' } } }),
      ),
      'card.invalid_card',
      /embedded lorebook/,
    ],
    ['invalid JSON', bytes('{"name": "A",'), 'card.invalid_json', /not valid JSON/],
    ['a JSON array', bytes('[1, 2]'), 'card.invalid_card', /does not hold a character card/],
    [
      'a truncated PNG',
      pngWithText([['chara', b64json(v2)]]).slice(0, 60),
      'card.truncated_png',
      /truncated/,
    ],
    ['a JPEG', new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0]), 'card.unsupported_format', /JPEG/],
    [
      'a broken ZIP',
      new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0]),
      'card.invalid_charx',
      /not a readable CHARX/,
    ],
    ['plain text', bytes('hello there'), 'card.unsupported_format', /not a character card/],
  ];

  it.each(cases)('%s', (_, input, code, message) => {
    const r = parseCard(input, 'card.png');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe(code);
    expect(r.error.message).toMatch(message);
  });

  it('refuses a CRC mismatch', () => {
    const png = pngWithText([['chara', b64json(v2)]]);
    png[png.length - 20] = png[png.length - 20]! ^ 0x01; // inside the text chunk
    expect(parseCard(png, 'x.png')).toMatchObject({ ok: false, error: { code: 'card.png_crc_mismatch' } });
  });

  it('refuses a card chunk over the size cap before decoding it', () => {
    const huge = 'A'.repeat(MAX_CARD_CHUNK_BYTES + 4);
    const r = parseCard(pngWithText([['chara', huge]]), 'huge.png');
    expect(r).toMatchObject({ ok: false, error: { code: 'card.chunk_too_large' } });
  }, 30_000);

  it('refuses a JSON file over the size cap', () => {
    const huge = new Uint8Array(8 * 1024 * 1024 + 1).fill(0x20);
    huge[0] = 0x7b;
    expect(parseCard(huge, 'huge.json')).toMatchObject({ ok: false, error: { code: 'card.too_large' } });
  });

  it('never throws on random bytes', () => {
    let seed = 1;
    for (let n = 0; n < 200; n++) {
      const len = (n * 37) % 300;
      const buf = new Uint8Array(len);
      for (let i = 0; i < len; i++) buf[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
      if (n % 2 === 0) buf.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].slice(0, len));
      expect(() => parseCard(buf, 'r.png')).not.toThrow();
    }
  });

  it('does not let a `__proto__` key reach any prototype', () => {
    const text =
      '{"spec":"chara_card_v2","data":{"name":"P","extensions":{"__proto__":{"polluted":true}}},"__proto__":{"x":1}}';
    const card = must(parseCard(bytes(text), 'p.json'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(card.extensions)).toBe(Object.prototype);
    expect(Object.hasOwn(card.extensions, '__proto__')).toBe(true);
  });
});

describe('export and round trips', () => {
  const sources: [string, Uint8Array, string][] = [
    ['V1 JSON', bytes(fixture('card-v1.json')), 'v1.json'],
    ['V2 JSON', bytes(fixture('card-v2.json')), 'v2.json'],
    ['V3 JSON', bytes(fixture('card-v3.json')), 'v3.json'],
    ['V2 PNG', pngWithText([['chara', b64json(fixtureJson('card-v2.json'))]]), 'v2.png'],
    [
      'V2+V3 PNG',
      pngWithText([
        ['chara', b64json(fixtureJson('card-v2.json'))],
        ['ccv3', b64json(fixtureJson('card-v3.json'))],
      ]),
      'v3.png',
    ],
  ];

  it.each(sources)('%s: parse -> export PNG -> parse is identity on the data', (_, input, name) => {
    const card = must(parseCard(input, name));
    const avatar = card.avatar ?? tinyPng();
    const png = exportCardPng(card, avatar);
    expect(png.ok).toBe(true);
    if (!png.ok) return;
    const again = must(parseCard(png.value, 'exported.png'));
    expect(data(again)).toEqual(data({ ...card, avatar }));
    expect(again.origin).toEqual({ spec: 'v3', specVersion: '3.0', container: 'png' });
  });

  it.each(sources)('%s: parse -> export JSON -> parse is identity on the data', (_, input, name) => {
    const card = must(parseCard(input, name));
    const again = must(parseCard(bytes(exportCardJson(card)), 'exported.json'));
    expect(data(again)).toEqual(data({ ...card, avatar: null }));
  });

  it('writes both a V2 chara and a V3 ccv3 chunk, replacing old ones', () => {
    const card = must(parseCard(bytes(fixture('card-v2.json')), 'v2.json'));
    const old = pngWithText([
      ['chara', b64json({ name: 'Old' })],
      ['ccv3', b64json({ spec: 'chara_card_v3', data: { name: 'Old' } })],
    ]);
    const png = exportCardPng(card, old);
    if (!png.ok) throw new Error(png.error.message);
    const chunks = cardChunks(png.value);
    expect(chunks.map((c) => c.keyword)).toEqual(['chara', 'ccv3']);
    const [v2, v3] = chunks.map((c) =>
      JSON.parse(utf8.decode(Uint8Array.from(atob(c.text), (ch) => ch.charCodeAt(0)))),
    );
    expect(v2).toMatchObject({
      spec: 'chara_card_v2',
      spec_version: '2.0',
      name: card.name,
      data: { name: card.name },
    });
    expect(v3).toMatchObject({ spec: 'chara_card_v3', spec_version: '3.0', data: { name: card.name } });
    // what SillyTavern reads: data fields, the lorebook in V2 format, unknown extensions
    expect(v2.data.character_book.entries[1]).toMatchObject({
      id: 7,
      keys: ['/widow\\s+hask/i'],
      secondary_keys: ['bakery', 'bread'],
      insertion_order: 50,
      enabled: true,
      position: 'after_char',
      priority: 10,
      extensions: { position: 4, depth: 2, role: 1, selectiveLogic: 3, probability: 80, group: 'townsfolk' },
    });
    expect(v2.data.extensions['hearth_test/unknown']).toEqual({ nested: [1, 2, { deep: true }] });
    expect(v2.create_date).toBe('2024-6-2 @09h 15m 30s 120ms');
  });

  it('keeps every input field of the V2 fixture when exporting', () => {
    const input = fixtureJson('card-v2.json') as { data: Record<string, unknown> };
    const card = must(parseCard(bytes(JSON.stringify(input)), 'v2.json'));
    const out = cardToJson(card, 'v2') as { data: Record<string, unknown> };
    for (const key of Object.keys(input.data)) expect(out.data, key).toHaveProperty(key);
    expect(out.data.extensions).toEqual(input.data.extensions);
  });

  it('refuses to write into something that is not a PNG', () => {
    const r = exportCardPng(newCharacterCard('A'), bytes('nope'));
    expect(r).toMatchObject({ ok: false, error: { code: 'card.not_png' } });
  });

  it('exports a new card that SillyTavern-style readers accept', () => {
    const card = { ...newCharacterCard('Fresh'), firstMes: 'Hi {{user}}!' };
    const back = must(parseCard(bytes(exportCardJson(card)), 'fresh.json'));
    expect(data(back)).toEqual(data(card));
  });
});

describe('CHARX', () => {
  const v3 = fixtureJson('card-v3.json') as { data: Record<string, unknown> };
  const withIcon = {
    ...v3,
    data: {
      ...v3.data,
      assets: [
        { type: 'icon', uri: 'embeded://assets/icon/images/main.png', name: 'main', ext: 'png' },
        { type: 'emotion', uri: 'embeded://assets/emotion/images/happy.png', name: 'happy', ext: 'png' },
      ],
    },
  };
  const charx = (files: Record<string, Uint8Array>) => zipSync(files, { level: 6 });

  it('reads card.json and the main embedded PNG icon as the avatar', () => {
    const iconWithOldCard = pngWithText([['chara', b64json({ name: 'Old' })]]);
    const zip = charx({
      'card.json': bytes(JSON.stringify(withIcon)),
      'assets/icon/images/main.png': iconWithOldCard,
      'assets/emotion/images/happy.png': tinyPng(),
    });
    const card = must(parseCard(zip, 'sable.charx'));
    expect(card.origin).toEqual({ spec: 'v3', specVersion: '3.0', container: 'charx' });
    expect(card.name).toBe('Sable');
    expect(card.avatar).toEqual(tinyPng());
    expect(card.assets?.map((a) => a.uri)).toEqual(withIcon.data.assets.map((a) => a.uri));
  });

  it('reads a card written with ZIP64 extra fields under an ordinary end record (issue 19)', () => {
    const icon = tinyPng();
    const zip = buildZip([
      { name: 'card.json', data: bytes(JSON.stringify(withIcon)), zip64Extra: true },
      { name: 'assets/icon/images/main.png', data: icon, method: 0, zip64Extra: true },
      { name: 'assets/emotion/images/happy.png', data: tinyPng(), zip64Extra: true },
    ]);
    const card = must(parseCard(zip, 'zip64.charx'));
    expect(card.origin).toEqual({ spec: 'v3', specVersion: '3.0', container: 'charx' });
    expect(card.name).toBe('Sable');
    expect(card.avatar).toEqual(icon);
  });

  it('reads a card in a ZIP64 archive with data descriptors', () => {
    const zip = buildZip(
      [
        { name: 'card.json', data: bytes(JSON.stringify(withIcon)), dataDescriptor: true },
        { name: 'assets/icon/images/main.png', data: tinyPng(), dataDescriptor: true },
      ],
      { zip64End: true },
    );
    expect(must(parseCard(zip, 'x.charx')).avatar).toEqual(tinyPng());
  });

  it('refuses a card.json whose data lies about its size', () => {
    const zip = buildZip([{ name: 'card.json', data: bytes(JSON.stringify(v3)), declaredSize: 10 }]);
    const r = parseCard(zip, 'x.charx');
    expect(r).toMatchObject({ ok: false, error: { code: 'card.invalid_charx' } });
    expect(!r.ok && r.error.message).toBe(
      '"x.charx" is not a readable CHARX (ZIP) file: `card.json` inflates to more than the 10 bytes it declares.',
    );
  });

  it('refuses a card.json over the size cap by its ZIP64 size', () => {
    const zip = buildZip([
      { name: 'card.json', data: bytes('{}'), zip64Extra: true, declaredSize: 0x1_0000_0000 },
    ]);
    expect(parseCard(zip, 'x.charx')).toMatchObject({
      ok: false,
      error: { code: 'card.too_large', message: expect.stringContaining('4294967296 bytes') },
    });
  });

  it('round-trips through a PNG export', () => {
    const zip = charx({
      'card.json': bytes(JSON.stringify(withIcon)),
      'assets/icon/images/main.png': tinyPng(),
    });
    const card = must(parseCard(zip, 'sable.charx'));
    const png = exportCardPng(card, card.avatar!);
    if (!png.ok) throw new Error(png.error.message);
    expect(data(must(parseCard(png.value, 'sable.png')))).toEqual(data(card));
  });

  it('has no avatar when the icon is missing or not a PNG', () => {
    const zip = charx({
      'card.json': bytes(JSON.stringify(withIcon)),
      'assets/icon/images/main.png': bytes('GIF89a'),
    });
    expect(must(parseCard(zip, 'x.charx')).avatar).toBeNull();
    expect(must(parseCard(charx({ 'card.json': bytes(JSON.stringify(v3)) }), 'y.charx')).avatar).toBeNull();
  });

  it('refuses an archive without card.json', () => {
    const r = parseCard(charx({ 'readme.txt': bytes('hi') }), 'x.charx');
    expect(r).toMatchObject({ ok: false, error: { code: 'card.invalid_charx' } });
    expect(!r.ok && r.error.message).toMatch(/without a card.json/);
  });

  it('refuses a card.json over the size cap without inflating it', () => {
    const huge = new Uint8Array(8 * 1024 * 1024 + 10).fill(0x20);
    const r = parseCard(charx({ 'card.json': huge }), 'bomb.charx');
    expect(r).toMatchObject({ ok: false, error: { code: 'card.too_large' } });
  }, 30_000);

  it('refuses invalid JSON inside card.json, naming it', () => {
    const r = parseCard(charx({ 'card.json': bytes('{oops') }), 'x.charx');
    expect(r).toMatchObject({ ok: false, error: { code: 'card.invalid_json' } });
    expect(!r.ok && r.error.message).toMatch(/card.json in "x.charx"/);
  });
});
