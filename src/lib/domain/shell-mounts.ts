import type { WorkspacePath } from './workspace-path';
import type { WorkspaceRoots } from './workspace-roots';

/**
 * The filesystem a shell call sees (tools.md §13.12): `/` is the workspace, each visible root a
 * top-level directory (`/output/main.md` is `output/main.md`). Writable roots are synced back to
 * the workspace; read-only mounts and visible-but-not-writable roots refuse writes; `/tmp` is a
 * scratch directory that lives only for the call unless it is a workspace root (Sessions);
 * `/bin`, `/usr`, `/dev`, `/proc` belong to the shell itself. Everything else does not exist.
 */
export interface ShellMounts {
  writable: readonly string[];
  readOnly: readonly string[];
  scratch: readonly string[];
}

export type ShellAccess = 'root' | 'writable' | 'read-only' | 'scratch' | 'system' | 'absent';

const SYSTEM_DIRS = ['bin', 'usr', 'dev', 'proc'];
const SCRATCH_DIR = 'tmp';

export function shellMounts(roots: WorkspaceRoots): ShellMounts {
  const writable = roots.writable.filter((r) => !roots.readOnly.includes(r));
  const visible = [...new Set([...roots.visible, ...roots.readOnly])];
  return {
    writable,
    readOnly: visible.filter((r) => !writable.includes(r)),
    scratch: visible.includes(SCRATCH_DIR) ? [] : [SCRATCH_DIR],
  };
}

/** Top-level directories of the shell's filesystem that hold workspace files. */
export const workspaceDirs = (m: ShellMounts): string[] => [...m.writable, ...m.readOnly];

/** Splits a normalized absolute shell path (`/work/a.txt`) into its segments. */
const segmentsOf = (absPath: string): string[] => absPath.split('/').filter((s) => s !== '');

export function shellAccess(m: ShellMounts, absPath: string): ShellAccess {
  const [top] = segmentsOf(absPath);
  if (top === undefined) return 'root';
  if (m.writable.includes(top)) return 'writable';
  if (m.readOnly.includes(top)) return 'read-only';
  if (m.scratch.includes(top)) return 'scratch';
  if (SYSTEM_DIRS.includes(top)) return 'system';
  return 'absent';
}

/** Whether a program may create, change or remove this path (a mount point itself never). */
export const shellMayChange = (m: ShellMounts, absPath: string): boolean => {
  const access = shellAccess(m, absPath);
  if (access === 'scratch' || access === 'system') return true;
  return access === 'writable' && segmentsOf(absPath).length > 1;
};

/** `/output/main.md` -> `output/main.md`; null for `/` and paths outside the workspace dirs. */
export function shellToWorkspacePath(m: ShellMounts, absPath: string): WorkspacePath | null {
  const segments = segmentsOf(absPath);
  if (segments.length === 0 || !workspaceDirs(m).includes(segments[0]!)) return null;
  return segments.join('/') as WorkspacePath;
}

export const workspaceToShellPath = (p: WorkspacePath): string => `/${p}`;

/** A message naming where writes go, for shell errors. */
export const writableHint = (m: ShellMounts): string => {
  // Names without a leading slash: just-bash masks absolute system paths such as /tmp in errors.
  const dirs = [...m.writable, ...m.scratch];
  return dirs.length > 0 ? `writable directories: ${dirs.join(', ')}` : 'nothing is writable here';
};

/** An absolute, normalized shell path: relative paths start at `/`, `..` stops at the root. */
export function normalizeShellPath(raw: string): string {
  const out: string[] = [];
  for (const segment of raw.trim().split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}
