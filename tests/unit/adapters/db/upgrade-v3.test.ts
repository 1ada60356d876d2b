import 'fake-indexeddb/auto';
import Dexie from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieCharacterStore } from '$lib/adapters/db/character-stores';
import { newCharacterCard } from '$lib/chat/card';

let name = '';
let db: HearthDatabase | undefined;

afterEach(async () => {
  db?.close();
  await Dexie.delete(name);
});

/** The database as version 2 left it (the schema of database.ts versions 1-2). */
async function openVersion2(dbName: string): Promise<Dexie> {
  const old = new Dexie(dbName);
  old.version(1).stores({
    sessions: 'id, updatedAt',
    sessionMessages: '[sessionId+index], runId',
    runs: 'id, [target.sessionId+createdAt], status',
    events: '[runId+seq]',
    connections: 'id',
    profiles: 'id',
    settings: 'key',
  });
  old.version(2).stores({});
  await old.open();
  return old;
}

describe('Dexie upgrade to version 3', () => {
  it('keeps connections, sessions, messages and settings, and adds the character tables', async () => {
    name = `upgrade-v3-${Math.random()}`;
    const old = await openVersion2(name);
    const connection = {
      kind: 'remote',
      id: 'mine',
      displayName: 'Mine',
      preset: 'custom',
      wire: 'openai-chat',
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKey: 'sk-secret',
      model: 'm',
      relayUrl: '',
      capabilities: { tools: true, images: false, reasoning: false },
    };
    const session = { id: 'ses_1', title: 'Kept', connectionId: 'mine', createdAt: 1, updatedAt: 2 };
    await old.table('connections').put(connection);
    await old.table('sessions').put(session);
    await old.table('sessionMessages').put({ sessionId: 'ses_1', index: 0, role: 'user', content: 'hi' });
    await old.table('settings').put({ key: 'defaultConnectionId', value: 'mine' });
    expect(old.verno).toBe(2);
    old.close();

    db = openHearthDatabase(name);
    await db.open();
    expect(db.verno).toBeGreaterThanOrEqual(3);
    expect(await db.connections.toArray()).toEqual([connection]);
    expect(await db.sessions.toArray()).toEqual([session]);
    expect(await db.sessionMessages.count()).toBe(1);
    expect(await db.settings.get('defaultConnectionId')).toEqual({
      key: 'defaultConnectionId',
      value: 'mine',
    });

    for (const table of ['characters', 'personas', 'lorebooks', 'chats', 'chatMessages'] as const) {
      expect(await db[table].count(), table).toBe(0);
    }
    const store = new DexieCharacterStore(db);
    await store.put({
      id: 'chr_1',
      card: newCharacterCard('Ada'),
      lorebookIds: ['lb_1'],
      createdAt: 1,
      updatedAt: 1,
    });
    expect((await store.get('chr_1'))?.card.name).toBe('Ada');
    expect(await db.characters.where('lorebookIds').equals('lb_1').primaryKeys()).toEqual(['chr_1']);
  });
});
