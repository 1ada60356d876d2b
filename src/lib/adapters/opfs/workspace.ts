import { sha256Hex } from '$lib/domain/hash';
import { ok, type Result } from '$lib/domain/result';
import { joinPath, pathSegments, type WorkspacePath } from '$lib/domain/workspace-path';
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
import {
  conflict,
  fileNotFound,
  isAFile,
  pathIsDirectory,
  quotaFull,
  storageFailed,
} from '../workspace-errors';
import { isQuotaExceeded } from '../storage-failure';

type Dir = FileSystemDirectoryHandle;
/** lib.dom has no async iteration for directory handles yet; Chromium has it. */
type IterableDir = Dir & { entries(): AsyncIterableIterator<[string, FileSystemHandle]> };

const BASE = 'workspaces';

const domError = (e: unknown): string | undefined => (e instanceof DOMException ? e.name : undefined);

/**
 * Maps anything thrown inside a port method to `workspace.storage_failed`, or to
 * `storage.quota_exceeded` when what `saving` names did not fit: the port never throws.
 */
async function guarded<T>(what: string, fn: () => Promise<Result<T, WorkspaceError>>, saving?: string) {
  try {
    return await fn();
  } catch (e) {
    if (isQuotaExceeded(e)) return quotaFull(saving ?? what);
    const detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return storageFailed(`Workspace storage failed to ${what}: ${detail}`);
  }
}

/** The directory at `segments` below `root`; a missing one is created only when `create` is set. */
async function walk(
  root: Dir,
  segments: readonly string[],
  create: boolean,
): Promise<Result<Dir, WorkspaceError>> {
  let dir = root;
  for (let i = 0; i < segments.length; i++) {
    try {
      dir = await dir.getDirectoryHandle(segments[i]!, { create });
    } catch (e) {
      const prefix = segments.slice(0, i + 1).join('/');
      if (domError(e) === 'NotFoundError') return fileNotFound(prefix);
      if (domError(e) === 'TypeMismatchError') return isAFile(prefix);
      throw e;
    }
  }
  return ok(dir);
}

type Entry = { kind: 'file'; handle: FileSystemFileHandle } | { kind: 'directory' } | null;

async function entryIn(dir: Dir, name: string): Promise<Entry> {
  try {
    return { kind: 'file', handle: await dir.getFileHandle(name) };
  } catch (e) {
    if (domError(e) === 'NotFoundError') return null;
    if (domError(e) !== 'TypeMismatchError') throw e;
  }
  // Also thrown when `dir` itself has become a file: only a directory handle proves a directory.
  await dir.getDirectoryHandle(name);
  return { kind: 'directory' };
}

/** Reads take no lock: a File snapshot taken just before a concurrent write commits becomes unreadable, so retry. */
async function readHandle(handle: FileSystemFileHandle): Promise<Uint8Array> {
  for (let attempt = 1; ; attempt++) {
    try {
      return new Uint8Array(await (await handle.getFile()).arrayBuffer());
    } catch (e) {
      if (domError(e) !== 'NotReadableError' || attempt === 3) throw e;
    }
  }
}

/** Writes go to a swap file that replaces the file on close, so a failed write is aborted and the old content stays. */
async function writeHandle(handle: FileSystemFileHandle, data: Uint8Array, appendAt?: number) {
  await writeThrough(
    await handle.createWritable({ keepExistingData: appendAt !== undefined }),
    data,
    appendAt,
  );
}

async function writeThrough(stream: FileSystemWritableFileStream, data: Uint8Array, appendAt?: number) {
  try {
    if (appendAt !== undefined) await stream.seek(appendAt);
    await stream.write(data as Uint8Array<ArrayBuffer>);
    await stream.close();
  } catch (e) {
    await stream.abort().catch(() => undefined);
    throw e;
  }
}

/**
 * A stream replacing the file, opened while its content is read and hashed (nothing reaches the
 * file before `close`); null, with the stream aborted, when the content does not hash to `sha256`.
 */
async function openIfUnchanged(
  handle: FileSystemFileHandle,
  sha256: string,
): Promise<FileSystemWritableFileStream | null> {
  const [current, opened] = await Promise.allSettled([
    readHandle(handle).then(sha256Hex),
    handle.createWritable(),
  ]);
  if (opened.status === 'rejected') throw opened.reason;
  if (current.status === 'fulfilled' && current.value === sha256) return opened.value;
  await opened.value.abort().catch(() => undefined);
  if (current.status === 'rejected') throw current.reason;
  return null;
}

/** Writes the file `entry` is (creating it when null); a file created for a write that failed is removed again. */
async function writeNew(
  dir: Dir,
  name: string,
  entry: Entry,
  write: (handle: FileSystemFileHandle) => Promise<void>,
) {
  if (entry?.kind === 'file') return write(entry.handle);
  const handle = await dir.getFileHandle(name, { create: true });
  try {
    await write(handle);
  } catch (e) {
    await dir.removeEntry(name).catch(() => undefined);
    throw e;
  }
}

/** Chromium keeps `<name>.crswap` beside a file while a writable stream on it is open. */
const SWAP_SUFFIX = '.crswap';
const isSwapFile = (name: string, kind: string, siblings: ReadonlyMap<string, string>) =>
  kind === 'file' &&
  name.endsWith(SWAP_SUFFIX) &&
  siblings.get(name.slice(0, -SWAP_SUFFIX.length)) === 'file';

const split = (path: WorkspacePath) => {
  const segments = pathSegments(path);
  return { parent: segments.slice(0, -1), name: segments.at(-1)! };
};

/**
 * Directory handles already walked to, by place on disk (`<key>/<dir>`). A handle names a path,
 * not a node: one kept past a removal throws `NotFoundError` (or `TypeMismatchError` when a file
 * took its place), and every operation started from kept handles is then run again from the root.
 */
class DirectoryHandles {
  readonly #handles = new Map<string, Dir>();

  get(place: string): Dir | undefined {
    return this.#handles.get(place);
  }

  keep(place: string, dir: Dir) {
    if (this.#handles.size >= MAX_KEPT_DIRECTORIES) this.#handles.clear();
    this.#handles.set(place, dir);
  }

  /** Forgets `place` and everything below it. */
  forget(place: string) {
    const below = `${place}/`;
    for (const p of [...this.#handles.keys()])
      if (p === place || p.startsWith(below)) this.#handles.delete(p);
  }

  clear() {
    this.#handles.clear();
  }
}

const MAX_KEPT_DIRECTORIES = 4_096;

type DirAt = (segments: readonly string[], create: boolean) => Promise<Result<Dir, WorkspaceError>>;
/** One run of an operation: `fresh` walks from the root; `usedKept` says a kept handle was used. */
type Attempt = { fresh: boolean; usedKept: boolean };

const isStaleHandle = (e: unknown) => domError(e) === 'NotFoundError' || domError(e) === 'TypeMismatchError';

class OpfsWorkspace implements Workspace {
  constructor(
    readonly key: string,
    private readonly root: Dir,
    private readonly handles: DirectoryHandles,
  ) {}

  /**
   * The directory at `segments`, from the nearest kept handle unless `fresh`. A walk from a kept
   * handle that fails may have started from a stale one: it throws for {@link #withDirs} to retry.
   */
  async #walk(
    segments: readonly string[],
    create: boolean,
    attempt: Attempt,
  ): Promise<Result<Dir, WorkspaceError>> {
    let start = 0;
    let dir = this.root;
    for (let i = attempt.fresh ? 0 : segments.length; i > 0; i--) {
      const kept = this.handles.get(this.#place(segments, i));
      if (kept) {
        [start, dir] = [i, kept];
        attempt.usedKept = true;
        break;
      }
    }
    for (let i = start; i < segments.length; i++) {
      const next = await walk(dir, [segments[i]!], create);
      if (!next.ok) {
        if (start > 0) throw new DOMException('A kept directory handle is stale.', 'NotFoundError');
        const prefix = segments.slice(0, i + 1).join('/');
        return next.error.code === 'workspace.file_not_found' ? fileNotFound(prefix) : isAFile(prefix);
      }
      dir = next.value;
      this.handles.keep(this.#place(segments, i + 1), dir);
    }
    return ok(dir);
  }

  #place = (segments: readonly string[], count: number) =>
    count === 0 ? this.key : `${this.key}/${segments.slice(0, count).join('/')}`;

  /**
   * Runs `fn` with directories from kept handles; when one of them has gone stale (see
   * {@link DirectoryHandles}), forgets them and runs it again walking from the root. `fn` calls
   * `confirmMissing` before reporting a file missing: in a stale directory it may be elsewhere.
   */
  async #withDirs<T>(fn: (dirAt: DirAt, confirmMissing: () => void) => Promise<T>): Promise<T> {
    const attempt: Attempt = { fresh: false, usedKept: false };
    try {
      return await fn(
        (segments, create) => this.#walk(segments, create, attempt),
        () => {
          if (attempt.usedKept) throw new DOMException('Not found from a kept handle.', 'NotFoundError');
        },
      );
    } catch (e) {
      if (!attempt.usedKept || !isStaleHandle(e)) throw e;
      this.handles.clear();
      const fresh: Attempt = { fresh: true, usedKept: false };
      return fn(
        (segments, create) => this.#walk(segments, create, fresh),
        () => {},
      );
    }
  }

  stat(path: WorkspacePath): Promise<Result<FileStat | null, WorkspaceError>> {
    return guarded<FileStat | null>(`stat ${path}`, () =>
      this.#withDirs(async (dirAt) => {
        const { parent, name } = split(path);
        const dir = await dirAt(parent, false);
        if (!dir.ok) return ok(null);
        const entry = await entryIn(dir.value, name);
        if (entry === null) return ok(null);
        if (entry.kind === 'directory') return ok({ kind: 'directory', size: 0 });
        return ok({ kind: 'file', size: (await entry.handle.getFile()).size });
      }),
    );
  }

  read(path: WorkspacePath): Promise<Result<Uint8Array, WorkspaceError>> {
    return guarded(`read ${path}`, () =>
      this.#withDirs(async (dirAt, confirmMissing) => {
        const { parent, name } = split(path);
        const dir = await dirAt(parent, false);
        if (!dir.ok) return dir.error.code === 'workspace.file_not_found' ? fileNotFound(path) : dir;
        const entry = await entryIn(dir.value, name);
        if (entry === null) {
          confirmMissing();
          return fileNotFound(path);
        }
        if (entry.kind === 'directory') return pathIsDirectory(path);
        return ok(await readHandle(entry.handle));
      }),
    );
  }

  write(
    path: WorkspacePath,
    data: Uint8Array,
    guard: WriteGuard = { kind: 'none' },
  ): Promise<Result<{ sha256: string }, WorkspaceError>> {
    return this.#locked(
      path,
      `write ${path}`,
      () =>
        this.#withDirs(async (dirAt, confirmMissing) => {
          const { parent, name } = split(path);
          // A sha256 guard needs an existing file, so it never creates parents.
          const dir = await dirAt(parent, guard.kind !== 'sha256');
          if (!dir.ok) return dir.error.code === 'workspace.file_not_found' ? fileNotFound(path) : dir;
          const entry = await entryIn(dir.value, name);
          if (entry?.kind === 'directory') return pathIsDirectory(path);
          if (guard.kind === 'absent' && entry) return conflict(path, 'already exists');
          const hashed = sha256Hex(data);
          if (guard.kind === 'sha256') {
            if (!entry) {
              confirmMissing();
              return fileNotFound(path);
            }
            const stream = await openIfUnchanged(entry.handle, guard.sha256);
            if (!stream) return conflict(path, 'has changed');
            await writeThrough(stream, data);
          } else {
            await writeNew(dir.value, name, entry, (handle) => writeHandle(handle, data));
          }
          return ok({ sha256: await hashed });
        }),
      `save the file ${path}`,
    );
  }

  append(path: WorkspacePath, data: Uint8Array): Promise<Result<AppendOutcome, WorkspaceError>> {
    return this.#locked(
      path,
      `append to ${path}`,
      () =>
        this.#withDirs(async (dirAt) => {
          const { parent, name } = split(path);
          const dir = await dirAt(parent, true);
          if (!dir.ok) return dir;
          const entry = await entryIn(dir.value, name);
          if (entry?.kind === 'directory') return pathIsDirectory(path);
          const previous = entry ? await readHandle(entry.handle) : new Uint8Array();
          await writeNew(dir.value, name, entry, (handle) => writeHandle(handle, data, previous.byteLength));
          const next = new Uint8Array(previous.byteLength + data.byteLength);
          next.set(previous);
          next.set(data, previous.byteLength);
          return ok({
            sha256: await sha256Hex(next),
            created: entry === null,
            previousSha256: entry ? await sha256Hex(previous) : null,
          });
        }),
      `save the file ${path}`,
    );
  }

  list(dir?: WorkspacePath): Promise<Result<WorkspaceEntry[], WorkspaceError>> {
    return guarded(`list ${dir ?? 'the workspace root'}`, () =>
      this.#withDirs(async (dirAt) => {
        const handle = await dirAt(dir === undefined ? [] : pathSegments(dir), false);
        if (!handle.ok) return handle;
        const children = new Map<string, FileSystemHandle['kind']>();
        for await (const [name, child] of (handle.value as IterableDir).entries())
          children.set(name, child.kind);
        const entries: WorkspaceEntry[] = [];
        for (const [name, kind] of children) {
          if (!isSwapFile(name, kind, children)) entries.push({ path: joinPath(dir ?? null, name), kind });
        }
        return ok(entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
      }),
    );
  }

  remove(path: WorkspacePath): Promise<Result<void, WorkspaceError>> {
    return this.#locked(path, `remove ${path}`, () =>
      this.#withDirs(async (dirAt) => {
        const { parent, name } = split(path);
        const dir = await dirAt(parent, false);
        this.handles.forget(this.#place(pathSegments(path), pathSegments(path).length));
        if (!dir.ok) return ok(undefined);
        try {
          await dir.value.removeEntry(name, { recursive: true });
        } catch (e) {
          if (domError(e) !== 'NotFoundError') throw e;
        }
        return ok(undefined);
      }),
    );
  }

  /** Web Locks serialize modifications of one file across workers and tabs of this origin. */
  #locked<T>(
    path: WorkspacePath,
    what: string,
    fn: () => Promise<Result<T, WorkspaceError>>,
    saving?: string,
  ) {
    return guarded(what, () => navigator.locks.request(`hearth:ws:${this.key}:${path}`, fn), saving);
  }
}

/**
 * Workspaces in the Origin Private File System, under `workspaces/<key>/`. Works in pages and
 * workers (writes go through `createWritable`, not sync access handles, so no worker is needed).
 */
export class OpfsWorkspaceStore implements WorkspaceStore {
  readonly #handles = new DirectoryHandles();

  constructor(private readonly opfsRoot: () => Promise<Dir> = () => navigator.storage.getDirectory()) {}

  open(key: string): Promise<Result<Workspace, WorkspaceError>> {
    return guarded(`open workspace ${key}`, async () => {
      const segments = workspaceKeySegments(key);
      if (!segments.ok) return segments;
      const dir = await walk(await this.opfsRoot(), [BASE, ...segments.value], true);
      if (!dir.ok) return storageFailed(`Cannot open workspace \`${key}\`: ${dir.error.message}`);
      return ok(new OpfsWorkspace(segments.value.join('/'), dir.value, this.#handles));
    });
  }

  delete(key: string): Promise<Result<void, WorkspaceError>> {
    return guarded(`delete workspace ${key}`, async () => {
      const segments = workspaceKeySegments(key);
      if (!segments.ok) return segments;
      this.#handles.forget(segments.value.join('/'));
      const parent = await walk(await this.opfsRoot(), [BASE, ...segments.value.slice(0, -1)], false);
      if (!parent.ok) return ok(undefined);
      try {
        await parent.value.removeEntry(segments.value.at(-1)!, { recursive: true });
      } catch (e) {
        if (domError(e) !== 'NotFoundError') throw e;
      }
      return ok(undefined);
    });
  }
}
