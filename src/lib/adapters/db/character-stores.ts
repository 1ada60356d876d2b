import type { z } from 'zod';
import {
  CharacterRecordSchema,
  LorebookRecordSchema,
  PersonaRecordSchema,
  type CharacterRecord,
  type LorebookRecord,
  type PersonaRecord,
} from '$lib/chat/records';
import { HearthFailure, hearthError } from '$lib/domain/errors';
import type {
  CharacterStore,
  LorebookStore,
  PersonaStore,
  StoredIssue,
  StoredList,
} from '$lib/ports/characters';
import type { CharacterRow, HearthDatabase, LorebookRow } from './database';
import { storageFailure } from '../storage-failure';

/** Settings keys: the globally attached lorebooks and the default persona. */
export const GLOBAL_LOREBOOKS_KEY = 'globalLorebookIds';
export const DEFAULT_PERSONA_KEY = 'defaultPersonaId';

async function guarded<T>(what: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof HearthFailure) throw e;
    throw new HearthFailure(storageFailure(what, e));
  }
}

/** The first few problems of a failed decode, with their paths. */
function describeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((i) => {
    const path = i.path.map(String).join('.');
    return path ? `${path}: ${i.message}` : i.message;
  });
  const more = error.issues.length - shown.length;
  return shown.join('; ') + (more > 0 ? ` (and ${more} more)` : '');
}

type Decoded<T> = { ok: true; value: T } | { ok: false; issue: StoredIssue };

function decode<T>(schema: z.ZodType<T>, kind: string, row: unknown): Decoded<T> {
  const id =
    typeof row === 'object' && row !== null && typeof (row as { id?: unknown }).id === 'string'
      ? (row as { id: string }).id
      : '?';
  const parsed = schema.safeParse(row);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    issue: { id, message: `The stored ${kind} "${id}" cannot be read: ${describeIssues(parsed.error)}` },
  };
}

export function decodeAll<T>(schema: z.ZodType<T>, kind: string, rows: unknown[]): StoredList<T> {
  const out: StoredList<T> = { records: [], issues: [] };
  for (const row of rows) {
    const d = decode(schema, kind, row);
    if (d.ok) out.records.push(d.value);
    else out.issues.push(d.issue);
  }
  return out;
}

export function decodeOne<T>(schema: z.ZodType<T>, kind: string, row: unknown): T | undefined {
  if (row === undefined) return undefined;
  const d = decode(schema, kind, row);
  if (!d.ok) throw new HearthFailure(hearthError('storage.corrupt_record', d.issue.message));
  return d.value;
}

const characterRow = (c: CharacterRecord): CharacterRow => ({ ...c, name: c.card.name });
const lorebookRow = (l: LorebookRecord): LorebookRow => ({ ...l, name: l.book.name });

/** Characters in the Dexie `characters` table. */
export class DexieCharacterStore implements CharacterStore {
  constructor(private readonly db: HearthDatabase) {}

  list = () =>
    guarded('list characters', async () =>
      decodeAll(CharacterRecordSchema, 'character', await this.db.characters.orderBy('name').toArray()),
    );

  get = (id: string) =>
    guarded('read the character', async () =>
      decodeOne(CharacterRecordSchema, 'character', await this.db.characters.get(id)),
    );

  put = (character: CharacterRecord, options: { lorebooks?: LorebookRecord[] } = {}) =>
    guarded('save the character', () =>
      this.db.transaction('rw', [this.db.characters, this.db.lorebooks], async () => {
        if (options.lorebooks?.length) await this.db.lorebooks.bulkPut(options.lorebooks.map(lorebookRow));
        await this.db.characters.put(characterRow(character));
      }),
    );

  delete = (id: string) =>
    guarded('delete the character', () =>
      this.db.transaction('rw', [this.db.characters, this.db.chats, this.db.chatMessages], async () => {
        const chatIds = await this.db.chats.where('characterId').equals(id).primaryKeys();
        for (const chatId of chatIds) {
          await this.db.chatMessages
            .where('[chatId+index]')
            .between([chatId, -Infinity], [chatId, Infinity])
            .delete();
        }
        await this.db.chats.bulkDelete(chatIds);
        await this.db.characters.delete(id);
      }),
    );
}

const stringList = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** Personas in the Dexie `personas` table; the default persona is a setting. */
export class DexiePersonaStore implements PersonaStore {
  constructor(private readonly db: HearthDatabase) {}

  list = () =>
    guarded('list personas', async () =>
      decodeAll(PersonaRecordSchema, 'persona', await this.db.personas.orderBy('name').toArray()),
    );

  get = (id: string) =>
    guarded('read the persona', async () =>
      decodeOne(PersonaRecordSchema, 'persona', await this.db.personas.get(id)),
    );

  put = (persona: PersonaRecord) =>
    guarded('save the persona', async () => void (await this.db.personas.put(persona)));

  delete = (id: string) =>
    guarded('delete the persona', () =>
      this.db.transaction('rw', [this.db.personas, this.db.chats, this.db.settings], async () => {
        await this.db.chats.filter((c) => c.personaId === id).modify({ personaId: null });
        const current = await this.db.settings.get(DEFAULT_PERSONA_KEY);
        if (current?.value === id) await this.db.settings.delete(DEFAULT_PERSONA_KEY);
        await this.db.personas.delete(id);
      }),
    );

  defaultId = () =>
    guarded('read the default persona', async () => {
      const value = (await this.db.settings.get(DEFAULT_PERSONA_KEY))?.value;
      return typeof value === 'string' ? value : null;
    });

  setDefaultId = (id: string | null) =>
    guarded('save the default persona', async () => {
      if (id === null) await this.db.settings.delete(DEFAULT_PERSONA_KEY);
      else await this.db.settings.put({ key: DEFAULT_PERSONA_KEY, value: id });
    });
}

/** Lorebooks in the Dexie `lorebooks` table; the global ones are a setting. */
export class DexieLorebookStore implements LorebookStore {
  constructor(private readonly db: HearthDatabase) {}

  list = () =>
    guarded('list lorebooks', async () =>
      decodeAll(LorebookRecordSchema, 'lorebook', await this.db.lorebooks.orderBy('name').toArray()),
    );

  get = (id: string) =>
    guarded('read the lorebook', async () =>
      decodeOne(LorebookRecordSchema, 'lorebook', await this.db.lorebooks.get(id)),
    );

  put = (lorebook: LorebookRecord) =>
    guarded('save the lorebook', async () => void (await this.db.lorebooks.put(lorebookRow(lorebook))));

  delete = (id: string) =>
    guarded('delete the lorebook', () =>
      this.db.transaction(
        'rw',
        [this.db.lorebooks, this.db.characters, this.db.chats, this.db.settings],
        async () => {
          const detach = (row: { lorebookIds: string[] }) => {
            row.lorebookIds = row.lorebookIds.filter((x) => x !== id);
          };
          await this.db.characters.where('lorebookIds').equals(id).modify(detach);
          await this.db.chats.where('lorebookIds').equals(id).modify(detach);
          const global = stringList((await this.db.settings.get(GLOBAL_LOREBOOKS_KEY))?.value);
          if (global.includes(id)) {
            await this.db.settings.put({ key: GLOBAL_LOREBOOKS_KEY, value: global.filter((x) => x !== id) });
          }
          await this.db.lorebooks.delete(id);
        },
      ),
    );

  globalIds = () =>
    guarded('read the global lorebooks', async () =>
      stringList((await this.db.settings.get(GLOBAL_LOREBOOKS_KEY))?.value),
    );

  setGlobalIds = (ids: string[]) =>
    guarded('save the global lorebooks', async () => {
      await this.db.settings.put({ key: GLOBAL_LOREBOOKS_KEY, value: [...new Set(ids)] });
    });
}
