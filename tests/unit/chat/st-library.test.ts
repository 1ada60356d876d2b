import { describe, expect, it } from 'vitest';
import {
  cardWorld,
  characterNoteOf,
  chatPersona,
  chatWorld,
  libraryChatNote,
  extraBooksOf,
  planPersonas,
  planStLibrary,
  readStSettings,
  type StLibraryLimits,
  type StLibraryPlan,
  type StSettings,
} from '$lib/chat/st-library';
import { DEFAULT_AUTHORS_NOTE } from '$lib/chat/prompt/authors-note';

const LIMITS: StLibraryLimits = {
  maxFiles: 100,
  cardBytes: 1000,
  lorebookBytes: 1000,
  chatBytes: 1000,
  settingsBytes: 1000,
  avatarBytes: 1000,
};

const files = (...paths: string[]) => paths.map((path) => ({ path, size: 10 }));

function plan(paths: string[], limits = LIMITS): StLibraryPlan {
  const planned = planStLibrary(files(...paths), limits);
  if (!planned.ok) throw new Error(`${planned.error.code}: ${planned.error.message}`);
  return planned.value;
}

const reasonOf = (p: StLibraryPlan, path: string) => p.skipped.find((s) => s.path === path)?.reason;

/** SillyTavern's data/default-user/ as a backup zip holds it: the layout at the top. */
const LIBRARY = [
  'settings.json',
  'secrets.json',
  'characters/Aqua.png',
  'characters/Seraphina.png',
  'characters/Seraphina/joy.png',
  'characters/notes.txt',
  'chats/Aqua/1673181146000.jsonl',
  'chats/Aqua/Aqua - 2024-05-01@10h00m00s.jsonl',
  'chats/Seraphina/Seraphina - first.jsonl',
  'chats/Ghost/Ghost - 1.jsonl',
  'chats/Aqua/readme.md',
  'chats/stray.jsonl',
  'worlds/Eldoria.json',
  'worlds/Toaru.json',
  'User Avatars/user-default.png',
  'User Avatars/wren.webp',
  'groups/1700000000.json',
  'group chats/1700000000.jsonl',
  'themes/Dark Lite.json',
  'backgrounds/tavern day.jpg',
  'thumbnails/avatar/Aqua.png',
  'OpenAI Settings/Default.json',
];

describe('planStLibrary', () => {
  it('sorts a user-data folder into cards, chats by card, lorebooks, settings and persona images', () => {
    const p = plan(LIBRARY);
    expect(p.root).toBe('');
    expect(p.cards).toEqual([
      { path: 'characters/Aqua.png', fileName: 'Aqua.png', internalName: 'Aqua' },
      { path: 'characters/Seraphina.png', fileName: 'Seraphina.png', internalName: 'Seraphina' },
    ]);
    expect(p.chats).toEqual([
      {
        path: 'chats/Aqua/1673181146000.jsonl',
        fileName: '1673181146000.jsonl',
        cardPath: 'characters/Aqua.png',
      },
      {
        path: 'chats/Aqua/Aqua - 2024-05-01@10h00m00s.jsonl',
        fileName: 'Aqua - 2024-05-01@10h00m00s.jsonl',
        cardPath: 'characters/Aqua.png',
      },
      {
        path: 'chats/Seraphina/Seraphina - first.jsonl',
        fileName: 'Seraphina - first.jsonl',
        cardPath: 'characters/Seraphina.png',
      },
    ]);
    expect(p.lorebooks.map((l) => l.worldName)).toEqual(['Eldoria', 'Toaru']);
    expect(p.settings).toBe('settings.json');
    expect([...p.avatars]).toEqual([
      ['user-default.png', 'User Avatars/user-default.png'],
      ['wren.webp', 'User Avatars/wren.webp'],
    ]);
  });

  it('skips everything else, each with a reason', () => {
    const p = plan(LIBRARY);
    expect(p.skipped.map((s) => s.path).sort()).toEqual(
      [
        'secrets.json',
        'characters/Seraphina/joy.png',
        'characters/notes.txt',
        'chats/Ghost/Ghost - 1.jsonl',
        'chats/Aqua/readme.md',
        'chats/stray.jsonl',
        'groups/1700000000.json',
        'group chats/1700000000.jsonl',
        'themes/Dark Lite.json',
        'backgrounds/tavern day.jpg',
        'thumbnails/avatar/Aqua.png',
      ].sort(),
    );
    for (const s of p.skipped) expect(s.reason).toMatch(/^not imported: /);
    // Chat Completion presets are brought over (D23).
    expect(p.presets).toEqual([{ path: 'OpenAI Settings/Default.json', name: 'Default' }]);
    expect(reasonOf(p, 'secrets.json')).toContain('API keys');
    expect(reasonOf(p, 'chats/Ghost/Ghost - 1.jsonl')).toContain('no card characters/Ghost.png');
    expect(reasonOf(p, 'groups/1700000000.json')).toContain('group');
    expect(reasonOf(p, 'themes/Dark Lite.json')).toContain('themes');
    expect(reasonOf(p, 'backgrounds/tavern day.jpg')).toContain('backgrounds');
  });

  it('finds the user folder under a leading folder (a chosen folder, a zip of data/), and skips what is outside it', () => {
    const nested = plan(LIBRARY.map((p) => `default-user/${p}`));
    expect(nested.root).toBe('default-user/');
    expect(nested.cards).toHaveLength(2);
    expect(nested.chats[0]).toMatchObject({ cardPath: 'default-user/characters/Aqua.png' });

    const data = plan([
      ...LIBRARY.map((p) => `data/default-user/${p}`),
      'data/cookie-secret.txt',
      'data/_storage/user.json',
    ]);
    expect(data.root).toBe('data/default-user/');
    expect(reasonOf(data, 'data/cookie-secret.txt')).toContain('outside the SillyTavern user folder');
    expect(data.settings).toBe('data/default-user/settings.json');
  });

  it('reads Windows separators and refuses paths that climb out', () => {
    const p = plan(['default-user\\characters\\Aqua.png', 'default-user/../x/characters/Evil.png']);
    expect(p.cards.map((c) => c.path)).toEqual(['default-user/characters/Aqua.png']);
    expect(reasonOf(p, 'default-user/../x/characters/Evil.png')).toBe(
      'not imported: not a path inside the folder',
    );
  });

  it('refuses a folder that is not a SillyTavern library, or holds several users', () => {
    const none = planStLibrary(files('photos/a.png', 'notes.txt'), LIMITS);
    expect(none.ok || none.error).toMatchObject({ code: 'library.invalid', message: /not a SillyTavern/ });
    const two = planStLibrary(files('alice/characters/A.png', 'bob/characters/B.png'), LIMITS);
    expect(two.ok || two.error).toMatchObject({ code: 'library.invalid', message: /alice\/, bob\// });
  });

  it('refuses more files than the limit, and skips files over their kind’s byte limit', () => {
    const many = planStLibrary(files(...Array.from({ length: 101 }, (_, i) => `chats/A/${i}.jsonl`)), LIMITS);
    expect(many.ok || many.error).toMatchObject({ code: 'library.too_large' });

    const big = planStLibrary(
      [
        { path: 'characters/Huge.png', size: 1001 },
        { path: 'characters/Fine.png', size: 1000 },
        { path: 'worlds/Huge.json', size: 5000 },
        { path: 'chats/Fine/long.jsonl', size: 2000 },
        { path: 'settings.json', size: 1001 },
        { path: 'User Avatars/huge.png', size: 1001 },
      ],
      LIMITS,
    );
    if (!big.ok) throw new Error(big.error.message);
    expect(big.value.cards.map((c) => c.fileName)).toEqual(['Fine.png']);
    expect(big.value.lorebooks).toEqual([]);
    expect(big.value.chats).toEqual([]);
    expect(big.value.settings).toBeNull();
    expect(big.value.avatars.size).toBe(0);
    const over = (size: number) => `not imported: ${size} bytes, over the 1000-byte limit`;
    expect(big.value.skipped).toEqual([
      { path: 'User Avatars/huge.png', reason: over(1001) },
      { path: 'characters/Huge.png', reason: over(1001) },
      { path: 'chats/Fine/long.jsonl', reason: over(2000) },
      { path: 'settings.json', reason: over(1001) },
      { path: 'worlds/Huge.json', reason: over(5000) },
    ]);
  });

  it('matches a chats folder to the PNG card when a JSON card has the same name', () => {
    const p = plan(['characters/Aqua.json', 'characters/Aqua.png', 'chats/Aqua/1.jsonl']);
    expect(p.cards).toHaveLength(2);
    expect(p.chats.map((c) => c.cardPath)).toEqual(['characters/Aqua.png']);
    const json = plan(['characters/Kazuma.json', 'chats/Kazuma/1.jsonl']);
    expect(json.chats.map((c) => c.cardPath)).toEqual(['characters/Kazuma.json']);
  });
});

const SETTINGS = {
  username: 'Wren',
  power_user: {
    personas: { 'user-default.png': 'Wren', 'knight.png': 'Sir Wren', 'broken.png': 42 },
    persona_descriptions: {
      'user-default.png': { description: 'A traveller.', position: 0, depth: 2, role: 0 },
      'knight.png': { description: 'A knight of Axel.', position: 0 },
    },
    default_persona: 'knight.png',
  },
  world_info_settings: {
    world_info: {
      globalSelect: ['Toaru', 'Toaru', 7],
      charLore: [
        { name: 'Aqua', extraBooks: ['Eldoria', 'Toaru'] },
        { name: 'Megumin.png', extraBooks: ['Toaru'] },
        { name: 'Nobody', extraBooks: [] },
        'junk',
      ],
    },
  },
  extension_settings: {
    note: {
      default: '',
      chara: [
        { name: 'Aqua', prompt: 'Aqua boasts.', useChara: true, position: 2 },
        { name: 'Megumin', prompt: 'Explosions only.', useChara: false },
        { name: 'Darkness', prompt: 'Stoic.', useChara: true, position: 1 },
        { prompt: 'no name' },
        'junk',
      ],
    },
  },
};

function settings(json: unknown): StSettings {
  const read = readStSettings(json);
  if (!read.ok) throw new Error(read.error.message);
  return read.value;
}

describe('readStSettings', () => {
  it('reads personas with descriptions, the default persona and lorebook attachments', () => {
    expect(settings(SETTINGS)).toEqual({
      personas: [
        { avatarFile: 'user-default.png', name: 'Wren', description: 'A traveller.' },
        { avatarFile: 'knight.png', name: 'Sir Wren', description: 'A knight of Axel.' },
        { avatarFile: 'broken.png', name: 'broken', description: '' },
      ],
      defaultPersona: 'knight.png',
      globalBooks: ['Toaru'],
      characterBooks: [
        { character: 'Aqua', books: ['Eldoria', 'Toaru'] },
        { character: 'Megumin.png', books: ['Toaru'] },
      ],
      selectedPreset: null,
      // authors-note.js AN:32-36, 201-206: position 0 replace (the default), 1 before, 2 after.
      characterNotes: [
        { character: 'Aqua', note: { text: 'Aqua boasts.', mode: 'after', enabled: true } },
        { character: 'Megumin', note: { text: 'Explosions only.', mode: 'replace', enabled: false } },
        { character: 'Darkness', note: { text: 'Stoic.', mode: 'before', enabled: true } },
      ],
      noteDefaults: { note_prompt: '' },
    });
  });

  it('reads a fresh install’s settings (no personas, no books) and old top-level world info', () => {
    expect(
      settings({ power_user: { personas: {}, persona_descriptions: {}, default_persona: null } }),
    ).toEqual({
      personas: [],
      defaultPersona: null,
      globalBooks: [],
      characterBooks: [],
      selectedPreset: null,
      characterNotes: [],
      noteDefaults: {},
    });
    expect(settings({ world_info: { globalSelect: ['Old'] } }).globalBooks).toEqual(['Old']);
  });

  it('refuses settings that are not an object', () => {
    expect(readStSettings([1, 2])).toMatchObject({ ok: false, error: { code: 'library.invalid' } });
  });
});

describe('planPersonas and attachments', () => {
  it('pairs personas with their images; images no persona uses are skipped', () => {
    const avatars = new Map([
      ['user-default.png', 'User Avatars/user-default.png'],
      ['stray.png', 'User Avatars/stray.png'],
    ]);
    const planned = planPersonas(settings(SETTINGS), avatars);
    expect(planned.personas.map((p) => [p.name, p.avatarPath])).toEqual([
      ['Wren', 'User Avatars/user-default.png'],
      ['Sir Wren', null],
      ['broken', null],
    ]);
    expect(planned.skipped).toEqual([
      { path: 'User Avatars/stray.png', reason: 'not imported: no persona in settings.json uses this image' },
    ]);
  });

  it('finds a card’s extra books by its file name with or without extension', () => {
    const s = settings(SETTINGS);
    const card = (fileName: string) => ({
      path: `characters/${fileName}`,
      fileName,
      internalName: fileName.replace(/\.png$/, ''),
    });
    expect(extraBooksOf(s, card('Aqua.png'))).toEqual(['Eldoria', 'Toaru']);
    expect(extraBooksOf(s, card('Megumin.png'))).toEqual(['Toaru']);
    expect(extraBooksOf(s, card('Darkness.png'))).toEqual([]);
  });

  it('finds a card’s author’s note by its file name without extension (getCharaFilename, utils.js:924-931)', () => {
    const s = settings(SETTINGS);
    const card = (fileName: string) => ({
      path: `characters/${fileName}`,
      fileName,
      internalName: fileName.replace(/\.png$/, ''),
    });
    expect(characterNoteOf(s, card('Aqua.png'))).toEqual({
      text: 'Aqua boasts.',
      mode: 'after',
      enabled: true,
    });
    expect(characterNoteOf(s, card('Kazuma.png'))).toBeNull();
  });

  it('gives a chat without note keys the default note of settings.json, key by key (AN:241-261)', () => {
    const s = settings({
      extension_settings: { note: { default: 'Be vivid.', defaultPosition: 0, defaultInterval: 2 } },
    });
    expect(libraryChatNote(s, {})).toEqual({
      text: 'Be vivid.',
      position: 'in_prompt',
      depth: 4,
      role: 'system',
      interval: 2,
    });
    expect(libraryChatNote(s, { note_prompt: 'Own.', note_position: 1, note_interval: null })).toEqual({
      text: 'Own.',
      position: 'in_chat',
      depth: 4,
      role: 'system',
      interval: 2,
    });
    expect(libraryChatNote(settings({}), {})).toEqual(DEFAULT_AUTHORS_NOTE);
  });

  it('reads the persona a chat is locked to (personas.js:598, 657)', () => {
    expect(chatPersona({ persona: 'knight.png' })).toBe('knight.png');
    expect(chatPersona({ persona: '' })).toBeNull();
    expect(chatPersona({ persona: 5 })).toBeNull();
    expect(chatPersona({})).toBeNull();
  });

  it('reads the world a card and a chat link', () => {
    expect(cardWorld({ world: 'Eldoria', talkativeness: '0.5' })).toBe('Eldoria');
    expect(cardWorld({ world: '' })).toBeNull();
    expect(cardWorld({ world: 3 })).toBeNull();
    expect(chatWorld({ world_info: 'Toaru' })).toBe('Toaru');
    expect(chatWorld({})).toBeNull();
  });
});
