import { ZipWriter, configure } from '@zip.js/zip.js/index-native.js';
import type { Table } from 'dexie';
import {
  BACKUP_CHUNK_CHARS,
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  BACKUP_TABLES,
  EXPORTS_DIR,
  MANIFEST_PATH,
  RESTORE_MARKER_PREFIX,
  RUN_TABLES,
  encodeRow,
  fileEntryPath,
  tableEntryPath,
  withoutSecrets,
  type BackupManifest,
  type BackupProgress,
  type ExportedBackup,
  type BackupTable,
  type ManifestEntry,
} from '$lib/domain/backup';
import type { HearthDatabase } from '../db/database';
import { Tally } from './hashing';
import { directoryAt, listTree, removeEntry } from './opfs-tree';

// The runtime worker is already off the page: compress in it, with the browser's own deflate.
configure({ useWebWorkers: false, useCompressionStream: true });

type Dir = FileSystemDirectoryHandle;

const WORKSPACES_DIR = 'workspaces';
const ROWS_PER_PAGE = 2000;
/** Already compressed: stored as they are rather than deflated again. */
const STORED = /\.(png|jpe?g|webp|gif|avif|zip|gz|tgz|xz|bz2|zst|7z|mp[34]|webm|woff2?|wasm|pdf)$/i;

export interface ExportOptions {
  db: HearthDatabase;
  /** The origin's OPFS root (workspaces live in its `workspaces/`). */
  opfsRoot: Dir;
  appVersion: string;
  includeRuns: boolean;
  now: number;
  signal: AbortSignal;
  onProgress: (p: BackupProgress) => void;
}

const encoder = new TextEncoder();
const stamp = (now: number) => new Date(now).toISOString().replace(/[:.]/g, '-').replace(/Z$/, '');

/**
 * Each table's rows in primary-key order, a page at a time (never the whole table at once); the
 * next page is read while the current one is encoded and compressed.
 */
async function* rowsOf(table: Table): AsyncIterable<Record<string, unknown>> {
  const keyPath = table.schema.primKey.keyPath!;
  const keyOf = (row: Record<string, unknown>) =>
    Array.isArray(keyPath) ? keyPath.map((k) => row[k]) : row[keyPath];
  const page = (after: unknown): Promise<Record<string, unknown>[]> => {
    const read = (after === undefined ? table.orderBy(':id') : table.where(':id').above(after))
      .limit(ROWS_PER_PAGE)
      .toArray();
    // A page read ahead for an export that was then cancelled must not surface as unhandled.
    read.catch(() => {});
    return read;
  };
  let next = page(undefined);
  for (;;) {
    const rows = await next;
    const full = rows.length === ROWS_PER_PAGE;
    if (full) next = page(keyOf(rows.at(-1)!));
    yield* rows;
    if (!full) return;
  }
}

/**
 * Writes the whole app into `exports/hearth-backup-<time>.zip` in OPFS, streamed: rows a page at
 * a time and files as streams, so the archive is never held in memory. Earlier exports are removed
 * first; a cancelled or failed export leaves no file behind.
 */
export async function exportBackup(o: ExportOptions): Promise<ExportedBackup> {
  const exportsDir = (await directoryAt(o.opfsRoot, [EXPORTS_DIR], true))!;
  for (const old of await listTree(exportsDir)) await removeEntry(exportsDir, old.path.split('/')[0]!);
  const fileName = `hearth-backup-${stamp(o.now)}.zip`;
  const handle = await exportsDir.getFileHandle(fileName, { create: true });
  const writable = await handle.createWritable();
  const zip = new ZipWriter(writable, { keepOrder: true, signal: o.signal });

  const tables = BACKUP_TABLES.filter((t) => o.includeRuns || !RUN_TABLES.has(t));
  const workspaces = await directoryAt(o.opfsRoot, [WORKSPACES_DIR], false);
  const files = workspaces ? await listTree(workspaces) : [];
  const sizes = await Promise.all(files.map(async (f) => (await f.handle.getFile()).size));
  const counts: Record<string, number> = {};
  let rowsTotal = 0;
  for (const t of tables) rowsTotal += counts[t] = await (o.db.table(t) as Table).count();
  counts.files = files.length;
  // Rows are counted as 1 KiB each for the bar: their size is only known once written.
  const progress: BackupProgress = {
    doneBytes: 0,
    totalBytes: rowsTotal * 1024 + sizes.reduce((a, b) => a + b, 0),
  };
  const entries: ManifestEntry[] = [];

  async function addEntry(path: string, data: ReadableStream<Uint8Array>, level: number, size?: number) {
    o.signal.throwIfAborted();
    const tally = await Tally.start();
    await zip.add(path, data.pipeThrough(tally.through()), {
      level,
      signal: o.signal,
      ...(size !== undefined ? { uncompressedSize: size } : {}),
    });
    entries.push({ path, ...tally.finish() });
  }
  const bytesStream = (bytes: Uint8Array) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    });

  try {
    for (const table of tables) {
      let chunk: string[] = [];
      let chars = 0;
      let n = 0;
      const flush = async () => {
        if (chunk.length === 0) return;
        const text = encoder.encode(chunk.join('\n') + '\n');
        await addEntry(tableEntryPath(table as BackupTable, ++n), bytesStream(text), 6, text.length);
        progress.doneBytes += chunk.length * 1024;
        o.onProgress({ ...progress });
        chunk = [];
        chars = 0;
      };
      for await (const row of rowsOf(o.db.table(table) as Table)) {
        if (table === 'settings' && String(row.key).startsWith(RESTORE_MARKER_PREFIX)) continue;
        const line = encodeRow(withoutSecrets(table, row));
        chunk.push(line);
        chars += line.length;
        if (chars >= BACKUP_CHUNK_CHARS) await flush();
      }
      await flush();
    }
    for (const [i, file] of files.entries()) {
      const blob = await file.handle.getFile();
      const level = STORED.test(file.path) ? 0 : 6;
      await addEntry(fileEntryPath(`${file.path}`), blob.stream(), level, blob.size);
      progress.doneBytes += sizes[i]!;
      o.onProgress({ ...progress });
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      formatVersion: BACKUP_FORMAT_VERSION,
      appVersion: o.appVersion,
      dbVersion: o.db.verno,
      createdAt: o.now,
      includesRuns: o.includeRuns,
      counts,
      entries,
    };
    const text = encoder.encode(JSON.stringify(manifest, null, 1));
    await zip.add(MANIFEST_PATH, bytesStream(text), { level: 6, signal: o.signal });
    await zip.close();
  } catch (e) {
    await writable.abort().catch(() => {});
    await removeEntry(exportsDir, fileName);
    throw e;
  }
  return { fileName, size: (await handle.getFile()).size, counts };
}
