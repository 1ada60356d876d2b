import { describe, expect, it } from 'vitest';
import { zipSync } from 'fflate';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { RuntimeContext } from '$lib/worker/context';
import { libraryHandlers } from '$lib/worker/handlers/library';
import type { StLibrarySource, StLibrarySummary, StLibraryUpdate } from '$lib/worker/protocol';
import { chatHarness } from '../../support/chat-harness';
import { b64json, bytes, fixture, fixtureJson, pngWithText, tinyPng, tinyPngChunks } from '../chat/helpers';

async function runtime() {
  const { deps, service } = await chatHarness({} as ModelGateway);
  const ctx = { stores: deps, chats: service } as unknown as RuntimeContext;
  const stream = libraryHandlers(ctx).streams['library.importSillyTavern'];
  const run = async (source: StLibrarySource) => {
    const updates: StLibraryUpdate[] = [];
    for await (const u of stream(source, new AbortController().signal)) updates.push(u);
    const last = updates.at(-1);
    if (last?.type !== 'done') throw new Error('the import did not finish');
    return { summary: last.summary, progress: updates.filter((u) => u.type === 'progress') };
  };
  return { deps, service, run };
}

const orrin = fixtureJson('card-v2.json') as { data: Record<string, unknown> };
const wren = pngWithText([], tinyPngChunks([10, 20, 30, 255]));

/** A SillyTavern data/default-user/ folder, by path. */
function library(): Record<string, Uint8Array> {
  return {
    'settings.json': bytes(
      JSON.stringify({
        power_user: {
          personas: { 'wren.png': 'Wren', 'sir.png': 'Sir Wren' },
          persona_descriptions: {
            'wren.png': { description: 'A traveller.', position: 0 },
            'sir.png': { description: 'A knight.', position: 0 },
          },
          default_persona: 'sir.png',
        },
        world_info_settings: {
          world_info: {
            globalSelect: ['Harbor', 'Missing'],
            charLore: [{ name: 'Orrin', extraBooks: ['Harbor'] }],
          },
        },
      }),
    ),
    'secrets.json': bytes('{"api_key_openai":"sk-never"}'),
    'characters/Orrin.png': pngWithText([['chara', b64json(orrin)]]),
    'characters/Plain.json': bytes(
      JSON.stringify({ name: 'Plain', description: 'A plain card.', first_mes: 'Hi.' }),
    ),
    'characters/Broken.png': bytes('not a png'),
    'chats/Orrin/Orrin - 1.jsonl': bytes(fixture('chat.jsonl')),
    'chats/Plain/Plain - 1.jsonl': bytes(
      '{"user_name":"Wren","character_name":"Plain","chat_metadata":{}}\n{"name":"Plain","is_user":false,"mes":"Hi."}',
    ),
    'chats/Broken/Broken - 1.jsonl': bytes('{"user_name":"Wren"}\n{"name":"x","mes":"y"}'),
    'chats/Ghost/Ghost - 1.jsonl': bytes('{"user_name":"Wren"}'),
    'worlds/Brindle Street.json': bytes(fixture('world-info.json')),
    'worlds/Harbor.json': bytes(
      JSON.stringify({ entries: { 0: { uid: 0, key: ['dock'], content: 'Docks.' } } }),
    ),
    'worlds/Bad.json': bytes('{ nope'),
    'User Avatars/wren.png': wren,
    'User Avatars/unused.png': tinyPng(),
    'themes/Dark.json': bytes('{}'),
  };
}

const folder = (files: Record<string, Uint8Array>, top = 'default-user/'): StLibrarySource => ({
  kind: 'folder',
  files: Object.entries(files).map(([path, data]) => ({
    path: top + path,
    file: new Blob([data as Uint8Array<ArrayBuffer>]),
  })),
});
const zip = (files: Record<string, Uint8Array>): StLibrarySource => ({
  kind: 'zip',
  file: new Blob([zipSync(files) as Uint8Array<ArrayBuffer>]),
});

const reason = (s: StLibrarySummary, path: string) =>
  s.skipped.filter((x) => x.path === path).map((x) => x.reason);

describe('library.importSillyTavern', () => {
  it('imports cards, chats with swipes, lorebooks and personas, attached as they were', async () => {
    const { deps, run } = await runtime();
    const { summary, progress } = await run(folder(library()));

    expect(summary.characters.map((c) => c.name).sort()).toEqual(['Orrin the Lamplighter', 'Plain']);
    expect(summary.lorebooks.map((l) => l.name).sort()).toEqual(['Brindle Street', 'Harbor']);
    expect(summary.personas.map((p) => p.name)).toEqual(['Wren', 'Sir Wren']);
    expect(summary.chats.map((c) => [c.characterName, c.title, c.messages])).toEqual([
      ['Orrin the Lamplighter', 'Orrin - 1', 3],
      ['Plain', 'Plain - 1', 1],
    ]);

    // Progress counted every file it imports, ending at the total.
    // 3 lorebooks, 3 cards, 3 chats with a card, 2 personas.
    expect(progress[0]).toMatchObject({ done: 0, total: 11 });
    expect(progress.at(-1)).toMatchObject({ done: 11, total: 11 });

    // Skipped, each with why; one bad file did not stop the rest.
    expect(reason(summary, 'default-user/secrets.json')[0]).toContain('API keys');
    expect(reason(summary, 'default-user/characters/Broken.png')[0]).toMatch(/^not imported: /);
    expect(reason(summary, 'default-user/chats/Broken/Broken - 1.jsonl')[0]).toContain('was not imported');
    expect(reason(summary, 'default-user/chats/Ghost/Ghost - 1.jsonl')[0]).toContain('no card');
    expect(reason(summary, 'default-user/worlds/Bad.json')[0]).toContain('not valid JSON');
    expect(reason(summary, 'default-user/User Avatars/unused.png')[0]).toContain('no persona');
    expect(reason(summary, 'default-user/themes/Dark.json')[0]).toContain('themes');
    expect(reason(summary, 'default-user/settings.json')).toEqual([
      'lorebook “Missing” not attached: worlds/Missing.json is not in the library or could not be imported',
    ]);

    // The card links Brindle Street: the library's world is attached first, not a second copy
    // from the card's embedded book; settings.json's charLore adds Harbor.
    const books = (await deps.lorebooks.list()).records;
    const byName = (name: string) => books.filter((b) => b.book.name === name);
    expect(byName('Brindle Street')).toHaveLength(1);
    const brindle = byName('Brindle Street')[0]!;
    const harbor = byName('Harbor')[0]!;
    const orrinRecord = await deps.characters.get(
      summary.characters.find((c) => c.name.startsWith('Orrin'))!.id,
    );
    expect(orrinRecord!.lorebookIds).toEqual([brindle.id, harbor.id]);
    expect(await deps.lorebooks.globalIds()).toEqual([harbor.id]);

    // The chat links its world, and keeps its swipes.
    const chatId = summary.chats[0]!.id;
    const chat = await deps.chats.get(chatId);
    expect(chat!.lorebookIds).toEqual([brindle.id]);
    const [greeting] = await deps.chats.messages(chatId);
    expect(greeting!.swipes).toHaveLength(2);
    expect(greeting!.swipeId).toBe(1);
    expect(summary.attachments).toEqual(
      expect.arrayContaining([
        { lorebook: 'Brindle Street', scope: 'character', target: 'Orrin the Lamplighter' },
        { lorebook: 'Harbor', scope: 'character', target: 'Orrin the Lamplighter' },
        { lorebook: 'Brindle Street', scope: 'chat', target: 'Orrin - 1' },
        { lorebook: 'Harbor', scope: 'global', target: '' },
      ]),
    );
    expect(summary.attachments).toHaveLength(4);

    // Personas with their descriptions and image; SillyTavern's default is Hearth's now.
    const personas = (await deps.personas.list()).records;
    const wrenRecord = personas.find((p) => p.name === 'Wren')!;
    expect(wrenRecord.description).toBe('A traveller.');
    expect(wrenRecord.avatar).toEqual(wren);
    const sir = personas.find((p) => p.name === 'Sir Wren')!;
    expect(sir.avatar).toBeUndefined();
    expect(await deps.personas.defaultId()).toBe(sir.id);
    expect(summary.defaultPersona).toEqual({ id: sir.id, name: 'Sir Wren' });
  });

  it('lists a card’s own lorebook with the world files, as many as the Lorebooks page then shows', async () => {
    const { deps, run } = await runtime();
    const { world: _world, ...extensions } = orrin.data.extensions as Record<string, unknown>;
    const unlinked = { ...orrin, data: { ...orrin.data, extensions } };
    const { summary } = await run(
      folder({
        'characters/Orrin.png': pngWithText([['chara', b64json(unlinked)]]),
        'worlds/Harbor.json': library()['worlds/Harbor.json']!,
      }),
    );
    const records = (await deps.lorebooks.list()).records;
    expect(summary.lorebooks).toHaveLength(records.length);
    expect(summary.lorebooks.map((b) => [b.name, b.source?.kind, b.path])).toEqual([
      ['Harbor', 'worldInfo', 'default-user/worlds/Harbor.json'],
      ['Brindle Street', 'card', 'default-user/characters/Orrin.png'],
    ]);
  });

  it('imports the same library as a zip identically, and a second time skips everything as unchanged', async () => {
    const { deps, run } = await runtime();
    const first = await run(zip(library()));
    expect(first.summary.characters).toHaveLength(2);
    expect(first.summary.chats).toHaveLength(2);
    expect(first.summary.lorebooks).toHaveLength(2);
    expect(first.summary.personas).toHaveLength(2);
    expect(first.summary.attachments).toHaveLength(4);
    const counts = async () => ({
      characters: (await deps.characters.list()).records.length,
      lorebooks: (await deps.lorebooks.list()).records.length,
      personas: (await deps.personas.list()).records.length,
      global: (await deps.lorebooks.globalIds()).length,
    });
    const before = await counts();

    const again = await run(folder(library()));
    expect(again.summary).toMatchObject({
      characters: [],
      chats: [],
      lorebooks: [],
      personas: [],
      attachments: [],
      defaultPersona: null,
    });
    const unchanged = again.summary.skipped.filter((s) => s.reason.includes('already in Hearth, unchanged'));
    expect(unchanged.map((s) => s.path).sort()).toEqual(
      [
        'default-user/worlds/Brindle Street.json',
        'default-user/worlds/Harbor.json',
        'default-user/characters/Orrin.png',
        'default-user/characters/Plain.json',
        'default-user/chats/Orrin/Orrin - 1.jsonl',
        'default-user/chats/Plain/Plain - 1.jsonl',
        'default-user/User Avatars/wren.png',
        'default-user/settings.json',
      ].sort(),
    );
    expect(await counts()).toEqual(before);
  });

  it('imports a changed card, chat and lorebook as new, leaving what is there as it was', async () => {
    const { deps, run } = await runtime();
    await run(folder(library()));
    const changed = library();
    changed['characters/Plain.json'] = bytes(
      JSON.stringify({ name: 'Plain', description: 'Changed.', first_mes: 'Hi.' }),
    );
    changed['chats/Orrin/Orrin - 1.jsonl'] = bytes(
      `${fixture('chat.jsonl')}\n{"name":"Wren","is_user":true,"mes":"More."}`,
    );
    changed['worlds/Harbor.json'] = bytes(
      JSON.stringify({ entries: { 0: { uid: 0, key: ['pier'], content: 'Pier.' } } }),
    );
    const { summary } = await run(folder(changed));
    expect(summary.characters.map((c) => c.name)).toEqual(['Plain']);
    expect(summary.lorebooks.map((l) => l.name)).toEqual(['Harbor']);
    expect(summary.chats.map((c) => [c.title, c.messages])).toEqual([
      ['Orrin - 1', 4],
      // The new Plain's chat goes with it.
      ['Plain - 1', 1],
    ]);
    const plains = (await deps.characters.list()).records.filter((c) => c.card.name === 'Plain');
    expect(plains.map((c) => c.card.description).sort()).toEqual(['A plain card.', 'Changed.']);
    // The existing Orrin (unchanged) now has two chats of that name; the old one as it was.
    const orrinId = (await deps.characters.list()).records.find((c) => c.card.name.startsWith('Orrin'))!.id;
    const counts = await Promise.all(
      (await deps.chats.list(orrinId)).map(async (c) => (await deps.chats.messages(c.id)).length),
    );
    expect(counts.sort()).toEqual([3, 4]);
    // The changed Harbor is new and global as the library has it; the old one is left as it was.
    const harbors = (await deps.lorebooks.list()).records.filter((b) => b.book.name === 'Harbor');
    expect(harbors).toHaveLength(2);
    expect((await deps.lorebooks.globalIds()).sort()).toEqual(harbors.map((b) => b.id).sort());
  });

  it('gives each chat the persona it was locked to, and each character its own author’s note', async () => {
    const { deps, service, run } = await runtime();
    const files = library();
    const settings = JSON.parse(new TextDecoder().decode(files['settings.json']));
    settings.extension_settings = {
      note: {
        chara: [{ name: 'Orrin', prompt: 'Orrin hums while he works.', useChara: true, position: 2 }],
        default: 'Be vivid.',
        defaultInterval: 2,
      },
    };
    files['settings.json'] = bytes(JSON.stringify(settings));
    const [head, ...rest] = fixture('chat.jsonl').split('\n');
    const meta = JSON.parse(head!);
    meta.chat_metadata.persona = 'wren.png';
    meta.chat_metadata.note_prompt = 'Night falls.';
    meta.chat_metadata.note_position = 0;
    files['chats/Orrin/Orrin - 1.jsonl'] = bytes([JSON.stringify(meta), ...rest].join('\n'));
    files['chats/Plain/Plain - 2.jsonl'] = bytes(
      '{"user_name":"Wren","character_name":"Plain","chat_metadata":{"persona":"gone.png"}}\n{"name":"Plain","is_user":false,"mes":"Hi."}',
    );
    const { summary } = await run(folder(files));

    const personas = (await deps.personas.list()).records;
    const wrenId = personas.find((p) => p.name === 'Wren')!.id;
    const chatOf = (title: string) => deps.chats.get(summary.chats.find((c) => c.title === title)!.id);
    const orrinChat = (await chatOf('Orrin - 1'))!;
    expect(orrinChat.personaId).toBe(wrenId);
    // Not locked: the default persona (SillyTavern's default_persona, Sir Wren, is Hearth's now).
    expect((await chatOf('Plain - 1'))!.personaId).toBeNull();
    expect((await chatOf('Plain - 2'))!.personaId).toBeNull();
    expect(reason(summary, 'default-user/chats/Plain/Plain - 2.jsonl')).toEqual([
      'persona gone.png not set: it was not imported, so the chat uses the default persona',
    ]);

    // A chat without note keys takes settings.json's default note; one with them keeps its own.
    expect((await chatOf('Plain - 1'))!.authorsNote).toEqual({
      text: 'Be vivid.',
      position: 'in_chat',
      depth: 4,
      role: 'system',
      interval: 2,
    });
    expect(orrinChat.authorsNote).toEqual({
      text: 'Night falls.',
      position: 'in_prompt',
      depth: 4,
      role: 'system',
      interval: 1,
    });

    const orrin = await deps.characters.get(orrinChat.characterId);
    expect(orrin!.note).toEqual({ text: 'Orrin hums while he works.', mode: 'after', enabled: true });

    // The reply's prompt speaks as the locked persona, with the chat's note and the character's after it.
    const preview = await service.previewPrompt(orrinChat.id);
    const texts = preview.messages.map((m) => m.text);
    expect(texts[0]).toContain('a roleplay chat with Wren.');
    expect(texts).toContain('A traveller.');
    expect(texts).toContain(
      '[Circumstances and context of the dialogue: Dusk in the city of Brindle. Wren follows Orrin the Lamplighter on his rounds.]',
    );
    expect(texts.join('\n')).not.toContain('A knight.');
    expect(preview.messages[2]).toMatchObject({
      text: 'Night falls.\nOrrin hums while he works.',
      label: "author's note",
    });
  });

  it('keeps Hearth’s own default persona', async () => {
    const { deps, run } = await runtime();
    const now = Date.now();
    await deps.personas.put({ id: 'me', name: 'Me', description: '', createdAt: now, updatedAt: now });
    await deps.personas.setDefaultId('me');
    const { summary } = await run(folder(library(), ''));
    expect(summary.defaultPersona).toBeNull();
    expect(await deps.personas.defaultId()).toBe('me');
    expect(reason(summary, 'settings.json')).toContain(
      'default persona “Sir Wren” not set: Hearth’s default persona “Me” is kept',
    );
  });

  it('stops saving when the browser’s storage is full, and still ends with the summary', async () => {
    const { deps, run } = await runtime();
    const full = hearthError('storage.quota_exceeded', 'Storage is full: the lorebook was not saved.');
    let tries = 0;
    deps.lorebooks.put = async () => {
      tries++;
      throw new HearthFailure(full);
    };
    const { summary } = await run(folder(library(), ''));
    // The first save that did not fit is the last one tried.
    expect(tries).toBe(1);
    expect(summary.lorebooks).toEqual([]);
    expect(summary.characters).toEqual([]);
    expect(summary.personas).toEqual([]);
    for (const path of [
      'worlds/Harbor.json',
      'characters/Orrin.png',
      'chats/Plain/Plain - 1.jsonl',
      'User Avatars/wren.png',
    ]) {
      expect(reason(summary, path)).toEqual([`not imported: ${full.message}`]);
    }
    expect((await deps.characters.list()).records.map((c) => c.card.name)).toEqual(['Brindle']);
  });

  it('refuses what is not a SillyTavern library, and a zip that is not one', async () => {
    const { run } = await runtime();
    await expect(run(folder({ 'notes.txt': bytes('hi') }))).rejects.toMatchObject({
      error: { code: 'library.invalid', message: expect.stringContaining('not a SillyTavern') },
    });
    await expect(
      run({ kind: 'zip', file: new Blob([bytes('PK nope') as Uint8Array<ArrayBuffer>]) }),
    ).rejects.toMatchObject({
      error: { code: 'library.invalid', message: expect.stringContaining('not a readable zip archive') },
    });
  });
});
