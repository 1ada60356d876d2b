import type { WorkspaceError } from '$lib/ports/workspace';
import { err } from '$lib/domain/result';
import { quotaExceeded } from '$lib/domain/storage-quota';

/** The error values both workspace adapters return, so their messages match. */
export const fileNotFound = (path: string) =>
  err<WorkspaceError>({ code: 'workspace.file_not_found', message: `No file at \`${path}\`.` });

export const pathIsDirectory = (path: string) =>
  err<WorkspaceError>({ code: 'workspace.path_is_directory', message: `\`${path}\` is a directory.` });

export const isAFile = (path: string) =>
  err<WorkspaceError>({
    code: 'workspace.not_a_directory',
    message: `\`${path}\` is a file, not a directory.`,
  });

export const conflict = (path: string, why: string) =>
  err<WorkspaceError>({ code: 'workspace.conflict', message: `\`${path}\` ${why}.` });

export const storageFailed = (message: string) =>
  err<WorkspaceError>({ code: 'workspace.storage_failed', message });

/** A write that did not fit in the browser's storage; `what` as `quotaExceeded` takes it. */
export const quotaFull = (what: string) =>
  err<WorkspaceError>({ ...quotaExceeded(what), code: 'storage.quota_exceeded' });
