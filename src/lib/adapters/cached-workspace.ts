import { ok, type Result } from '$lib/domain/result';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type {
  AppendOutcome,
  FileStat,
  Workspace,
  WorkspaceEntry,
  WorkspaceError,
  WorkspaceStore,
  WriteGuard,
} from '$lib/ports/workspace';

/** What another tab changed: one file, or a whole tree (a removed folder or workspace). */
export interface WorkspaceWrite {
  path: string;
  tree: boolean;
}

/** Tells the other tabs' caches what this one wrote, and hears what they wrote. */
export interface WorkspaceWrites {
  publish(write: WorkspaceWrite): void;
  subscribe(listener: (write: WorkspaceWrite) => void): void;
}

/** Writes announced over a BroadcastChannel (which never delivers to its sender). */
export function broadcastWorkspaceWrites(name = 'hearth-workspace-writes'): WorkspaceWrites {
  const channel = new BroadcastChannel(name);
  return {
    publish: (write) => channel.postMessage(write),
    subscribe: (listener) =>
      channel.addEventListener('message', (e: MessageEvent<WorkspaceWrite>) => listener(e.data)),
  };
}

const DEFAULT_BUDGET_BYTES = 64 * 1024 * 1024;
/** A prefetch reads at most this many files, and stops once it has read half the budget. */
const PREFETCH_FILES = 4_000;
/** Fewer reads in flight than a search keeps: a run's own first tool calls share the storage. */
const PREFETCH_READS = 8;

/**
 * Files and listings a tab has read, kept in memory by their place on disk (`<key>/<path>`, so
 * nested workspaces such as `chats/<id>` and `chats/<id>/runs/<run>` share entries), least
 * recently used out past the budget. Every write of this tab goes through the store and updates
 * it; other tabs' writes arrive as invalidations.
 */
class WorkspaceCache {
  readonly #files = new Map<string, Uint8Array>();
  /** Places being prefetched: a second run starting on them reads nothing twice. */
  readonly prefetching = new Set<string>();
  readonly #lists = new Map<string, WorkspaceEntry[]>();
  #bytes = 0;
  /**
   * Counts changes: a read that began before one may hold what was there before it, so it is
   * kept only if nothing changed while it ran.
   */
  epoch = 0;

  constructor(readonly budget: number) {}

  file(place: string): Uint8Array | undefined {
    const bytes = this.#files.get(place);
    if (bytes) {
      this.#files.delete(place);
      this.#files.set(place, bytes);
    }
    return bytes;
  }

  keepFile(place: string, bytes: Uint8Array) {
    this.dropFile(place);
    if (bytes.length > this.budget / 4) return;
    this.#files.set(place, bytes);
    this.#bytes += bytes.length;
    for (const [old, b] of this.#files) {
      if (this.#bytes <= this.budget) break;
      this.#files.delete(old);
      this.#bytes -= b.length;
    }
  }

  dropFile(place: string) {
    const old = this.#files.get(place);
    if (old) {
      this.#files.delete(place);
      this.#bytes -= old.length;
    }
  }

  list(dir: string): WorkspaceEntry[] | undefined {
    return this.#lists.get(dir);
  }

  keepList(dir: string, entries: WorkspaceEntry[]) {
    this.#lists.set(dir, entries);
  }

  /** A file at `place` changed: it and the listings of every folder above it. */
  changed(place: string) {
    this.epoch++;
    this.dropFile(place);
    for (let at = place.lastIndexOf('/'); at > 0; at = place.lastIndexOf('/', at - 1))
      this.#lists.delete(place.slice(0, at));
  }

  /** Everything at and below `place` changed (a folder or workspace removed). */
  changedTree(place: string) {
    this.changed(place);
    const below = `${place}/`;
    for (const p of [...this.#files.keys()]) if (p.startsWith(below)) this.dropFile(p);
    for (const d of [...this.#lists.keys()]) if (d === place || d.startsWith(below)) this.#lists.delete(d);
  }
}

const copy = (bytes: Uint8Array) => bytes.slice();

class CachedWorkspace implements Workspace {
  constructor(
    private readonly inner: Workspace,
    private readonly cache: WorkspaceCache,
    private readonly writes: WorkspaceWrites,
  ) {}

  get key() {
    return this.inner.key;
  }

  #place = (path?: WorkspacePath) => (path ? `${this.inner.key}/${path}` : this.inner.key);

  #wrote(path: WorkspacePath, tree = false) {
    const place = this.#place(path);
    if (tree) this.cache.changedTree(place);
    else this.cache.changed(place);
    this.writes.publish({ path: place, tree });
  }

  async stat(path: WorkspacePath): Promise<Result<FileStat | null, WorkspaceError>> {
    const bytes = this.cache.file(this.#place(path));
    return bytes ? ok({ kind: 'file', size: bytes.length }) : this.inner.stat(path);
  }

  async read(path: WorkspacePath): Promise<Result<Uint8Array, WorkspaceError>> {
    const place = this.#place(path);
    const cached = this.cache.file(place);
    if (cached) return ok(copy(cached));
    const epoch = this.cache.epoch;
    const read = await this.inner.read(path);
    if (read.ok && this.cache.epoch === epoch) this.cache.keepFile(place, copy(read.value));
    return read;
  }

  async write(path: WorkspacePath, data: Uint8Array, guard?: WriteGuard) {
    const written = await this.inner.write(path, data, guard);
    this.#wrote(path);
    return written;
  }

  async append(path: WorkspacePath, data: Uint8Array): Promise<Result<AppendOutcome, WorkspaceError>> {
    const appended = await this.inner.append(path, data);
    this.#wrote(path);
    return appended;
  }

  async list(dir?: WorkspacePath): Promise<Result<WorkspaceEntry[], WorkspaceError>> {
    const place = this.#place(dir);
    const cached = this.cache.list(place);
    if (cached) return ok([...cached]);
    const epoch = this.cache.epoch;
    const listed = await this.inner.list(dir);
    if (listed.ok && this.cache.epoch === epoch) this.cache.keepList(place, [...listed.value]);
    return listed;
  }

  async remove(path: WorkspacePath): Promise<Result<void, WorkspaceError>> {
    const removed = await this.inner.remove(path);
    this.#wrote(path, true);
    return removed;
  }

  async prefetch(dirs: readonly WorkspacePath[]): Promise<void> {
    const place = this.#place();
    if (this.cache.prefetching.has(place)) return;
    this.cache.prefetching.add(place);
    try {
      const pending: WorkspacePath[] = [...dirs];
      const files: WorkspacePath[] = [];
      while (pending.length && files.length < PREFETCH_FILES) {
        const listed = await this.list(pending.shift());
        if (!listed.ok) continue;
        for (const entry of listed.value) (entry.kind === 'file' ? files : pending).push(entry.path);
      }
      let bytes = 0;
      let next = 0;
      const reader = async () => {
        while (next < Math.min(files.length, PREFETCH_FILES) && bytes < this.cache.budget / 2) {
          const read = await this.read(files[next++]!);
          if (read.ok) bytes += read.value.byteLength;
        }
      };
      await Promise.all(Array.from({ length: PREFETCH_READS }, reader));
    } finally {
      this.cache.prefetching.delete(place);
    }
  }
}

/**
 * A workspace store that keeps what it read in memory (bounded), so repeated searches, reads and
 * the shell's copies of unchanged files cost no storage access. It stays coherent because every
 * write of this tab goes through it and every other tab's write is announced (`writes`); a
 * change made behind every store's back (a restored backup moving folders in) must be announced
 * with {@link CachedWorkspaceStore.changedOutside}.
 */
export class CachedWorkspaceStore implements WorkspaceStore {
  readonly #cache: WorkspaceCache;

  constructor(
    private readonly inner: WorkspaceStore,
    private readonly writes: WorkspaceWrites,
    budgetBytes = DEFAULT_BUDGET_BYTES,
  ) {
    this.#cache = new WorkspaceCache(budgetBytes);
    writes.subscribe((w) => (w.tree ? this.#cache.changedTree(w.path) : this.#cache.changed(w.path)));
  }

  async open(key: string): Promise<Result<Workspace, WorkspaceError>> {
    const opened = await this.inner.open(key);
    return opened.ok ? ok(new CachedWorkspace(opened.value, this.#cache, this.writes)) : opened;
  }

  async delete(key: string): Promise<Result<void, WorkspaceError>> {
    const deleted = await this.inner.delete(key);
    this.changedOutside(key);
    return deleted;
  }

  /** Everything under workspace key `place` changed without this store (here and in other tabs). */
  changedOutside(place: string): void {
    this.#cache.changedTree(place);
    this.writes.publish({ path: place, tree: true });
  }
}
