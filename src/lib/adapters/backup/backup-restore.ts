import Dexie, { type Table } from 'dexie';
import { blobZipEntryChunks, readBlobZipDirectory, readBlobZipEntry } from '$lib/adapters/packages/blob-zip';
import { EXAMPLE_CHARACTER_ID, EXAMPLE_LOREBOOK_ID } from '$lib/chat/example';
import { checkRestoredRow, type RowCheck } from '$lib/domain/backup-rows';
import { upgradeConnection } from '$lib/domain/connection';
import {
  BACKUP_TABLES,
  KEEP_BOTH_KINDS,
  MANIFEST_PATH,
  OWNER_TABLE,
  RESTORE_MARKER_PREFIX,
  actionFor,
  decodeRow,
  encodeRow,
  fileOfEntry,
  fileUnit,
  itemLabel,
  itemKey,
  parseManifest,
  remapRow,
  remapUnit,
  rowOwner,
  tableOfEntry,
  withoutSecrets,
  type BackupInspection,
  type BackupManifest,
  type BackupProgress,
  type InspectedItem,
  type RestoreChoices,
  type RestoreSummary,
  type BackupTable,
  type ItemKey,
  type ItemKind,
} from '$lib/domain/backup';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import { packageHash, type PackageFile } from '$lib/domain/package-files';
import { TERMINAL_STATUSES } from '$lib/domain/run';
import type { ZipEntry } from '$lib/domain/zip-archive';
import type { HearthDatabase } from '../db/database';
import { tallyOf, Tally } from './hashing';
import { directoryAt, moveTree, removeEntry, removePath, writeChunks } from './opfs-tree';

type Dir = FileSystemDirectoryHandle;
type Row = Record<string, unknown>;

const WORKSPACES_DIR = 'workspaces';
/** Files of a restore are written here first, and moved into place once its rows are committed. */
export const STAGING_DIR = 'restore-staging';
const MAX_ENTRIES = 2_000_000;
/** A JSON-lines entry is read whole; the exporter cuts them far smaller. */
const MAX_TABLE_ENTRY_BYTES = 64 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

interface Deps {
  db: HearthDatabase;
  opfsRoot: Dir;
  /** Bytes this origin may still store, where the browser says. */
  freeBytes?: number;
  /** Told of each workspace a restore moved in or removed. */
  changed?: (unit: string) => void;
  /** The app's own origin: no restored extension may reach it. */
  appOrigin?: string;
  signal: AbortSignal;
  onProgress: (p: BackupProgress) => void;
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

const refuse = (message: string): never => {
  throw new HearthFailure(hearthError('backup.invalid', message));
};

interface Archive {
  manifest: BackupManifest;
  tableEntries: { table: BackupTable; entry: ZipEntry; sha256: string }[];
  fileEntries: { segments: string[]; entry: ZipEntry; sha256: string }[];
  totalBytes: number;
}

/**
 * Checks an archive before anything of it is used: a readable zip, no links, no encrypted or
 * duplicate entries, a manifest from this or an older Hearth, and each entry listed in the
 * manifest with the size it declares (hashes are checked as entries are read).
 */
async function openArchive(file: Blob, dbVersion: number): Promise<Archive> {
  const directory = await readBlobZipDirectory(file);
  if (!directory.ok) return refuse(`This is not a readable zip archive (${directory.error}).`);
  const entries = directory.value.filter((e) => !e.directory);
  if (entries.length > MAX_ENTRIES) refuse(`The archive has more than ${MAX_ENTRIES} entries.`);
  const byName = new Map<string, ZipEntry>();
  for (const e of entries) {
    if (e.symlink) refuse(`\`${e.name}\` is a symbolic link; a backup has none.`);
    if (e.encrypted) refuse(`\`${e.name}\` is encrypted; a backup never is.`);
    if (byName.has(e.name)) refuse(`\`${e.name}\` appears twice in the archive.`);
    byName.set(e.name, e);
  }
  const manifestEntry = byName.get(MANIFEST_PATH);
  if (!manifestEntry) return refuse('This is not a Hearth backup: it has no manifest.json.');
  if (manifestEntry.size > MAX_MANIFEST_BYTES) refuse('Its manifest.json is too large to be a manifest.');
  const manifestBytes = await readBlobZipEntry(file, manifestEntry);
  if (!manifestBytes.ok) return refuse(`Its manifest.json cannot be read (${manifestBytes.error}).`);
  const parsed = parseManifest(new TextDecoder().decode(manifestBytes.value), dbVersion);
  if (!parsed.ok) throw new HearthFailure(parsed.error);
  const manifest = parsed.value;

  const archive: Archive = { manifest, tableEntries: [], fileEntries: [], totalBytes: 0 };
  const listed = new Set<string>();
  for (const m of manifest.entries) {
    const entry = byName.get(m.path);
    if (!entry)
      refuse(`\`${m.path}\` is listed in the manifest but missing from the archive: it is incomplete.`);
    if (entry!.size !== m.size)
      refuse(`\`${m.path}\` is ${entry!.size} bytes in the archive but ${m.size} in the manifest.`);
    listed.add(m.path);
    archive.totalBytes += m.size;
    const table = tableOfEntry(m.path);
    if (table) {
      if (m.size > MAX_TABLE_ENTRY_BYTES) refuse(`\`${m.path}\` is larger than a backup writes.`);
      archive.tableEntries.push({ table, entry: entry!, sha256: m.sha256 });
      continue;
    }
    const segments = fileOfEntry(m.path);
    if (!segments.ok) return refuse(segments.error);
    if (!fileUnit(segments.value)) refuse(`\`${m.path}\` belongs to no workspace Hearth knows.`);
    archive.fileEntries.push({ segments: segments.value, entry: entry!, sha256: m.sha256 });
  }
  for (const name of byName.keys())
    if (name !== MANIFEST_PATH && !listed.has(name)) refuse(`\`${name}\` is not listed in the manifest.`);
  const order = (t: BackupTable) => BACKUP_TABLES.indexOf(t);
  archive.tableEntries.sort(
    (a, b) => order(a.table) - order(b.table) || (a.entry.name < b.entry.name ? -1 : 1),
  );
  return archive;
}

/** A JSON-lines entry's rows, after its hash is checked. */
async function readRows(file: Blob, e: Archive['tableEntries'][number]): Promise<Row[]> {
  const bytes = await readBlobZipEntry(file, e.entry);
  if (!bytes.ok) return refuse(`\`${e.entry.name}\` cannot be read (${bytes.error}).`);
  if ((await tallyOf(bytes.value)).sha256 !== e.sha256)
    refuse(`\`${e.entry.name}\` does not match its hash: the archive is damaged.`);
  const rows: Row[] = [];
  for (const line of new TextDecoder().decode(bytes.value).split('\n')) {
    if (line === '') continue;
    const row = decodeRow(line);
    if (!row) return refuse(`\`${e.entry.name}\` holds a line that is not a row.`);
    rows.push(row);
  }
  return rows;
}

/** An entry's data in chunks; a damaged entry is a refusal of the archive, not a crash. */
async function* entryChunks(file: Blob, entry: ZipEntry): AsyncIterable<Uint8Array> {
  try {
    yield* blobZipEntryChunks(file, entry);
  } catch (e) {
    refuse(e instanceof Error ? e.message : String(e));
  }
}

/**
 * A row's content without when it was made or changed: the example character seeded in two
 * browsers, or a setting saved again unchanged, is the same thing.
 */
function content(row: Row): Row {
  if (!('createdAt' in row) && !('updatedAt' in row)) return row;
  const { createdAt: _c, updatedAt: _u, ...rest } = row;
  return rest;
}

/** Rows as stored by older versions pass the same decoding boundaries stored rows do. */
function upgraded(table: BackupTable, row: Row): Row {
  return table === 'connections' ? (upgradeConnection(row) as Row) : row;
}

/** The examples every browser is seeded with: when unchanged here, they are not the person's to count. */
const BUILT_IN: ReadonlySet<ItemKey> = new Set([
  itemKey('character', EXAMPLE_CHARACTER_ID),
  itemKey('lorebook', EXAMPLE_LOREBOOK_ID),
  itemKey('setting', 'exampleCharacterSeeded'),
]);

/** What a restore knows about the archive's items after the dry run. */
interface Plan {
  archive: Archive;
  items: Map<ItemKey, InspectedItem>;
  /** Skill folder (`installed/<dir>`) → the skill it holds. */
  skillDirs: Map<string, ItemKey>;
  newRuns: number;
}

const keyPathOf = (table: Table) => table.schema.primKey.keyPath!;
const keyOf = (table: Table, row: Row): unknown => {
  const path = keyPathOf(table);
  return Array.isArray(path) ? path.map((p) => row[p]) : row[path];
};

/** Rows of the database that belong to an item besides its owner row (a chat's messages, …). */
function dependents(db: HearthDatabase, kind: ItemKind, id: string) {
  const range = (table: string, index: string) =>
    db.table(table).where(index).between([id, Dexie.minKey], [id, Dexie.maxKey]);
  switch (kind) {
    case 'chat':
      return [range('chatMessages', '[chatId+index]')];
    case 'session':
      return [range('sessionMessages', '[sessionId+index]')];
    case 'extension':
      return [db.table('extensionFiles').where('extensionId').equals(id)];
    case 'mcpServer':
      return [db.table('mcpCatalogs').where('serverId').equals(id)];
    default:
      return [];
  }
}

/**
 * The dry run: reads every entry (checking its hash) and compares each item with what this
 * browser has: `new`, `same` (every row equal, API keys and times aside, and no rows of its own
 * here beyond the backup's) or `conflict`.
 */
export async function inspectBackup(
  file: Blob,
  deps: Deps,
): Promise<{ inspection: BackupInspection; plan: Plan }> {
  const { db } = deps;
  const archive = await openArchive(file, db.verno);
  if (deps.freeBytes !== undefined && archive.totalBytes > deps.freeBytes)
    throw new HearthFailure(
      hearthError(
        'storage.quota_exceeded',
        `Restoring needs up to ${mib(archive.totalBytes)} but this browser lets Hearth store only ${mib(deps.freeBytes)} more. Free space first (Settings → Retention, or export and delete chats and sessions you no longer need).`,
      ),
    );
  const items = new Map<ItemKey, InspectedItem>();
  const equal = new Map<ItemKey, boolean>();
  const rowCounts = new Map<ItemKey, number>();
  const skillDirs = new Map<string, ItemKey>();
  const emptyTables = new Set<BackupTable>();
  let newRuns = 0;
  const reach: BackupInspection['reach'] = [];
  let secretsInArchive = 0;
  /** Each extension's files as the backup has them, to hold against the hash it was installed with. */
  const extensionFiles = new Map<string, PackageFile[]>();
  const extensionHashes = new Map<ItemKey, string>();
  const progress: BackupProgress = { doneBytes: 0, totalBytes: archive.totalBytes };

  for (const e of archive.tableEntries) {
    deps.signal.throwIfAborted();
    const rows = (await readRows(file, e)).map((r) => upgraded(e.table, r));
    const table = db.table(e.table);
    // An empty table (a fresh profile) holds nothing to compare with.
    if (!emptyTables.has(e.table) && (await table.count()) === 0) emptyTables.add(e.table);
    const existing = emptyTables.has(e.table)
      ? rows.map(() => undefined)
      : await table.bulkGet(rows.map((r) => keyOf(table, r)) as never[]);
    rows.forEach((raw, i) => {
      const owner = rowOwner(e.table, raw);
      if (owner === null) {
        if (e.table === 'runs' && existing[i] === undefined) newRuns++;
        return;
      }
      const kind = owner.slice(0, owner.indexOf(':')) as ItemKind;
      const check = checkRestoredRow(e.table, raw, existing[i] as Row | undefined, deps.appOrigin);
      const row = check.row;
      if (e.table === OWNER_TABLE[kind]) {
        const label = itemLabel(kind, row);
        items.set(owner, {
          key: owner,
          kind,
          label,
          status: existing[i] ? 'same' : 'new',
          ...(check.problem ? { problem: check.problem } : {}),
          ...(check.needsSecret ? { needsSecret: check.needsSecret } : {}),
        });
        if (check.secretInArchive) secretsInArchive++;
        if (kind === 'skill' && typeof row.dir === 'string') skillDirs.set(row.dir, owner);
        if (check.addresses && !check.problem)
          reach.push({ key: owner, kind, label, addresses: check.addresses });
        if (kind === 'extension') extensionHashes.set(owner, String(row.sha256));
      }
      if (e.table === 'extensionFiles' && row.bytes instanceof Uint8Array) {
        const id = String(row.extensionId);
        extensionFiles.set(id, [
          ...(extensionFiles.get(id) ?? []),
          { path: String(row.path), bytes: row.bytes },
        ]);
      }
      rowCounts.set(owner, (rowCounts.get(owner) ?? 0) + 1);
      const same =
        existing[i] !== undefined &&
        encodeRow(content(withoutSecrets(e.table, existing[i] as Row))) ===
          encodeRow(content(withoutSecrets(e.table, row)));
      equal.set(owner, (equal.get(owner) ?? true) && same);
    });
    progress.doneBytes += e.entry.size;
    deps.onProgress({ ...progress });
  }
  for (const [key, sha256] of extensionHashes) {
    const item = items.get(key)!;
    const files = extensionFiles.get(key.slice('extension:'.length)) ?? [];
    if (!item.problem && (await packageHash(files)) !== sha256)
      item.problem = 'its files are not the ones it was installed with';
  }
  for (const item of items.values()) {
    if (item.status === 'new') continue;
    let count = 1;
    const id = item.key.slice(item.kind.length + 1);
    for (const c of dependents(db, item.kind, id)) count += await c.count();
    if (!equal.get(item.key) || count !== rowCounts.get(item.key)) item.status = 'conflict';
    else if (BUILT_IN.has(item.key)) item.builtIn = true;
  }
  for (const f of archive.fileEntries) {
    // Files are hashed as they are restored; the dry run checks their sizes and places only.
    progress.doneBytes += f.entry.size;
  }
  deps.onProgress({ ...progress });
  const m = archive.manifest;
  return {
    inspection: {
      appVersion: m.appVersion,
      createdAt: m.createdAt,
      dbVersion: m.dbVersion,
      includesRuns: m.includesRuns,
      totalBytes: archive.totalBytes,
      items: [...items.values()],
      newRuns,
      reach,
      secretsInArchive,
    },
    plan: { archive, items, skillDirs, newRuns },
  };
}

type Action = ReturnType<typeof actionFor>;

/**
 * Applies a dry run's plan with the person's choices. Files go to a staging folder first; then
 * every row is written in ONE database transaction together with a marker naming the workspaces
 * to move in; then those are moved into place. A failure or cancel before the commit leaves the
 * data as it was; one after it is finished by {@link finishRestores} on the next start.
 */
export async function applyRestore(
  file: Blob,
  plan: Plan,
  choices: RestoreChoices,
  deps: Deps,
): Promise<RestoreSummary> {
  const { db, opfsRoot } = deps;
  if (
    (await db
      .table('runs')
      .where('status')
      .noneOf([...TERMINAL_STATUSES])
      .count()) > 0
  )
    throw new HearthFailure(
      hearthError('backup.busy', 'A run is working: stop it (or let it finish) before restoring a backup.'),
    );
  const restoreId = crypto.randomUUID();
  const summary: RestoreSummary = {
    added: 0,
    replaced: 0,
    kept: 0,
    skipped: 0,
    same: 0,
    runsAdded: 0,
    needsSecret: [],
  };
  const actions = new Map<ItemKey, Action>();
  const ids = new Map<ItemKey, string>();
  for (const item of plan.items.values()) {
    const wanted = choices.each[item.key] ?? choices.all;
    const choice = wanted === 'keep' && !KEEP_BOTH_KINDS.has(item.kind) ? 'skip' : wanted;
    // An item its page would refuse is left out, whatever was chosen.
    const action = item.problem ? 'skip' : actionFor(item.status, choice);
    actions.set(item.key, action);
    if (action === 'keep') ids.set(item.key, crypto.randomUUID());
    if (item.builtIn) continue;
    if (item.status === 'same') summary.same++;
    else
      summary[
        action === 'add'
          ? 'added'
          : action === 'replace'
            ? 'replaced'
            : action === 'keep'
              ? 'kept'
              : 'skipped'
      ]++;
  }
  const actionOf = (owner: ItemKey | null): Action | 'history' =>
    owner === null ? 'history' : (actions.get(owner) ?? 'skip');
  const progress: BackupProgress = { doneBytes: 0, totalBytes: plan.archive.totalBytes };
  const staging = (await directoryAt(opfsRoot, [STAGING_DIR, restoreId], true))!;

  try {
    // 1. Files, into the staging folder under the units they will be moved to.
    const swaps = new Map<string, { unit: string; replace: boolean }>();
    for (const item of plan.items.values()) {
      const action = actions.get(item.key);
      const id = item.key.slice(item.kind.length + 1);
      if (action === 'replace' && (item.kind === 'chat' || item.kind === 'session'))
        swaps.set(`${item.kind}s/${id}`, { unit: `${item.kind}s/${id}`, replace: true });
    }
    for (const f of plan.archive.fileEntries) {
      deps.signal.throwIfAborted();
      const place = fileUnit(f.segments)!;
      const owner =
        place.owner === 'skillDir' ? (plan.skillDirs.get(`installed/${f.segments[3]}`) ?? null) : place.owner;
      const action = owner === null ? 'skip' : actionOf(owner);
      if (action === 'add' || action === 'replace' || action === 'keep') {
        const unit = remapUnit(place.unit, ids);
        swaps.set(unit, { unit, replace: action === 'replace' || place.owner === 'skillDir' });
        const rest = f.segments.slice(place.unit.split('/').length);
        const tally = await Tally.start();
        await writeChunks(staging, [...unit.split('/'), ...rest], tally.each(entryChunks(file, f.entry)));
        if (tally.finish().sha256 !== f.sha256)
          refuse(`\`${f.entry.name}\` does not match its hash: the archive is damaged.`);
      }
      progress.doneBytes += f.entry.size;
      deps.onProgress({ ...progress });
    }

    // 2. Every row, and the marker, in one transaction.
    const tables = [...new Set(plan.archive.tableEntries.map((e) => e.table)), 'settings', 'mcpCredentials'];
    await db.transaction('rw', tables, async () => {
      const cleared = new Set<ItemKey>();
      // History tables empty when the restore began need no look-ups for what is missing.
      const seenTables = new Set<BackupTable>();
      const emptyAtStart = new Set<BackupTable>();
      for (const e of plan.archive.tableEntries) {
        deps.signal.throwIfAborted();
        const rows = await Dexie.waitFor(readRows(file, e));
        const table = db.table(e.table);
        const put: Row[] = [];
        const history: Row[] = [];
        for (const raw of rows) {
          const row = upgraded(e.table, raw);
          const owner = rowOwner(e.table, row);
          const action = actionOf(owner);
          if (action === 'history') history.push(row);
          else if (action === 'add' || action === 'keep' || action === 'replace') {
            if (action === 'replace' && !cleared.has(owner!)) {
              cleared.add(owner!);
              const kind = owner!.slice(0, owner!.indexOf(':')) as ItemKind;
              for (const c of dependents(db, kind, owner!.slice(kind.length + 1))) await c.delete();
            }
            const remapped = remapRow(e.table, row, ids);
            // Awaited only where a row of this browser is read: Dexie keeps its transaction then.
            const checked = SECRET_TABLES.has(e.table)
              ? checkedRow(
                  e.table,
                  remapped,
                  (await table.get(keyOf(table, remapped) as never)) as Row | undefined,
                  deps.appOrigin,
                )
              : { row: remapped };
            if (checked.forgetSignIn) await db.table('mcpCredentials').delete(String(checked.row.id));
            const item = plan.items.get(owner!);
            if (checked.needsSecret && item)
              summary.needsSecret.push({
                key: item.key,
                kind: item.kind,
                label: item.label,
                what: checked.needsSecret,
              });
            put.push(checked.row);
          }
        }
        if (history.length) {
          if (!seenTables.has(e.table)) {
            seenTables.add(e.table);
            if ((await table.count()) === 0) emptyAtStart.add(e.table);
          }
          const found = emptyAtStart.has(e.table)
            ? []
            : await table.bulkGet(history.map((r) => keyOf(table, r)) as never[]);
          const missing = history.filter((_, i) => found[i] === undefined);
          if (e.table === 'runs') summary.runsAdded += missing.length;
          put.push(...missing);
        }
        if (put.length) await table.bulkPut(put);
        progress.doneBytes += e.entry.size;
        deps.onProgress({ ...progress });
      }
      await db
        .table('settings')
        .put({ key: RESTORE_MARKER_PREFIX + restoreId, value: { swaps: [...swaps.values()] } });
    });
  } catch (e) {
    await removeEntry((await directoryAt(opfsRoot, [STAGING_DIR], false))!, restoreId);
    throw e;
  }
  await finishRestores(db, opfsRoot, deps.changed);
  return summary;
}

/**
 * A row as it is written: checked again against this browser's row of the same id (as the dry
 * run did), so a secret stays only for the exact address it was given for and none comes in.
 */
function checkedRow(
  name: BackupTable,
  row: Row,
  here: Row | undefined,
  appOrigin: string | undefined,
): RowCheck {
  const checked = checkRestoredRow(name, row, here, appOrigin);
  if (checked.problem) refuse(`${String(row.id)} cannot be restored: ${checked.problem}.`);
  return checked;
}

/** Tables whose rows carry secrets or reach the network: each is checked against this browser's row. */
const SECRET_TABLES: ReadonlySet<BackupTable> = new Set(['connections', 'mcpServers', 'extensions']);

/**
 * Finishes restores whose rows were committed (their workspaces moved into place) and removes
 * the staging folders of restores that never committed. Safe to run again after an interruption.
 */
export async function finishRestores(
  db: HearthDatabase,
  opfsRoot: Dir,
  /** Told of each workspace moved in or removed (a cache of it is stale now). */
  changed: (unit: string) => void = () => {},
): Promise<void> {
  const stagingRoot = await directoryAt(opfsRoot, [STAGING_DIR], false);
  if (!stagingRoot) return;
  const workspaces = (await directoryAt(opfsRoot, [WORKSPACES_DIR], true))!;
  const ids = new Set<string>();
  for await (const name of (stagingRoot as Dir & { keys(): AsyncIterable<string> }).keys()) ids.add(name);
  for (const id of ids) {
    const marker = (await db.table('settings').get(RESTORE_MARKER_PREFIX + id)) as
      { value: { swaps: { unit: string; replace: boolean }[] } } | undefined;
    if (marker) {
      const staged = (await directoryAt(stagingRoot, [id], false))!;
      // Each finished move is struck off the marker, so a restart never repeats a removal.
      const left = [...marker.value.swaps];
      while (left.length) {
        const swap = left[0]!;
        const segments = swap.unit.split('/');
        const source = await directoryAt(staged, segments, false);
        if (source) await moveTree(staged, segments, workspaces, segments);
        else if (swap.replace) await removePath(workspaces, segments);
        changed(swap.unit);
        left.shift();
        await db.table('settings').put({ key: RESTORE_MARKER_PREFIX + id, value: { swaps: left } });
      }
      await db.table('settings').delete(RESTORE_MARKER_PREFIX + id);
    }
    await removeEntry(stagingRoot, id);
  }
}
