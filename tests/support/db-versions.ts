import Dexie from 'dexie';

/**
 * Facts about the past: the `db.version(n).stores(...)` blocks of
 * src/lib/adapters/db/database.ts as the commits that wrote the fixtures (tests/fixtures/db/)
 * declared them. Copied, never shared with src: the current code must open what they made.
 */
const BLOCKS: Record<number, Record<string, string>> = {
  1: {
    sessions: 'id, updatedAt',
    sessionMessages: '[sessionId+index], runId',
    runs: 'id, [target.sessionId+createdAt], status',
    events: '[runId+seq]',
    connections: 'id',
    profiles: 'id',
    settings: 'key',
  },
  2: {},
  3: {
    characters: 'id, name, updatedAt, *lorebookIds',
    personas: 'id, name',
    lorebooks: 'id, name',
    chats: 'id, characterId, updatedAt, [characterId+updatedAt], *lorebookIds',
    chatMessages: '[chatId+index]',
  },
  4: { runs: 'id, [target.sessionId+createdAt], [target.chatId+createdAt], status' },
  5: { records: '[workspace+path], workspace' },
  6: { mcpServers: 'id', mcpCatalogs: 'serverId', mcpCredentials: 'serverId' },
  7: { extensions: 'id', extensionFiles: '[extensionId+path], extensionId' },
  8: { skills: 'name' },
  9: { presets: 'id, name' },
};

/** Version 6 as d304f35 introduced it; 38fa094 then added `mcpCredentials` without a new number. */
const FIRST_VERSION_6 = { mcpServers: 'id', mcpCatalogs: 'serverId' };

/** A fixture database: the rows of every table, bytes as `{ "$bytes": base64 }`. */
export interface DbFixture {
  version: number;
  tables: Record<string, unknown[]>;
}

/** The newest version any fixture has: each new database version adds one. */
export const NEWEST_FIXTURE_VERSION = Math.max(...Object.keys(BLOCKS).map(Number));

/** A Dexie declaring exactly the schema the fixture's version had. */
export function databaseAtVersion(name: string, version: number): Dexie {
  const db = new Dexie(name);
  for (let n = 1; n <= version; n++) {
    db.version(n).stores(n === 6 && version === 6 ? FIRST_VERSION_6 : BLOCKS[n]!);
  }
  return db;
}

function decodeBytes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeBytes);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]![0] === '$bytes' && typeof entries[0]![1] === 'string') {
    return Uint8Array.from(atob(entries[0]![1]), (c) => c.charCodeAt(0));
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, decodeBytes(v)]));
}

/** The fixture's rows per table, with their bytes decoded. */
export const fixtureTables = (fixture: DbFixture): Record<string, unknown[]> =>
  decodeBytes(fixture.tables) as Record<string, unknown[]>;

/** Creates `name` as the fixture's version left it: its schema, its rows; then closes it. */
export async function createFixtureDatabase(name: string, fixture: DbFixture): Promise<void> {
  const db = databaseAtVersion(name, fixture.version);
  await db.open();
  const tables = fixtureTables(fixture);
  await db.transaction('rw', Object.keys(tables), async () => {
    for (const [table, rows] of Object.entries(tables)) await db.table(table).bulkAdd(rows);
  });
  db.close();
}
