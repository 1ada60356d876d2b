import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import { HearthFailure } from '$lib/domain/errors';
import type { JsonValue } from '$lib/domain/json';
import { defaultWriterProfile, newChatProfile } from '$lib/domain/profile';

const fixture = (name: string): JsonValue =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../../domain/profile/__fixtures__', name), 'utf8'));

let db: HearthDatabase;
let n = 0;
const open = () => {
  db = openHearthDatabase(`profile-store-${++n}-${Math.random()}`);
  return new DexieProfileStore(db);
};
afterEach(async () => {
  db.close();
  await db.delete();
});

describe('DexieProfileStore', () => {
  it('saves, reads, lists by id and deletes', async () => {
    const store = open();
    const b = newChatProfile('b-writer', 'B');
    const a = newChatProfile('a-writer', 'A');
    await store.put(b);
    await store.put(a);
    expect(await store.get('a-writer')).toEqual(a);
    expect(await store.list()).toEqual({ profiles: [a, b], issues: [] });
    expect(await store.ids()).toEqual(['a-writer', 'b-writer']);
    await store.delete('a-writer');
    expect(await store.get('a-writer')).toBeUndefined();
  });

  it('stores the schema-5 document as plain JSON', async () => {
    const store = open();
    await store.put(newChatProfile('plain', 'Plain'));
    const row = await db.profiles.get('plain');
    expect(row?.document).toEqual(JSON.parse(JSON.stringify(newChatProfile('plain', 'Plain'))));
  });

  it('renames in one transaction', async () => {
    const store = open();
    await store.put(newChatProfile('old', 'Old'));
    await store.put(newChatProfile('new', 'New'), { replaces: 'old' });
    expect((await store.list()).profiles.map((p) => p.id)).toEqual(['new']);
  });

  it('reads older schemas through the migration and persists them at schema 5', async () => {
    const store = open();
    await db.profiles.put({ id: 'lore-keeper', document: fixture('v1-lore-keeper.json') });
    await db.profiles.put({ id: 'planner', document: fixture('v3-planner.json') });
    const listed = await store.list();
    expect(listed.issues).toEqual([]);
    expect(listed.profiles).toEqual([
      fixture('v1-lore-keeper.expected.json'),
      fixture('v3-planner.expected.json'),
    ]);
    expect((await db.profiles.get('lore-keeper'))?.document).toEqual(fixture('v1-lore-keeper.expected.json'));
    await db.profiles.put({ id: 'editor', document: fixture('v4-editor.json') });
    expect(await store.get('editor')).toEqual(fixture('v4-editor.expected.json'));
    expect((await db.profiles.get('editor'))?.document).toMatchObject({ schemaVersion: 5 });
  });

  it('skips unreadable rows when listing and reports them as issues', async () => {
    const store = open();
    const good = newChatProfile('good', 'Good');
    await store.put(good);
    await db.profiles.bulkPut([
      { id: 'broken-text', document: '{"schemaVersion": 5, "id": ' },
      { id: 'future', document: { ...defaultWriterProfile(), id: 'future', schemaVersion: 9 } as JsonValue },
      {
        id: 'unknown-field',
        document: { ...defaultWriterProfile(), id: 'unknown-field', colour: 'red' } as JsonValue,
      },
      { id: 'elsewhere', document: { ...defaultWriterProfile(), id: 'other-id' } as JsonValue },
      { id: 'as-text', document: JSON.stringify(newChatProfile('as-text', 'As text')) },
    ]);
    const listed = await store.list();
    expect(listed.profiles.map((p) => p.id)).toEqual(['as-text', 'good']);
    expect(listed.issues).toEqual([
      { profileId: 'broken-text', kind: 'invalidJson', message: expect.stringMatching(/not JSON/) },
      {
        profileId: 'elsewhere',
        kind: 'invalidProfile',
        message: expect.stringMatching(/stored as "elsewhere"/),
      },
      { profileId: 'future', kind: 'invalidProfile', message: expect.stringMatching(/Schema version 9/) },
      { profileId: 'unknown-field', kind: 'invalidProfile', message: expect.stringMatching(/colour/) },
    ]);
  });

  it('rejects reading an unreadable row with a coded error', async () => {
    const store = open();
    await db.profiles.put({ id: 'broken', document: 'nope' });
    await expect(store.get('broken')).rejects.toMatchObject({ code: 'agent.profile_invalid_json' });
    await db.profiles.put({ id: 'wrong', document: { id: 'wrong' } });
    const failure = await store.get('wrong').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(HearthFailure);
    expect(failure).toMatchObject({ code: 'agent.profile_invalid' });
  });

  it('turns database failures into storage.failed', async () => {
    const store = open();
    db.close();
    await expect(store.list()).rejects.toMatchObject({ code: 'storage.failed' });
  });
});
