import 'fake-indexeddb/auto';
import Dexie from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieConnectionStore } from '$lib/adapters/db/stores';
import { connectionSchema, type Connection } from '$lib/domain/connection';

let name = '';
let db: HearthDatabase | undefined;

afterEach(async () => {
  db?.close();
  await Dexie.delete(name);
});

describe('DexieConnectionStore', () => {
  it('reads a row saved with the old images yes/no as a current connection', async () => {
    name = `connections-${Math.random()}`;
    db = openHearthDatabase(name);
    const row = {
      kind: 'remote',
      id: 'mine',
      displayName: 'Mine',
      preset: 'ollama',
      wire: 'openai-chat',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: '',
      model: 'llava:13b',
      relayUrl: '',
      capabilities: { tools: true, images: true, reasoning: false },
    };
    await db.connections.put(row as unknown as Connection);
    const store = new DexieConnectionStore(db);
    const read = await store.get('mine');
    expect(read?.kind === 'remote' && read.capabilities.images).toBe('on');
    expect(connectionSchema.safeParse(read).success).toBe(true);
    expect(await store.list()).toEqual([read]);
    expect(await store.get('gone')).toBeUndefined();
  });
});
