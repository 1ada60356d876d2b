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
import { workspaceKeySegments } from '../workspace-key';
import { conflict, fileNotFound, isAFile, pathIsDirectory } from '../workspace-errors';
import { KeyedMutex } from './keyed-mutex';

interface StoredFile {
  data: Uint8Array;
  sha256: string;
}

/** One workspace's tree: files by path, and every directory (explicit or a parent of a file). */
class Tree {
  readonly files = new Map<string, StoredFile>();
  readonly dirs = new Set<string>();
}

const ancestors = (path: WorkspacePath): WorkspacePath[] => {
  const out: WorkspacePath[] = [];
  for (let p = parentOf(path); p !== null; p = parentOf(p)) out.push(p);
  return out;
};

const isChildOf = (path: string, dir: string | undefined): boolean =>
  dir === undefined ? !path.includes('/') : path.startsWith(`${dir}/`) && !path.includes('/', dir.length + 1);

const byPath = (a: WorkspaceEntry, b: WorkspaceEntry) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

class MemoryWorkspace implements Workspace {
  constructor(
    readonly key: string,
    private readonly tree: Tree,
    private readonly mutex: KeyedMutex,
  ) {}

  async stat(path: WorkspacePath): Promise<Result<FileStat | null, WorkspaceError>> {
    const file = this.tree.files.get(path);
    if (file) return ok({ kind: 'file', size: file.data.byteLength });
    return ok(this.tree.dirs.has(path) ? { kind: 'directory', size: 0 } : null);
  }

  async read(path: WorkspacePath): Promise<Result<Uint8Array, WorkspaceError>> {
    const blocked = this.#checkTarget(path);
    if (blocked) return blocked;
    const file = this.tree.files.get(path);
    return file ? ok(file.data.slice()) : fileNotFound(path);
  }

  write(
    path: WorkspacePath,
    data: Uint8Array,
    guard: WriteGuard = { kind: 'none' },
  ): Promise<Result<{ sha256: string }, WorkspaceError>> {
    return this.#locked(path, async () => {
      const blocked = this.#checkTarget(path);
      if (blocked) return blocked;
      const current = this.tree.files.get(path);
      if (guard.kind === 'absent' && current) return conflict(path, 'already exists');
      if (guard.kind === 'sha256') {
        if (!current) return fileNotFound(path);
        if (current.sha256 !== guard.sha256) return conflict(path, 'has changed');
      }
      const sha256 = await sha256Hex(data);
      this.#store(path, { data: data.slice(), sha256 });
      return ok({ sha256 });
    });
  }

  append(path: WorkspacePath, data: Uint8Array): Promise<Result<AppendOutcome, WorkspaceError>> {
    return this.#locked(path, async () => {
      const blocked = this.#checkTarget(path);
      if (blocked) return blocked;
      const previous = this.tree.files.get(path);
      const next = new Uint8Array((previous?.data.byteLength ?? 0) + data.byteLength);
      if (previous) next.set(previous.data);
      next.set(data, previous?.data.byteLength ?? 0);
      const sha256 = await sha256Hex(next);
      this.#store(path, { data: next, sha256 });
      return ok({ sha256, created: !previous, previousSha256: previous?.sha256 ?? null });
    });
  }

  async list(dir?: WorkspacePath): Promise<Result<WorkspaceEntry[], WorkspaceError>> {
    if (dir !== undefined) {
      const blocked = this.#checkParents(dir);
      if (blocked) return blocked;
      if (this.tree.files.has(dir)) return isAFile(dir);
      if (!this.tree.dirs.has(dir)) return fileNotFound(dir);
    }
    const entries: WorkspaceEntry[] = [];
    for (const p of this.tree.dirs)
      if (isChildOf(p, dir)) entries.push({ path: p as WorkspacePath, kind: 'directory' });
    for (const p of this.tree.files.keys())
      if (isChildOf(p, dir)) entries.push({ path: p as WorkspacePath, kind: 'file' });
    return ok(entries.sort(byPath));
  }

  remove(path: WorkspacePath): Promise<Result<void, WorkspaceError>> {
    return this.#locked(path, async () => {
      const prefix = `${path}/`;
      this.tree.files.delete(path);
      this.tree.dirs.delete(path);
      for (const p of [...this.tree.files.keys()]) if (p.startsWith(prefix)) this.tree.files.delete(p);
      for (const p of [...this.tree.dirs]) if (p.startsWith(prefix)) this.tree.dirs.delete(p);
      return ok(undefined);
    });
  }

  #locked<T>(path: WorkspacePath, fn: () => Promise<Result<T, WorkspaceError>>) {
    return this.mutex.run(`${this.key}:${path}`, fn);
  }

  /** A parent that is a file makes the path unreachable; a directory cannot be read or written. */
  #checkTarget(path: WorkspacePath) {
    return this.#checkParents(path) ?? (this.tree.dirs.has(path) ? pathIsDirectory(path) : undefined);
  }

  #checkParents(path: WorkspacePath) {
    const file = ancestors(path).findLast((a) => this.tree.files.has(a));
    return file === undefined ? undefined : isAFile(file);
  }

  #store(path: WorkspacePath, file: StoredFile) {
    for (const a of ancestors(path)) this.tree.dirs.add(a);
    this.tree.files.set(path, file);
  }
}

/** Workspaces held in memory (tests, Node): same contract as OPFS, serialized in-process. */
export class MemoryWorkspaceStore implements WorkspaceStore {
  readonly #trees = new Map<string, Tree>();
  readonly #mutex = new KeyedMutex();

  async open(key: string): Promise<Result<Workspace, WorkspaceError>> {
    const segments = workspaceKeySegments(key);
    if (!segments.ok) return segments;
    const normalized = segments.value.join('/');
    let tree = this.#trees.get(normalized);
    if (!tree) this.#trees.set(normalized, (tree = new Tree()));
    return ok(new MemoryWorkspace(normalized, tree, this.#mutex));
  }

  async delete(key: string): Promise<Result<void, WorkspaceError>> {
    const segments = workspaceKeySegments(key);
    if (!segments.ok) return segments;
    const normalized = segments.value.join('/');
    for (const k of [...this.#trees.keys()]) {
      if (k === normalized || k.startsWith(`${normalized}/`)) this.#trees.delete(k);
    }
    return ok(undefined);
  }
}
