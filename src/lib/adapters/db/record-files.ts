import Dexie from 'dexie';
import { sha256Hex } from '$lib/domain/hash';
import { ok, type Result } from '$lib/domain/result';
import { parentOf, type WorkspacePath } from '$lib/domain/workspace-path';
import type {
  AppendOutcome,
  FileStat,
  Workspace,
  WorkspaceEntry,
  WorkspaceError,
  WorkspaceStore,
  WriteGuard,
} from '$lib/ports/workspace';
import {
  conflict,
  fileNotFound,
  isAFile,
  pathIsDirectory,
  quotaFull,
  storageFailed,
} from '../workspace-errors';
import { workspaceKeySegments } from '../workspace-key';
import { isQuotaExceeded } from '../storage-failure';
import type { HearthDatabase } from './database';

/** One entry of a workspace's record tree: a file with its bytes, or a directory. */
export type RecordRow =
  | { workspace: string; path: string; kind: 'file'; bytes: Uint8Array; sha256: string }
  | { workspace: string; path: string; kind: 'directory' };

type Rows = HearthDatabase['records'];

const ancestors = (path: string): string[] => {
  const out: string[] = [];
  for (let p = parentOf(path as WorkspacePath); p !== null; p = parentOf(p)) out.push(p);
  return out;
};

/** Every row strictly below `dir` (the workspace root when null). */
const below = (rows: Rows, workspace: string, dir: string | null) =>
  dir === null
    ? rows.where('[workspace+path]').between([workspace, ''], [workspace, Dexie.maxKey])
    : rows.where('[workspace+path]').between([workspace, `${dir}/`], [workspace, `${dir}/\uffff`]);

/** The first ancestor of `path` that is a file: the path cannot exist below it. */
async function fileAbove(rows: Rows, workspace: string, path: string): Promise<string | undefined> {
  const found = await rows.bulkGet(ancestors(path).map((a) => [workspace, a]));
  return found.find((r) => r?.kind === 'file')?.path;
}

type FileToPut = { workspace: string; path: string; bytes: Uint8Array; sha256: string };

/**
 * Stores files and their parent directories; call inside a read-write transaction over
 * `records`. One read of every row involved, then the writes, so a step costs two requests.
 * `once`: records written once (audit files): the same bytes again are a no-op, different bytes
 * are refused.
 */
export async function putRecordFiles(
  rows: Rows,
  files: readonly FileToPut[],
  mode: 'replace' | 'once',
): Promise<Result<void, WorkspaceError>> {
  if (files.length === 0) return ok(undefined);
  const keys = files.flatMap((f) =>
    [f.path, ...ancestors(f.path)].map((p) => [f.workspace, p] as [string, string]),
  );
  const found = new Map<string, RecordRow>();
  for (const row of await rows.bulkGet(keys)) if (row) found.set(`${row.workspace}\n${row.path}`, row);
  const puts = new Map<string, RecordRow>();
  for (const f of files) {
    const above = ancestors(f.path).find((a) => found.get(`${f.workspace}\n${a}`)?.kind === 'file');
    if (above) return isAFile(above);
    const current = found.get(`${f.workspace}\n${f.path}`);
    if (current?.kind === 'directory') return pathIsDirectory(f.path);
    if (mode === 'once' && current?.kind === 'file') {
      if (current.sha256 === f.sha256) continue;
      return conflict(f.path, 'already holds another record');
    }
    for (const path of ancestors(f.path)) {
      const key = `${f.workspace}\n${path}`;
      if (!found.has(key)) puts.set(key, { workspace: f.workspace, path, kind: 'directory' });
    }
    puts.set(`${f.workspace}\n${f.path}`, { ...f, bytes: f.bytes.slice(), kind: 'file' });
  }
  if (puts.size > 0) await rows.bulkPut([...puts.values()]);
  return ok(undefined);
}

class RecordWorkspace implements Workspace {
  constructor(
    readonly key: string,
    private readonly db: HearthDatabase,
  ) {}

  stat(path: WorkspacePath): Promise<Result<FileStat | null, WorkspaceError>> {
    return this.#tx('r', async (rows) => {
      const row = await rows.get([this.key, path]);
      if (!row) return ok(null);
      return ok(
        row.kind === 'file' ? { kind: 'file', size: row.bytes.byteLength } : { kind: 'directory', size: 0 },
      );
    });
  }

  read(path: WorkspacePath): Promise<Result<Uint8Array, WorkspaceError>> {
    return this.#tx('r', async (rows) => {
      const blocked = await fileAbove(rows, this.key, path);
      if (blocked) return isAFile(blocked);
      const row = await rows.get([this.key, path]);
      if (!row) return fileNotFound(path);
      return row.kind === 'file' ? ok(row.bytes.slice()) : pathIsDirectory(path);
    });
  }

  async write(
    path: WorkspacePath,
    data: Uint8Array,
    guard: WriteGuard = { kind: 'none' },
  ): Promise<Result<{ sha256: string }, WorkspaceError>> {
    const sha256 = await sha256Hex(data);
    return this.#tx('rw', async (rows) => {
      const current = await rows.get([this.key, path]);
      if (current?.kind === 'file') {
        if (guard.kind === 'absent') return conflict(path, 'already exists');
        if (guard.kind === 'sha256' && current.sha256 !== guard.sha256) return conflict(path, 'has changed');
      } else if (guard.kind === 'sha256' && current === undefined) {
        const blocked = await fileAbove(rows, this.key, path);
        return blocked ? isAFile(blocked) : fileNotFound(path);
      }
      const put = await putRecordFiles(rows, [{ workspace: this.key, path, bytes: data, sha256 }], 'replace');
      return put.ok ? ok({ sha256 }) : put;
    });
  }

  /** Read, hash outside the transaction, then write if nothing changed meanwhile (else again). */
  async append(path: WorkspacePath, data: Uint8Array): Promise<Result<AppendOutcome, WorkspaceError>> {
    for (;;) {
      const before = await this.#tx('r', async (rows) => {
        const blocked = await fileAbove(rows, this.key, path);
        if (blocked) return isAFile(blocked);
        const row = await rows.get([this.key, path]);
        if (row?.kind === 'directory') return pathIsDirectory(path);
        return ok(row ?? null);
      });
      if (!before.ok) return before;
      const previous = before.value;
      const next = new Uint8Array((previous?.bytes.byteLength ?? 0) + data.byteLength);
      if (previous) next.set(previous.bytes);
      next.set(data, previous?.bytes.byteLength ?? 0);
      const sha256 = await sha256Hex(next);
      const written = await this.#tx('rw', async (rows) => {
        const now = await rows.get([this.key, path]);
        const unchanged = now?.kind === 'file' ? now.sha256 === previous?.sha256 : previous === null;
        if (!unchanged) return ok(false);
        const put = await putRecordFiles(
          rows,
          [{ workspace: this.key, path, bytes: next, sha256 }],
          'replace',
        );
        return put.ok ? ok(true) : put;
      });
      if (!written.ok) return written;
      if (written.value) return ok({ sha256, created: !previous, previousSha256: previous?.sha256 ?? null });
    }
  }

  list(dir?: WorkspacePath): Promise<Result<WorkspaceEntry[], WorkspaceError>> {
    return this.#tx('r', async (rows) => {
      if (dir !== undefined) {
        const blocked = await fileAbove(rows, this.key, dir);
        if (blocked) return isAFile(blocked);
        const row = await rows.get([this.key, dir]);
        if (!row) return fileNotFound(dir);
        if (row.kind === 'file') return isAFile(dir);
      }
      const start = dir === undefined ? 0 : dir.length + 1;
      const entries: WorkspaceEntry[] = [];
      // Keys are sorted by path, so the entries come out sorted too.
      await below(rows, this.key, dir ?? null).each((row) => {
        if (!row.path.includes('/', start)) entries.push({ path: row.path as WorkspacePath, kind: row.kind });
      });
      return ok(entries);
    });
  }

  remove(path: WorkspacePath): Promise<Result<void, WorkspaceError>> {
    return this.#tx('rw', async (rows) => {
      await rows.delete([this.key, path]);
      await below(rows, this.key, path).delete();
      return ok(undefined);
    });
  }

  async #tx<T>(
    mode: 'r' | 'rw',
    body: (rows: Rows) => Promise<Result<T, WorkspaceError>>,
  ): Promise<Result<T, WorkspaceError>> {
    try {
      return await this.db.transaction(mode, this.db.records, () => body(this.db.records));
    } catch (e) {
      if (isQuotaExceeded(e)) return quotaFull("save the run's records");
      return storageFailed(
        `Run records could not be accessed: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }
}

/**
 * Workspaces whose files are rows of IndexedDB (`records`): the runtime's records, which the
 * journal writes in the same transaction as the events that point at them. Same contract as
 * the file workspaces; one transaction per operation serializes writers across tabs.
 */
export class DexieRecordStore implements WorkspaceStore {
  constructor(private readonly db: HearthDatabase) {}

  async open(key: string): Promise<Result<Workspace, WorkspaceError>> {
    const segments = workspaceKeySegments(key);
    if (!segments.ok) return segments;
    return ok(new RecordWorkspace(segments.value.join('/'), this.db));
  }

  async delete(key: string): Promise<Result<void, WorkspaceError>> {
    const segments = workspaceKeySegments(key);
    if (!segments.ok) return segments;
    const normalized = segments.value.join('/');
    try {
      await this.db.transaction('rw', this.db.records, async () => {
        const index = this.db.records.where('workspace');
        await index.equals(normalized).delete();
        await index.between(`${normalized}/`, `${normalized}/\uffff`).delete();
      });
      return ok(undefined);
    } catch (e) {
      return storageFailed(`Run records could not be deleted: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
