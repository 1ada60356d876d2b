import { HearthFailure, hearthError, type HearthError } from '$lib/domain/errors';
import { err, ok, type Result } from '$lib/domain/result';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { isVisible, renderRoots, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { Workspace, WorkspaceEntry } from '$lib/ports/workspace';
import { visibleRoots } from './paths';

/**
 * Where a listing or search starts: the whole visible workspace, or one visible path.
 * `null`, `""`, `"."` and `"./"` (after trimming) mean the workspace root (tools.md §13.4).
 */
export type Scope = { kind: 'root' } | { kind: 'path'; path: WorkspacePath };

const ROOT_ALIASES = new Set(['', '.', './']);

export function resolveScope(
  roots: WorkspaceRoots,
  raw: string | null | undefined,
): Result<Scope, HearthError> {
  const trimmed = (raw ?? '').trim();
  if (ROOT_ALIASES.has(trimmed)) return ok({ kind: 'root' });
  const path = parseWorkspacePath(trimmed);
  // List and search report an unparseable path as an argument error (tools.md §13.4, §13.5).
  if (!path.ok) return err(hearthError('tool.invalid_arguments', path.error.message));
  if (!isVisible(roots, path.value)) {
    return err(
      hearthError(
        'workspace.path_not_visible',
        `\`${path.value}\` is outside the visible workspace. Visible roots: ${renderRoots(visibleRoots(roots))}.`,
      ),
    );
  }
  return ok({ kind: 'path', path: path.value });
}

export interface TreeEntry extends WorkspaceEntry {
  /** 0 for the first entries given to `walk`; their children are at level 1, and so on. */
  level: number;
}

/**
 * The visible roots as entries. A root is a directory even before anything was written in it
 * (the runtime owns the roots), unless a file of that name is there.
 */
export async function rootEntries(ws: Workspace, names: readonly string[]): Promise<WorkspaceEntry[]> {
  const entries: WorkspaceEntry[] = [];
  for (const name of [...names].sort()) {
    const path = name as WorkspacePath;
    const stat = await ws.stat(path);
    if (!stat.ok) throw new HearthFailure(stat.error);
    entries.push({ path, kind: stat.value?.kind ?? 'directory' });
  }
  return entries;
}

/** The directory's children, or `null` when it is missing (or vanished); storage failures throw. */
export async function children(ws: Workspace, dir: WorkspacePath): Promise<WorkspaceEntry[] | null> {
  const listed = await ws.list(dir);
  if (listed.ok) return listed.value;
  if (listed.error.code === 'workspace.file_not_found' || listed.error.code === 'workspace.not_a_directory')
    return null;
  throw new HearthFailure(listed.error);
}

/**
 * Depth-first walk: yields `first` (level 0), then each directory's children (sorted by path)
 * together, expanding directories below `maxLevel`; child directories are pushed on the stack in
 * reverse order, so they are expanded in sorted order. Lazy: stop iterating to stop listing.
 * Only visible paths are yielded (every path below a visible root is visible).
 */
export async function* walk(
  ws: Workspace,
  roots: WorkspaceRoots,
  first: readonly WorkspaceEntry[],
  maxLevel: number,
): AsyncGenerator<TreeEntry> {
  const stack: TreeEntry[] = [];
  const emit = function* (entries: readonly WorkspaceEntry[], level: number) {
    const dirs: TreeEntry[] = [];
    for (const entry of entries) {
      if (!isVisible(roots, entry.path)) continue;
      const item = { path: entry.path, kind: entry.kind, level };
      yield item;
      if (entry.kind === 'directory' && level < maxLevel) dirs.push(item);
    }
    for (let i = dirs.length - 1; i >= 0; i--) stack.push(dirs[i]!);
  };
  yield* emit(first, 0);
  for (let dir = stack.pop(); dir !== undefined; dir = stack.pop()) {
    const entries = await children(ws, dir.path);
    if (entries) yield* emit(entries, dir.level + 1);
  }
}
