import { describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieExtensionStore } from '$lib/adapters/db/extension-store';
import { openWatched } from '$lib/adapters/db/opening';
import {
  NEWER_VERSION_MESSAGE,
  UPDATED_ELSEWHERE_MESSAGE,
  type DatabaseProblem,
} from '$lib/domain/database-problem';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { memoryLocks } from '$lib/adapters/system/locks';
import { upgradeConnection } from '$lib/domain/connection';
import type { RunEvent } from '$lib/domain/events';
import { ACTIVATION_PATH } from '$lib/ui/run/activation-view';
import { toInvocations } from '$lib/ui/run/timeline';
import { createRuntime } from '$lib/worker/api';
import type { HearthMethods } from '$lib/worker/protocol';
import { Transfer } from '$lib/worker/rpc';
import {
  createFixtureDatabase,
  fixtureTables,
  NEWEST_FIXTURE_VERSION,
  type DbFixture,
} from '../../../support/db-versions';

const fixtures = Object.values(
  import.meta.glob<DbFixture>('../../../fixtures/db/v*.json', { eager: true, import: 'default' }),
).sort((a, b) => a.version - b.version);

type Row = Record<string, unknown> & { id?: string };
let n = 0;
const freshName = (what: string) => `hearth-upgrade-${what}-${Date.now()}-${++n}`;

/** The worker's API over the upgraded database, as the page calls it. */
function runtimeOn(databaseName: string) {
  const { methods } = createRuntime({
    workspaces: new MemoryWorkspaceStore(),
    locks: memoryLocks(),
    databaseName,
    demoDelayMs: 0,
  });
  const signal = new AbortController().signal;
  return async <K extends keyof HearthMethods>(
    method: K,
    params: Parameters<HearthMethods[K]>[0],
  ): Promise<ReturnType<HearthMethods[K]>> => {
    const fn = methods[method] as (p: unknown, s: AbortSignal) => Promise<unknown>;
    const v = await fn(params, signal);
    return (v instanceof Transfer ? v.value : v) as ReturnType<HearthMethods[K]>;
  };
}

describe('fixture databases', () => {
  it('exist for every version from the first to the current one', () => {
    expect(fixtures.map((f) => f.version)).toEqual(
      Array.from({ length: NEWEST_FIXTURE_VERSION }, (_, i) => i + 1),
    );
    const db = openHearthDatabase(freshName('verno'));
    expect(db.verno, 'a new database version needs a fixture (docs/architecture.md)').toBe(
      NEWEST_FIXTURE_VERSION,
    );
  });
});

describe.each(fixtures)('a database of version $version', (fixture) => {
  const tables = fixtureTables(fixture);
  const rows = (table: string) => (tables[table] ?? []) as Row[];

  it('opens with the current code with every row as it was (upgraded where an upgrade says so)', async () => {
    const name = freshName(`v${fixture.version}`);
    await createFixtureDatabase(name, fixture);
    const db = openHearthDatabase(name);
    await db.open();
    try {
      for (const [table, expected] of Object.entries(tables)) {
        const want =
          table === 'connections' && fixture.version < 2 ? expected.map(upgradeConnection) : expected;
        expect(await db.table(table).toArray(), table).toEqual(want);
      }
    } finally {
      db.close();
    }
  });

  it('still works: sessions, runs as the run viewer reads them, chats with swipes, profiles, connections', async () => {
    const name = freshName(`v${fixture.version}-api`);
    await createFixtureDatabase(name, fixture);
    const call = runtimeOn(name);

    const { connections } = await call('connections.list', undefined);
    for (const c of rows('connections')) expect(connections.map((x) => x.id)).toContain(c.id);

    const profiles = await call('profiles.list', undefined);
    expect(profiles.issues).toEqual([]);
    for (const p of rows('profiles')) expect(profiles.profiles.map((x) => x.id)).toContain(p.id);
    for (const p of rows('profiles'))
      expect((await call('profiles.get', { id: p.id! })).profile.schemaVersion).toBe(5);

    for (const s of rows('sessions')) {
      const opened = await call('sessions.get', { sessionId: s.id! });
      expect(opened.messages).toHaveLength(
        rows('sessionMessages').filter((m) => m.sessionId === s.id).length,
      );
      expect(opened.runs.length).toBeGreaterThan(0);
    }

    // The run viewer: the record, then the journal in pages, grouped into rounds.
    for (const run of rows('runs')) {
      const record = await call('runs.get', { runId: run.id as never });
      expect(record.status).toBe(run.status);
      const events: RunEvent[] = await call('runs.events', { runId: run.id as never, limit: 500 });
      expect(events).toHaveLength(rows('events').filter((e) => e.runId === run.id).length);
      expect(toInvocations(events).rounds.length).toBeGreaterThan(0);
      const target = run.target as { kind: string };
      if (target.kind === 'chat' && fixture.version >= 5) {
        const activation = await call('runs.file', { runId: run.id as never, path: ACTIVATION_PATH });
        expect(JSON.parse(new TextDecoder().decode(activation.bytes))).toBeTypeOf('object');
      }
    }

    const characters = await call('characters.list', undefined);
    expect(characters.issues).toEqual([]);
    for (const c of rows('characters')) {
      expect(characters.characters.map((x) => x.id)).toContain(c.id);
      const got = await call('characters.get', { id: c.id! });
      expect(got.avatar).toEqual(c.avatar);
    }
    const personas = await call('personas.list', undefined);
    expect(personas.issues).toEqual([]);
    expect(personas.personas.map((p) => p.id)).toEqual(rows('personas').map((p) => p.id));
    expect(personas.personas.map((p) => p.avatar)).toEqual(rows('personas').map((p) => p.avatar));
    const lorebooks = await call('lorebooks.list', undefined);
    expect(lorebooks.issues).toEqual([]);
    for (const l of rows('lorebooks')) expect(lorebooks.lorebooks.map((x) => x.id)).toContain(l.id);

    for (const chat of rows('chats')) {
      const view = await call('chats.get', { chatId: chat.id! });
      const stored = rows('chatMessages').filter((m) => m.chatId === chat.id);
      expect(view.messages.map((m) => m.swipes.length)).toEqual(stored.map((m) => (m.swipes as []).length));
      expect(view.messages.map((m) => m.mes)).toEqual(stored.map((m) => m.mes));
      // Every swipe a run wrote still leads to its run.
      const runIds = view.messages.flatMap((m) =>
        m.swipes.flatMap((s) => {
          const ref = (s.extra as { hearth?: { runId?: string } }).hearth?.runId;
          return ref ? [ref] : [];
        }),
      );
      expect(runIds.length).toBeGreaterThan(1);
      for (const runId of runIds) expect((await call('runs.get', { runId: runId as never })).id).toBe(runId);
      expect(view.runs.map((r) => r.id).sort()).toEqual(
        rows('runs')
          .filter((r) => (r.target as { chatId?: string }).chatId === chat.id)
          .map((r) => r.id)
          .sort(),
      );
      const list = await call('chats.list', { characterId: chat.characterId as string });
      expect(list.map((c) => c.id)).toContain(chat.id);
    }

    const mcp = await call('mcp.list', undefined);
    expect(mcp.map((v) => v.server.id)).toEqual(rows('mcpServers').map((s) => s.id));
    for (const view of mcp) {
      expect(view.catalog).not.toBeNull();
      expect(view.tools.map((t) => t.name)).toEqual(['search_notes']);
      expect(view.signIn.signedIn).toBe(rows('mcpCredentials').length > 0);
    }
    const extensions = await call('extensions.list', undefined);
    expect(extensions.map((v) => v.extension.id)).toEqual(rows('extensions').map((e) => e.id));
    // What loading an extension reads: its files, through the store.
    const store = new DexieExtensionStore(openHearthDatabase(name));
    for (const e of rows('extensions')) {
      expect((await store.files(e.id!)).map((f) => f.bytes)).toEqual(
        rows('extensionFiles')
          .filter((f) => f.extensionId === e.id)
          .map((f) => f.bytes),
      );
    }
    expect((await call('skills.list', undefined)).map((s) => s.name)).toEqual(
      rows('skills').map((s) => s.name),
    );
  });
});

/** Opens `name` with plain IndexedDB at `version`, as a newer Hearth would; refuses to wait if blocked. */
function openNewer(name: string, version: number): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name, version);
    request.onblocked = () => reject(new Error('the newer version was blocked by the older tab'));
    request.onerror = () => reject(request.error);
    request.onsuccess = () => resolve(request.result);
  });
}

const count = (db: IDBDatabase, store: string) =>
  new Promise<number>((resolve, reject) => {
    const request = db.transaction(store).objectStore(store).count();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });

describe('a failed upgrade', () => {
  it('leaves the old rows readable, deletes nothing, and says so', async () => {
    const name = freshName('damaged');
    const newest = fixtures.at(-1)!;
    await createFixtureDatabase(name, newest);
    // The next version's upgrade changes some rows, then meets a damaged one and throws.
    const next = openHearthDatabase(name);
    next
      .version(newest.version + 1)
      .stores({})
      .upgrade(async (tx) => {
        await tx
          .table('connections')
          .toCollection()
          .modify((row) => void (row.displayName = 'changed'));
        await tx
          .table('sessions')
          .toCollection()
          .modify(() => {
            throw new Error('the session row is damaged');
          });
      });
    const told: DatabaseProblem[] = [];
    const problem = await openWatched(next, (p) => told.push(p));
    expect(problem?.kind).toBe('upgrade_failed');
    expect(problem?.message).toContain('the session row is damaged');
    expect(problem?.message).toContain('Nothing was changed or deleted');
    expect(told).toEqual([problem]);
    await expect(next.sessions.count()).rejects.toThrow();

    // The previous version opens it as it was: every row, none of the upgrade's changes.
    const db = openHearthDatabase(name);
    expect(await openWatched(db, () => {})).toBeNull();
    expect(db.backendDB().version).toBe(newest.version * 10);
    for (const [table, rows] of Object.entries(fixtureTables(newest))) {
      expect(await db.table(table).toArray(), table).toEqual(rows);
    }
    db.close();
  });
});

describe('two tabs on different versions', () => {
  it('the older tab lets a newer one upgrade at once and is told to reload; it never opens the newer data', async () => {
    const name = freshName('two-tabs');
    const newest = fixtures.at(-1)!;
    await createFixtureDatabase(name, newest);
    const older = openHearthDatabase(name);
    const told: DatabaseProblem[] = [];
    expect(await openWatched(older, (p) => told.push(p))).toBeNull();
    expect(await older.sessions.count()).toBe(1);

    const newer = await openNewer(name, 9999);
    expect(told).toEqual([{ kind: 'updated_elsewhere', message: UPDATED_ELSEWHERE_MESSAGE }]);
    await expect(older.sessions.count()).rejects.toThrow(/closed/i);
    expect(newer.version).toBe(9999);
    expect(await count(newer, 'sessions')).toBe(1);
    newer.close();

    // A tab of this version started now: told a newer Hearth was here, and leaves the data alone.
    const late = openHearthDatabase(name);
    const lateTold: DatabaseProblem[] = [];
    const problem = await openWatched(late, (p) => lateTold.push(p));
    expect(problem).toEqual({ kind: 'newer_version', message: NEWER_VERSION_MESSAGE });
    expect(lateTold).toEqual([problem]);
    await expect(late.sessions.count()).rejects.toThrow(/closed/i);
    const after = await openNewer(name, 9999);
    expect(await count(after, 'sessions')).toBe(1);
    after.close();
  });
});
