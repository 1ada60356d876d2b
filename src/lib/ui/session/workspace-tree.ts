import type { WorkspaceItem } from '$lib/worker/protocol';

/** One row of the file panel's tree: an item at its depth (the tree flattened, open folders expanded). */
export interface TreeRow {
  item: WorkspaceItem;
  depth: number;
}

/**
 * The rows the panel shows: the listed items of `dir`, each open folder followed by its own,
 * depth first, in listing order. Flat, so a folder of 20,000 files is one virtual list.
 */
export function treeRows(
  tree: Readonly<Record<string, readonly WorkspaceItem[]>>,
  open: Readonly<Record<string, boolean>>,
  dir = '',
  depth = 0,
  out: TreeRow[] = [],
): TreeRow[] {
  for (const item of tree[dir] ?? []) {
    out.push({ item, depth });
    if (item.kind === 'directory' && open[item.path]) treeRows(tree, open, item.path, depth + 1, out);
  }
  return out;
}
