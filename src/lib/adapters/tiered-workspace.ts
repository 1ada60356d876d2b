import { ok, type Result } from '$lib/domain/result';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import { isRecordPath } from '$lib/domain/workspace-roots';
import type {
  AppendOutcome,
  FileStat,
  Workspace,
  WorkspaceEntry,
  WorkspaceError,
  WorkspaceStore,
  WriteGuard,
} from '$lib/ports/workspace';

const byPath = (a: WorkspaceEntry, b: WorkspaceEntry) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
const missing = (r: Result<unknown, WorkspaceError>) => !r.ok && r.error.code === 'workspace.file_not_found';

/**
 * One workspace over two stores: the runtime's records (`RECORD_ROOTS`) in the record store,
 * everything else in the file store. Records written before the record store existed are still
 * in the file store: reads fall back to it, listings merge both, removals clear both.
 */
class TieredWorkspace implements Workspace {
  constructor(
    private readonly files: Workspace,
    private readonly records: Workspace,
  ) {}

  get key(): string {
    return this.files.key;
  }

  async stat(path: WorkspacePath): Promise<Result<FileStat | null, WorkspaceError>> {
    if (!isRecordPath(path)) return this.files.stat(path);
    const own = await this.records.stat(path);
    return own.ok && own.value === null ? this.files.stat(path) : own;
  }

  async read(path: WorkspacePath): Promise<Result<Uint8Array, WorkspaceError>> {
    if (!isRecordPath(path)) return this.files.read(path);
    const own = await this.records.read(path);
    return missing(own) ? this.files.read(path) : own;
  }

  write(
    path: WorkspacePath,
    data: Uint8Array,
    guard?: WriteGuard,
  ): Promise<Result<{ sha256: string }, WorkspaceError>> {
    return isRecordPath(path) ? this.records.write(path, data, guard) : this.files.write(path, data, guard);
  }

  async append(path: WorkspacePath, data: Uint8Array): Promise<Result<AppendOutcome, WorkspaceError>> {
    if (!isRecordPath(path)) return this.files.append(path, data);
    // A record started in the file store moves over on its first append, so nothing is split.
    const own = await this.records.stat(path);
    if (!own.ok) return own;
    if (own.value === null) {
      const old = await this.files.read(path);
      if (old.ok) {
        const moved = await this.records.write(path, old.value, { kind: 'absent' });
        if (!moved.ok && moved.error.code !== 'workspace.conflict') return moved;
        await this.files.remove(path);
      }
    }
    return this.records.append(path, data);
  }

  async list(dir?: WorkspacePath): Promise<Result<WorkspaceEntry[], WorkspaceError>> {
    if (dir !== undefined && !isRecordPath(dir)) return this.files.list(dir);
    const [files, records] = await Promise.all([this.files.list(dir), this.records.list(dir)]);
    if (!files.ok && !missing(files)) return files;
    if (!records.ok && !missing(records)) return records;
    if (!files.ok && !records.ok) return files;
    const merged = new Map<string, WorkspaceEntry>();
    // At the root, the file store's copy of a record root is a leftover of older runs.
    for (const e of files.ok ? files.value : []) merged.set(e.path, e);
    for (const e of records.ok ? records.value : []) merged.set(e.path, e);
    return ok([...merged.values()].sort(byPath));
  }

  async remove(path: WorkspacePath): Promise<Result<void, WorkspaceError>> {
    if (!isRecordPath(path)) return this.files.remove(path);
    const own = await this.records.remove(path);
    return own.ok ? this.files.remove(path) : own;
  }
  async prefetch(dirs: readonly WorkspacePath[]): Promise<void> {
    await this.files.prefetch?.(dirs.filter((dir) => !isRecordPath(dir)));
  }
}

/** Workspaces whose records live in `records` and whose files live in `files` (see TieredWorkspace). */
export class TieredWorkspaceStore implements WorkspaceStore {
  constructor(
    private readonly files: WorkspaceStore,
    private readonly records: WorkspaceStore,
  ) {}

  async open(key: string): Promise<Result<Workspace, WorkspaceError>> {
    const files = await this.files.open(key);
    if (!files.ok) return files;
    const records = await this.records.open(key);
    if (!records.ok) return records;
    return ok(new TieredWorkspace(files.value, records.value));
  }

  async delete(key: string): Promise<Result<void, WorkspaceError>> {
    const records = await this.records.delete(key);
    return records.ok ? this.files.delete(key) : records;
  }
}
