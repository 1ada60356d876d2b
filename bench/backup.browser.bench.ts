import { test } from 'vitest';
import { commands } from 'vitest/browser';
import { BlobReader, ZipReader, ZipWriter, configure } from '@zip.js/zip.js/index-native.js';
import type { Table } from 'dexie';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { exportBackup } from '$lib/adapters/backup/backup-export';
import { applyRestore, inspectBackup } from '$lib/adapters/backup/backup-restore';
import { directoryAt, listTree } from '$lib/adapters/backup/opfs-tree';
import { BACKUP_TABLES, encodeRow } from '$lib/domain/backup';
import { fillLibrary } from '../tests/support/backup-library';

configure({ useWebWorkers: false, useCompressionStream: true });

const MB = 1024 * 1024;
const mbs = (bytes: number, ms: number) => (bytes / MB / (ms / 1000)).toFixed(1);

async function profile(name: string) {
  const db = openHearthDatabase(name);
  await db.open();
  const root = await (await navigator.storage.getDirectory()).getDirectoryHandle(name, { create: true });
  return { db, root };
}

/** Runs `work` with the peak memory above its start (V8 heap and ArrayBuffer stores) measured. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; peakMb: string }> {
  await commands.startHeapSampling();
  const t0 = performance.now();
  const value = await work();
  const ms = performance.now() - t0;
  const peak = await commands.stopHeapSampling();
  return { value, ms, peakMb: (peak / MB).toFixed(0) };
}

test('backup: export and restore of 1,000 chats x 200 messages, 50 characters, a 100 MB workspace', async () => {
  const id = crypto.randomUUID();
  const from = await profile(`bench-backup-a-${id}`);
  const into = await profile(`bench-backup-b-${id}`);
  const quiet = { signal: new AbortController().signal, onProgress: () => {} };
  const t0 = performance.now();
  await fillLibrary(from.db, from.root, {
    characters: 50,
    chats: 1000,
    messagesPerChat: 200,
    workspaceBytes: 100 * MB,
  });
  console.log(`RESULT backup library filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const exported = await measured(() =>
    exportBackup({
      db: from.db,
      opfsRoot: from.root,
      appVersion: 'bench',
      includeRuns: true,
      now: Date.now(),
      ...quiet,
    }),
  );
  const archive = await (
    await (await directoryAt(from.root, ['exports'], false))!.getFileHandle(exported.value.fileName)
  ).getFile();
  const entries = await new ZipReader(new BlobReader(archive)).getEntries();
  const inputBytes = entries.reduce((n, e) => n + e.uncompressedSize, 0);

  // Baseline: the zip library alone over the same bytes (the tables' JSON lines, encoded
  // beforehand, and the workspace files streamed from OPFS), same levels, into OPFS; no hashing,
  // no manifest, no database reads while zipping.
  const lines: Uint8Array[] = [];
  for (const t of BACKUP_TABLES) {
    const rows = await (from.db.table(t) as Table).toArray();
    for (let i = 0; i < rows.length; i += 5000)
      lines.push(
        new TextEncoder().encode(
          rows
            .slice(i, i + 5000)
            .map((r) => encodeRow(r))
            .join('\n'),
        ),
      );
  }
  const files = await listTree((await directoryAt(from.root, ['workspaces'], false))!);
  const baseline = await measured(async () => {
    const handle = await from.root.getFileHandle('baseline.zip', { create: true });
    const zip = new ZipWriter(await handle.createWritable(), { keepOrder: true });
    for (const [i, bytes] of lines.entries())
      await zip.add(`db/${i}.jsonl`, new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(), { level: 6 });
    for (const f of files) {
      const blob = await f.handle.getFile();
      await zip.add(`files/${f.path}`, blob.stream(), { level: /\.png$/.test(f.path) ? 0 : 6 });
    }
    await zip.close();
  });
  lines.length = 0;

  console.log(
    `RESULT backup export ${(inputBytes / MB).toFixed(0)} MB in (${(archive.size / MB).toFixed(0)} MB archive): ${(exported.ms / 1000).toFixed(1)} s, ${mbs(inputBytes, exported.ms)} MB/s, peak +${exported.peakMb} MB | baseline zip.js alone ${(baseline.ms / 1000).toFixed(1)} s, ${mbs(inputBytes, baseline.ms)} MB/s, peak +${baseline.peakMb} MB`,
  );

  const inspected = await measured(() =>
    inspectBackup(archive, { db: into.db, opfsRoot: into.root, ...quiet }),
  );
  const restored = await measured(() =>
    applyRestore(
      archive,
      inspected.value.plan,
      { all: 'keep', each: {} },
      { db: into.db, opfsRoot: into.root, ...quiet },
    ),
  );
  // Baseline: the zip library reading (inflating) every entry and dropping it.
  const unzipped = await measured(async () => {
    for (const e of await new ZipReader(new BlobReader(archive)).getEntries())
      if (!e.directory) await e.getData!(new WritableStream());
  });
  // Baseline for the rows: IndexedDB alone, the same rows written into an empty database in pages.
  const bare = await profile(`bench-backup-c-${id}`);
  const written = await measured(async () => {
    for (const t of BACKUP_TABLES) {
      const rows = await (from.db.table(t) as Table).toArray();
      for (let i = 0; i < rows.length; i += 5000) await bare.db.table(t).bulkPut(rows.slice(i, i + 5000));
    }
  });
  const total = inspected.ms + restored.ms;
  console.log(
    `RESULT backup restore (dry run ${(inspected.ms / 1000).toFixed(1)} s + apply ${(restored.ms / 1000).toFixed(1)} s): ${mbs(inputBytes, total)} MB/s, peak +${Math.max(Number(inspected.peakMb), Number(restored.peakMb))} MB | baseline zip.js reading every entry ${(unzipped.ms / 1000).toFixed(1)} s, ${mbs(inputBytes, unzipped.ms)} MB/s, peak +${unzipped.peakMb} MB | IndexedDB alone writing the same rows ${(written.ms / 1000).toFixed(1)} s`,
  );

  for (const p of [from, into, bare]) {
    p.db.close();
    await p.db.delete();
    await (await navigator.storage.getDirectory()).removeEntry(p.root.name, { recursive: true });
  }
}, 1_800_000);
