import { afterEach, describe, expect, it } from 'vitest';
import { strFromU8, unzipSync } from 'fflate';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { exportBackup } from '$lib/adapters/backup/backup-export';
import {
  applyRestore,
  finishRestores,
  inspectBackup,
  STAGING_DIR,
} from '$lib/adapters/backup/backup-restore';
import { directoryAt, listTree } from '$lib/adapters/backup/opfs-tree';
import { BACKUP_TABLES, encodeRow } from '$lib/domain/backup';
import { HearthFailure } from '$lib/domain/errors';
import { fillLibrary, SECRETS } from '../../../support/backup-library';
import { buildZip } from '../../../support/zip-builder';
import { tallyOf } from '$lib/adapters/backup/hashing';
import { DexieConnectionStore, DexieRunStore } from '$lib/adapters/db/stores';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import { BACKUP_FORMAT, tableEntryPath, withoutSecrets, type BackupTable } from '$lib/domain/backup';
import { fixtureTables, type DbFixture } from '../../../support/db-versions';

interface Profile {
  db: HearthDatabase;
  root: FileSystemDirectoryHandle;
}

const opened: Profile[] = [];

/** A browser profile of its own: a database and an OPFS root nobody else uses. */
async function profile(): Promise<Profile> {
  const name = `backup-${crypto.randomUUID()}`;
  const db = openHearthDatabase(name);
  await db.open();
  const root = await (await navigator.storage.getDirectory()).getDirectoryHandle(name, { create: true });
  const p = { db, root };
  opened.push(p);
  return p;
}

afterEach(async () => {
  for (const p of opened.splice(0)) {
    p.db.close();
    await p.db.delete();
    await (await navigator.storage.getDirectory()).removeEntry(p.root.name, { recursive: true });
  }
});

const quiet = { signal: new AbortController().signal, onProgress: () => {} };

async function exported(p: Profile, includeRuns = true): Promise<File> {
  const done = await exportBackup({
    db: p.db,
    opfsRoot: p.root,
    appVersion: '0.1.0',
    includeRuns,
    now: Date.now(),
    ...quiet,
  });
  const dir = (await directoryAt(p.root, ['exports'], false))!;
  return (await dir.getFileHandle(done.fileName)).getFile();
}

async function tableDump(db: HearthDatabase): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of [...BACKUP_TABLES, 'mcpCredentials'])
    out[t] = (await db.table(t).toArray()).map((r) => encodeRow(r)).filter((l) => !l.includes('"restore:'));
  return out;
}

async function files(root: FileSystemDirectoryHandle): Promise<Map<string, Uint8Array>> {
  const dir = await directoryAt(root, ['workspaces'], false);
  const out = new Map<string, Uint8Array>();
  for (const f of dir ? await listTree(dir) : [])
    out.set(f.path, new Uint8Array(await (await f.handle.getFile()).arrayBuffer()));
  return out;
}

async function restoreAll(file: Blob, into: Profile, all: 'keep' | 'replace' | 'skip' = 'keep') {
  const { plan, inspection } = await inspectBackup(file, { db: into.db, opfsRoot: into.root, ...quiet });
  const summary = await applyRestore(
    file,
    plan,
    { all, each: {} },
    { db: into.db, opfsRoot: into.root, ...quiet },
  );
  return { inspection, summary };
}

const includes = (hay: Uint8Array, needle: string) => {
  const n = new TextEncoder().encode(needle);
  outer: for (let i = 0; i + n.length <= hay.length; i++) {
    for (let k = 0; k < n.length; k++) if (hay[i + k] !== n[k]) continue outer;
    return true;
  }
  return false;
};

describe('whole-app backup', () => {
  it('round-trips every table and file into an empty profile, without a single secret', async () => {
    const from = await profile();
    await fillLibrary(from.db, from.root, {
      characters: 3,
      chats: 5,
      messagesPerChat: 20,
      workspaceBytes: 10 * 1024 * 1024,
    });
    const file = await exported(from);

    // Every byte of the archive, raw and inflated, is free of the secrets.
    const raw = new Uint8Array(await file.arrayBuffer());
    const inflated = unzipSync(raw);
    for (const secret of SECRETS) {
      expect(includes(raw, secret), secret).toBe(false);
      for (const [name, bytes] of Object.entries(inflated))
        expect(includes(bytes, secret), `${secret} in ${name}`).toBe(false);
    }

    const into = await profile();
    const { inspection, summary } = await restoreAll(file, into);
    expect(inspection.items.every((i) => i.status === 'new')).toBe(true);
    // Before confirming, the person sees every address restored items will send to.
    const fresh = (url: string) => [{ url, change: 'new' }];
    expect(inspection.reach).toEqual([
      {
        key: 'connection:conn-1',
        kind: 'connection',
        label: 'Mein Server ☕',
        addresses: fresh('http://127.0.0.1:9/v1'),
      },
      {
        key: 'mcpServer:00000000-0000-4000-8000-000000000001',
        kind: 'mcpServer',
        label: 'Werkzeuge',
        addresses: fresh('http://127.0.0.1:9/mcp'),
      },
      {
        key: 'extension:unit-convert',
        kind: 'extension',
        label: 'Units',
        addresses: fresh('https://api.example.test'),
      },
    ]);
    expect(summary.added).toBe(inspection.items.length);

    const before = await tableDump(from.db);
    const after = await tableDump(into.db);
    for (const t of BACKUP_TABLES) {
      const expected = before[t]!.map((line) => line.replace(SECRETS[0]!, '').replace(SECRETS[1]!, ''));
      expect(after[t], t).toEqual(expected);
    }
    expect(after.mcpCredentials).toEqual([]);
    const a = await files(from.root);
    const b = await files(into.root);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [path, bytes] of a)
      expect(b.get(path)!.length === bytes.length && b.get(path)!.every((x, i) => x === bytes[i]), path).toBe(
        true,
      );
    expect(await directoryAt(into.root, [STAGING_DIR], false).then((d) => (d ? listTree(d) : []))).toEqual(
      [],
    );
  });

  it('finds a second restore the same, and keeps both, replaces or skips a changed chat as chosen', async () => {
    const p = await profile();
    await fillLibrary(p.db, p.root, { characters: 1, chats: 2, messagesPerChat: 4, workspaceBytes: 0 });
    const file = await exported(p);
    const again = await inspectBackup(file, { db: p.db, opfsRoot: p.root, ...quiet });
    const byKey = new Map(again.inspection.items.map((i) => [i.key, i.status]));
    // The connection differs only by its API key, which a backup never has: the same.
    expect(byKey.get('connection:conn-1')).toBe('same');
    expect([...byKey.values()].every((s) => s === 'same')).toBe(true);

    const chatId = 'chat-0-00000000';
    await p.db.chatMessages.update([chatId, 0], { mes: 'edited after the backup' });
    const changed = await inspectBackup(file, { db: p.db, opfsRoot: p.root, ...quiet });
    expect(changed.inspection.items.filter((i) => i.status === 'conflict').map((i) => i.key)).toEqual([
      `chat:${chatId}`,
    ]);

    await applyRestore(
      file,
      changed.plan,
      { all: 'skip', each: {} },
      { db: p.db, opfsRoot: p.root, ...quiet },
    );
    expect((await p.db.chatMessages.get([chatId, 0]))!.mes).toBe('edited after the backup');

    const keep = await inspectBackup(file, { db: p.db, opfsRoot: p.root, ...quiet });
    const kept = await applyRestore(
      file,
      keep.plan,
      { all: 'skip', each: { [`chat:${chatId}`]: 'keep' } },
      { db: p.db, opfsRoot: p.root, ...quiet },
    );
    expect(kept.kept).toBe(1);
    const copies = (await p.db.chats.toArray()).filter((c) => c.title === 'Gespräch 0');
    expect(copies).toHaveLength(2);
    const copy = copies.find((c) => c.id !== chatId)!;
    expect((await p.db.chatMessages.get([copy.id, 0]))!.mes).toMatch(/^Nachricht 0/);
    expect((await p.db.chatMessages.get([chatId, 0]))!.mes).toBe('edited after the backup');
    expect((await files(p.root)).has(`chats/${copy.id}/output/reply.md`)).toBe(true);

    const replace = await inspectBackup(file, { db: p.db, opfsRoot: p.root, ...quiet });
    await applyRestore(
      file,
      replace.plan,
      { all: 'replace', each: {} },
      { db: p.db, opfsRoot: p.root, ...quiet },
    );
    expect((await p.db.chatMessages.get([chatId, 0]))!.mes).toMatch(/^Nachricht 0/);
  });

  it('a replaced chat follows its character when that character is kept beside the original', async () => {
    const p = await profile();
    await fillLibrary(p.db, p.root, { characters: 1, chats: 1, messagesPerChat: 2, workspaceBytes: 0 });
    const file = await exported(p);
    const chatId = 'chat-0-00000000';
    await p.db.characters.update('char-0', { lorebookIds: [] });
    await p.db.chatMessages.update([chatId, 0], { mes: 'edited' });
    const { plan } = await inspectBackup(file, { db: p.db, opfsRoot: p.root, ...quiet });
    await applyRestore(
      file,
      plan,
      { all: 'skip', each: { 'character:char-0': 'keep', [`chat:${chatId}`]: 'replace' } },
      { db: p.db, opfsRoot: p.root, ...quiet },
    );
    const copy = (await p.db.characters.toArray()).find((c) => c.id !== 'char-0')!;
    expect(copy.lorebookIds).toEqual(['book-1']);
    expect((await p.db.chats.get(chatId))!.characterId).toBe(copy.id);
    expect((await p.db.chatMessages.get([chatId, 0]))!.mes).toMatch(/^Nachricht 0/);
  });

  it('keeps the API key of a connection it replaces at the same address, and only there', async () => {
    const p = await profile();
    await fillLibrary(p.db, p.root, { characters: 1, chats: 1, messagesPerChat: 2, workspaceBytes: 0 });
    const file = await exported(p);
    await p.db.connections.update('conn-1', { displayName: 'Renamed' } as never);
    const { plan } = await inspectBackup(file, { db: p.db, opfsRoot: p.root, ...quiet });
    await applyRestore(file, plan, { all: 'replace', each: {} }, { db: p.db, opfsRoot: p.root, ...quiet });
    expect(await p.db.connections.get('conn-1')).toMatchObject({
      displayName: 'Mein Server ☕',
      apiKey: SECRETS[0],
    });

    // This browser's connection now goes elsewhere: the backup's address gets no key.
    await p.db.connections.update('conn-1', { baseUrl: 'https://api.example.test/v1' } as never);
    const moved = await inspectBackup(file, { db: p.db, opfsRoot: p.root, ...quiet });
    expect(moved.inspection.reach[0]!.addresses).toEqual([
      { url: 'http://127.0.0.1:9/v1', change: 'changed' },
    ]);
    await applyRestore(
      file,
      moved.plan,
      { all: 'replace', each: {} },
      { db: p.db, opfsRoot: p.root, ...quiet },
    );
    expect(await p.db.connections.get('conn-1')).toMatchObject({
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
    });
  });
});

describe('a restore that cannot complete changes nothing', () => {
  /** An export edited after the fact; `declared` gives entries a size other than their data's. */
  async function damaged(
    edit: (
      entries: Record<string, Uint8Array>,
      manifest: { entries: { path: string; size: number; sha256: string }[]; formatVersion: number },
    ) => void,
    declared: Record<string, number> = {},
  ) {
    const p = await profile();
    await fillLibrary(p.db, p.root, {
      characters: 1,
      chats: 2,
      messagesPerChat: 3,
      workspaceBytes: 64 * 1024,
    });
    const entries = unzipSync(new Uint8Array(await (await exported(p)).arrayBuffer()));
    const manifest = JSON.parse(strFromU8(entries['manifest.json']!));
    edit(entries, manifest);
    entries['manifest.json'] = new TextEncoder().encode(JSON.stringify(manifest));
    const zip = buildZip(
      Object.entries(entries).map(([name, data]) => ({ name, data, declaredSize: declared[name] })),
    );
    return new File([zip], 'damaged.zip');
  }

  async function refusedWithoutChange(file: Blob, message: RegExp) {
    const into = await profile();
    await into.db.settings.put({ key: 'mine', value: 'kept' });
    const before = await tableDump(into.db);
    const failure = await restoreAll(file, into).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(HearthFailure);
    expect((failure as HearthFailure).error.message).toMatch(message);
    expect(await tableDump(into.db)).toEqual(before);
    expect((await files(into.root)).size).toBe(0);
    const staging = await directoryAt(into.root, [STAGING_DIR], false);
    expect(staging ? await listTree(staging) : []).toEqual([]);
  }

  it('a truncated archive', async () => {
    const p = await profile();
    await fillLibrary(p.db, p.root, { characters: 1, chats: 1, messagesPerChat: 2, workspaceBytes: 0 });
    const whole = await exported(p);
    await refusedWithoutChange(whole.slice(0, Math.floor(whole.size * 0.6)), /not a readable zip archive/);
  });

  it('an entry whose bytes do not match its hash', async () => {
    const file = await damaged((entries) => {
      const name = Object.keys(entries).find((n) => n.startsWith('db/chatMessages/'))!;
      const bytes = (entries[name] as Uint8Array).slice();
      bytes[10] = bytes[10]! ^ 1;
      entries[name] = bytes;
    });
    await refusedWithoutChange(file, /does not match its hash/);
  });

  it('a damaged workspace file, found only while restoring: the rows are not written either', async () => {
    const file = await damaged((entries) => {
      const name = Object.keys(entries).find((n) => n.startsWith('files/sessions/') && n.endsWith('.bin'))!;
      const bytes = (entries[name] as Uint8Array).slice();
      bytes[0] = bytes[0]! ^ 1;
      entries[name] = bytes;
    });
    await refusedWithoutChange(file, /does not match its hash/);
  });

  it('an entry with `../` in its path', async () => {
    const file = await damaged((entries, manifest) => {
      const bytes = new TextEncoder().encode('escape');
      entries['files/sessions/s/../../../evil.txt'] = bytes;
      manifest.entries.push({
        path: 'files/sessions/s/../../../evil.txt',
        size: bytes.length,
        sha256: '0'.repeat(64),
      });
    });
    await refusedWithoutChange(file, /not a safe file path/);
  });

  it('a zip bomb: an entry inflating far past the size it declares', async () => {
    const name = 'files/sessions/session-1/work/bomb.bin';
    const file = await damaged(
      (entries, manifest) => {
        entries[name] = new Uint8Array(32 * 1024 * 1024);
        manifest.entries.push({ path: name, size: 1024, sha256: '0'.repeat(64) });
      },
      { [name]: 1024 },
    );
    await refusedWithoutChange(file, /bomb\.bin` inflates to more than the 1024 bytes it declares/);
  });

  it('an archive from a future version', async () => {
    const file = await damaged((_entries, manifest) => {
      manifest.formatVersion = 99;
    });
    await refusedWithoutChange(file, /newer Hearth/);
  });

  it('an archive larger than the space left here', async () => {
    const p = await profile();
    await fillLibrary(p.db, p.root, {
      characters: 1,
      chats: 1,
      messagesPerChat: 2,
      workspaceBytes: 256 * 1024,
    });
    const file = await exported(p);
    const into = await profile();
    const failure = await inspectBackup(file, {
      db: into.db,
      opfsRoot: into.root,
      freeBytes: 100 * 1024,
      ...quiet,
    }).catch((e: unknown) => e);
    expect((failure as HearthFailure).error).toMatchObject({ code: 'storage.quota_exceeded' });
    expect((failure as HearthFailure).error.message).toMatch(/only 0\.1 MB more/);
  });

  it('cancelled midway', async () => {
    const p = await profile();
    await fillLibrary(p.db, p.root, {
      characters: 1,
      chats: 3,
      messagesPerChat: 5,
      workspaceBytes: 3 * 1024 * 1024,
    });
    const file = await exported(p);
    const into = await profile();
    const before = await tableDump(into.db);
    const { plan } = await inspectBackup(file, { db: into.db, opfsRoot: into.root, ...quiet });
    const stop = new AbortController();
    let seen = 0;
    const failure = await applyRestore(
      file,
      plan,
      { all: 'keep', each: {} },
      {
        db: into.db,
        opfsRoot: into.root,
        signal: stop.signal,
        onProgress: () => {
          if (++seen === 2) stop.abort();
        },
      },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).not.toBeNull();
    expect(await tableDump(into.db)).toEqual(before);
    expect((await files(into.root)).size).toBe(0);
  });

  it('an interrupted restore is undone before its commit and finished after it', async () => {
    const p = await profile();
    const staged = (await directoryAt(p.root, [STAGING_DIR, 'abandoned', 'sessions', 's1'], true))!;
    await (await staged.getFileHandle('a.txt', { create: true })).createWritable().then((w) => w.close());
    const committed = (await directoryAt(p.root, [STAGING_DIR, 'done', 'sessions', 's2', 'work'], true))!;
    const w = await (await committed.getFileHandle('b.txt', { create: true })).createWritable();
    await w.write('restored');
    await w.close();
    await p.db.settings.put({
      key: 'restore:done',
      value: { swaps: [{ unit: 'sessions/s2', replace: true }] },
    });
    await finishRestores(p.db, p.root);
    expect([...(await files(p.root)).keys()]).toEqual(['sessions/s2/work/b.txt']);
    expect(await p.db.settings.get('restore:done')).toBeUndefined();
    expect(await listTree((await directoryAt(p.root, [STAGING_DIR], false))!)).toEqual([]);
  });
});

const fixtures = import.meta.glob<DbFixture>('../../../fixtures/db/v*.json', {
  eager: true,
  import: 'default',
});

describe('a backup from an older Hearth', () => {
  /** An archive as that version's rows would have been exported: secrets out, its database version. */
  async function archiveOf(fixture: DbFixture): Promise<File> {
    const entries: Record<string, Uint8Array> = {};
    const manifestEntries = [];
    const tables = fixtureTables(fixture);
    for (const table of BACKUP_TABLES) {
      const rows = tables[table] as Record<string, unknown>[] | undefined;
      if (!rows?.length) continue;
      const bytes = new TextEncoder().encode(
        rows.map((r) => encodeRow(withoutSecrets(table as BackupTable, r))).join('\n'),
      );
      const path = tableEntryPath(table as BackupTable, 1);
      entries[path] = bytes;
      manifestEntries.push({ path, ...(await tallyOf(bytes)) });
    }
    entries['manifest.json'] = new TextEncoder().encode(
      JSON.stringify({
        format: BACKUP_FORMAT,
        formatVersion: 1,
        appVersion: 'old',
        dbVersion: fixture.version,
        createdAt: 1,
        includesRuns: true,
        counts: {},
        entries: manifestEntries,
      }),
    );
    return new File([buildZip(Object.entries(entries).map(([name, data]) => ({ name, data })))], 'old.zip');
  }

  for (const [path, fixture] of Object.entries(fixtures))
    it(`restores version ${fixture.version}'s rows (${path.split('/').pop()}), decoded as stored rows are`, async () => {
      const into = await profile();
      const { inspection } = await restoreAll(await archiveOf(fixture), into);
      expect(inspection.dbVersion).toBe(fixture.version);
      const tables = fixtureTables(fixture);
      for (const table of BACKUP_TABLES)
        expect(await into.db.table(table).count(), table).toBe((tables[table] ?? []).length);
      const connections = await new DexieConnectionStore(into.db).list();
      expect(connections.every((c) => c.kind === 'demo' || ('wire' in c && c.apiKey === ''))).toBe(true);
      const profiles = await new DexieProfileStore(into.db).list();
      expect(profiles.issues).toEqual([]);
      expect(profiles.profiles.length).toBe((tables.profiles ?? []).length);
      for (const run of (tables.runs ?? []) as { id: string }[])
        expect((await new DexieRunStore(into.db).get(run.id as never))?.id).toBe(run.id);
    });
});
