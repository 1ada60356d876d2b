type Dir = FileSystemDirectoryHandle;
/** lib.dom has no async iteration for directory handles yet; Chromium has it. */
type IterableDir = Dir & { entries(): AsyncIterableIterator<[string, FileSystemHandle]> };

/** A file below a root directory: its path and handle. */
export interface TreeFile {
  path: string;
  handle: FileSystemFileHandle;
}

const isNotFound = (e: unknown) => e instanceof DOMException && e.name === 'NotFoundError';

/** Every file below `dir`, depth first, sorted by name at each level (paths relative to `dir`). */
export async function listTree(dir: Dir, prefix = ''): Promise<TreeFile[]> {
  const out: TreeFile[] = [];
  const entries: [string, FileSystemHandle][] = [];
  for await (const entry of (dir as IterableDir).entries()) entries.push(entry);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, handle] of entries) {
    const path = prefix ? `${prefix}/${name}` : name;
    if (handle.kind === 'file') out.push({ path, handle: handle as FileSystemFileHandle });
    else out.push(...(await listTree(handle as Dir, path)));
  }
  return out;
}

/** The directory at `segments` below `root`; null when it is missing and `create` is not set. */
export async function directoryAt(
  root: Dir,
  segments: readonly string[],
  create: boolean,
): Promise<Dir | null> {
  let dir = root;
  for (const s of segments) {
    try {
      dir = await dir.getDirectoryHandle(s, { create });
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }
  return dir;
}

/** Removes `name` below `dir` (a file or a whole tree); a missing one is fine. */
export async function removeEntry(dir: Dir, name: string): Promise<void> {
  try {
    await dir.removeEntry(name, { recursive: true });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Removes the entry at `segments` below `root`; a missing one is fine. */
export async function removePath(root: Dir, segments: readonly string[]): Promise<void> {
  const parent = await directoryAt(root, segments.slice(0, -1), false);
  if (parent) await removeEntry(parent, segments.at(-1)!);
}

/** A stream's chunks, read one at a time. */
export async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** Writes chunks to the file at `segments` below `root` (parents created); aborted on failure. */
export async function writeChunks(root: Dir, segments: readonly string[], data: AsyncIterable<Uint8Array>) {
  const dir = (await directoryAt(root, segments.slice(0, -1), true))!;
  const handle = await dir.getFileHandle(segments.at(-1)!, { create: true });
  const writable = await handle.createWritable();
  try {
    for await (const chunk of data) await writable.write(chunk as Uint8Array<ArrayBuffer>);
    await writable.close();
  } catch (e) {
    await writable.abort().catch(() => {});
    throw e;
  }
}

/**
 * Moves the tree `from` (below `fromRoot`) to `to` (below `toRoot`), replacing what is there. A
 * whole directory is moved in one step where the browser can (`move`), else file by file.
 */
export async function moveTree(fromRoot: Dir, from: readonly string[], toRoot: Dir, to: readonly string[]) {
  const source = await directoryAt(fromRoot, from, false);
  if (!source) return;
  await removePath(toRoot, to);
  const parent = (await directoryAt(toRoot, to.slice(0, -1), true))!;
  const movable = source as Dir & { move?: (dest: Dir, name: string) => Promise<void> };
  if (typeof movable.move === 'function') {
    try {
      await movable.move(parent, to.at(-1)!);
      return;
    } catch {
      // Older engines move files only: fall back to copying.
    }
  }
  for (const file of await listTree(source)) {
    const data = chunksOf((await file.handle.getFile()).stream());
    await writeChunks(toRoot, [...to, ...file.path.split('/')], data);
  }
  await removePath(fromRoot, from);
}
