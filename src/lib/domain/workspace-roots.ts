import type { WorkspacePath } from './workspace-path';

/**
 * Which parts of a workspace the model may see and change (tools.md §12.2). Roots are single
 * path segments. Read-only mounts (`tool-results`, `skills`) are visible but never writable.
 * Everything outside the visible roots (runtime storage) is hidden from model tools.
 */
export interface WorkspaceRoots {
  visible: readonly string[];
  writable: readonly string[];
  readOnly: readonly string[];
}

export const CHAT_ROOTS = ['output', 'scratch', 'plan', 'summaries', 'persist'] as const;
export const SESSION_ROOTS = ['work', 'tmp'] as const;
export const READ_ONLY_MOUNTS = ['tool-results', 'skills'] as const;

export const sessionRoots = (): WorkspaceRoots => ({
  visible: [...SESSION_ROOTS],
  writable: [...SESSION_ROOTS],
  readOnly: [...READ_ONLY_MOUNTS],
});

/** The roots a profile's `workspace` settings name, with the read-only mounts. */
export const profileRoots = (workspace: {
  visibleRoots: readonly string[];
  writableRoots: readonly string[];
}): WorkspaceRoots => ({
  visible: workspace.visibleRoots,
  writable: workspace.writableRoots,
  readOnly: [...READ_ONLY_MOUNTS],
});

const rootOf = (p: WorkspacePath): string => p.split('/', 1)[0]!;

/** The path is a visible root or lies under one (with a `/` boundary). */
export const isVisible = (roots: WorkspaceRoots, p: WorkspacePath): boolean => {
  const root = rootOf(p);
  return roots.visible.includes(root) || roots.readOnly.includes(root);
};

/** The path lies strictly under a writable root; the root itself is not writable. */
export const isWritable = (roots: WorkspaceRoots, p: WorkspacePath): boolean =>
  p.includes('/') && roots.writable.includes(rootOf(p)) && !roots.readOnly.includes(rootOf(p));

/** Roots rendered for model-facing text: `work/, tmp/`. */
export const renderRoots = (roots: readonly string[]): string => roots.map((r) => `${r}/`).join(', ');

/**
 * Roots the runtime writes its records to: a Session's `runs/`, a Chat run's `run/`, and the
 * `tool-results/` mount. They are stored beside the run journal (IndexedDB), so a step's events
 * and the records they point at are written in one transaction; every other path is a file.
 */
export const RECORD_ROOTS = ['runs', 'run', 'tool-results'] as const;

export const isRecordPath = (p: string): boolean =>
  (RECORD_ROOTS as readonly string[]).includes(p.split('/', 1)[0]!);
