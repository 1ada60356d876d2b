import type { HearthError } from '$lib/domain/errors';
import type { Result } from '$lib/domain/result';
import type { WorkspacePath } from '$lib/domain/workspace-path';

export interface WorkspaceEntry {
  path: WorkspacePath;
  kind: 'file' | 'directory';
}

export interface FileStat {
  kind: 'file' | 'directory';
  /** Bytes for files, 0 for directories. */
  size: number;
}

/**
 * A precondition checked under the file's lock, together with the write it guards:
 * `absent` = the file must not exist; `sha256` = the file must exist with exactly this content.
 */
export type WriteGuard = { kind: 'none' } | { kind: 'absent' } | { kind: 'sha256'; sha256: string };

/**
 * Codes an adapter returns. `workspace.conflict` = the guard did not hold; tools map it to the
 * model-facing code of their contract. `workspace.storage_failed` is a system failure, and so is
 * `storage.quota_exceeded` (the browser's storage for this origin is full).
 */
export type WorkspaceError = HearthError & {
  code:
    | 'workspace.file_not_found'
    | 'workspace.path_is_directory'
    | 'workspace.not_a_directory'
    | 'workspace.conflict'
    | 'workspace.storage_failed'
    | 'storage.quota_exceeded';
};

export interface AppendOutcome {
  sha256: string;
  created: boolean;
  /** The content hash before the append; null when the file was created. */
  previousSha256: string | null;
}

/**
 * A workspace: a tree of files addressed by logical paths (already parsed, so they cannot
 * escape). Reads may run in parallel; modifications of one file are serialized (across
 * workers and tabs for OPFS), and a guard is checked and the write done under one lock.
 * Writes create missing parent directories. No method throws: failures are values.
 */
export interface Workspace {
  /** The store key it was opened with, normalized (`sessions/<sessionId>`). */
  readonly key: string;
  stat(path: WorkspacePath): Promise<Result<FileStat | null, WorkspaceError>>;
  read(path: WorkspacePath): Promise<Result<Uint8Array, WorkspaceError>>;
  write(
    path: WorkspacePath,
    data: Uint8Array,
    guard?: WriteGuard,
  ): Promise<Result<{ sha256: string }, WorkspaceError>>;
  append(path: WorkspacePath, data: Uint8Array): Promise<Result<AppendOutcome, WorkspaceError>>;
  /** Immediate children of a directory (the workspace root when `dir` is omitted), sorted by path. */
  list(dir?: WorkspacePath): Promise<Result<WorkspaceEntry[], WorkspaceError>>;
  /** Removes a file or a directory tree; removing a missing path succeeds. */
  remove(path: WorkspacePath): Promise<Result<void, WorkspaceError>>;
  /**
   * Reads the files under `dirs` ahead of use, where the workspace keeps what it reads in
   * memory: a run calls it as it starts, so its tools' first reads are served from memory.
   * Never fails; resolves when it has read what fits.
   */
  prefetch?(dirs: readonly WorkspacePath[]): Promise<void>;
}

/** Opens workspaces by key (`sessions/<sessionId>`, `chats/<workspaceId>`). */
export interface WorkspaceStore {
  open(key: string): Promise<Result<Workspace, WorkspaceError>>;
  delete(key: string): Promise<Result<void, WorkspaceError>>;
  /** Files under `key` changed behind the store (a restored backup moved them in): forget them. */
  changedOutside?(key: string): void;
}
