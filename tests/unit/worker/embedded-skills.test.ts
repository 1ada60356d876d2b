import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import {
  DexieCharacterStore,
  DexieLorebookStore,
  DexiePersonaStore,
} from '$lib/adapters/db/character-stores';
import { encodeBase64 } from '$lib/domain/base64';
import type { RuntimeContext } from '$lib/worker/context';
import { characterHandlers } from '$lib/worker/handlers/characters';
import { skillHandlers } from '$lib/worker/handlers/skills';
import { Transfer } from '$lib/worker/rpc';
import { memorySkills } from '../../support/memory-skills';

/**
 * Skills a character card carries (tools.md §16.3): offered after the card is imported, installed
 * for that character when the person confirms, and gone with the character unless another source
 * brought them too.
 */
function api() {
  const db = openHearthDatabase(`embedded-skills-${Math.random()}`);
  const ctx = {
    db,
    stores: {
      characters: new DexieCharacterStore(db),
      personas: new DexiePersonaStore(db),
      lorebooks: new DexieLorebookStore(db),
    },
    skills: memorySkills(db),
  } as unknown as RuntimeContext;
  const methods = { ...characterHandlers(ctx).methods, ...skillHandlers(ctx).methods } as Record<
    string,
    (p: unknown, s: AbortSignal) => Promise<unknown>
  >;
  const signal = new AbortController().signal;
  return async <T>(method: string, params: unknown): Promise<T> => {
    const v = await methods[method]!(params, signal);
    return (v instanceof Transfer ? v.value : v) as T;
  };
}

const skillFiles = (name: string, extra: { path: string; encoding: string; content: string }[] = []) => ({
  bundleFormat: 'inline-files-v1',
  source: { kind: 'test' },
  files: [
    {
      path: 'SKILL.md',
      encoding: 'utf8',
      content: `---\nname: ${name}\ndescription: ${name} for this character.\n---\nUse it.\n`,
    },
    ...extra,
  ],
});

const card = (skills: unknown) =>
  new TextEncoder().encode(
    JSON.stringify({
      spec: 'chara_card_v2',
      spec_version: '2.0',
      data: {
        name: 'Mira',
        description: 'A cartographer.',
        first_mes: 'Hello.',
        extensions: { tauritavern: { skills } },
      },
    }),
  );

describe('skills embedded in a character card', () => {
  it('are offered after import, installed for the character, and removed with it', async () => {
    const call = api();
    const icon = encodeBase64(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    const { character } = await call<{ character: { id: string } }>('characters.import', {
      fileName: 'mira.json',
      bytes: card({
        version: 1,
        items: [
          skillFiles('maps', [{ path: 'assets/icon.png', encoding: 'base64', content: icon }]),
          skillFiles('routes'),
        ],
      }),
    });
    const offered = await call<{ name: string; change: string; files: number }[]>('skills.embedded', {
      characterId: character.id,
    });
    expect(offered.map((o) => [o.name, o.change, o.files])).toEqual([
      ['maps', 'new', 2],
      ['routes', 'new', 1],
    ]);
    // Nothing is installed before the person confirms.
    expect(await call('skills.list', undefined)).toEqual([]);

    await call('skills.installEmbedded', { characterId: character.id });
    const installed = await call<{ name: string; scopes: unknown[]; sources: string[] }[]>(
      'skills.list',
      undefined,
    );
    expect(installed).toMatchObject([
      {
        name: 'maps',
        scopes: [{ kind: 'character', characterId: character.id }],
        sources: [`character:${character.id}`],
      },
      { name: 'routes' },
    ]);
    const iconRead = await call<{ bytes: Uint8Array }>('skills.read', {
      name: 'maps',
      path: 'assets/icon.png',
    });
    expect([...iconRead.bytes]).toEqual([0x89, 0x50, 0x4e, 0x47]);

    // "routes" also arrives from a file: it stays when the character goes, "maps" goes.
    await call('skills.install', {
      files: [{ path: 'SKILL.md', bytes: new TextEncoder().encode(skillFiles('routes').files[0]!.content) }],
      scope: { kind: 'global' },
      source: 'file:routes.md',
    });
    await call('characters.delete', { id: character.id });
    expect(await call('skills.list', undefined)).toMatchObject([
      { name: 'routes', scopes: [{ kind: 'global' }], sources: ['file:routes.md'] },
    ]);
  });

  it('refuses malformed embedded skills with where they are wrong', async () => {
    const call = api();
    const { character } = await call<{ character: { id: string } }>('characters.import', {
      fileName: 'bad.json',
      bytes: card({ version: 1, items: [{ bundleFormat: 'zip-v9', files: [] }] }),
    });
    await expect(call('skills.embedded', { characterId: character.id })).rejects.toMatchObject({
      error: { code: 'skill.invalid', message: expect.stringContaining('items.0.bundleFormat') },
    });
  });
});
