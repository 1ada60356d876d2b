import { HearthFailure, hearthError, type HearthError } from '$lib/domain/errors';
import { err, ok, type Result } from '$lib/domain/result';
import { workspaceDirs, type ShellMounts } from '$lib/domain/shell-mounts';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { SandboxFile } from '$lib/ports/sandbox';
import type { Workspace } from '$lib/ports/workspace';
import { rootEntries, walk } from '../workspace/tree';

/** A call copies the visible workspace into the sandbox; these keep that copy bounded. */
export const MAX_COPY_BYTES = 64 * 1024 * 1024;
export const MAX_COPY_FILES = 10_000;
/** Reads in flight at once: each costs a few storage round trips, so they overlap well. */
const PARALLEL_READS = 32;

const tooLarge = (what: string) =>
  err(
    hearthError(
      'workspace.shell_failed',
      `The shell did not start: the visible workspace holds more than ${what}, and each shell call works on a copy of it. Remove large files you no longer need (find them with \`workspace_list_files\`), then retry.`,
    ),
  );

/** Every file under the shell's workspace directories, read for one call. */
export async function loadWorkspaceCopy(
  workspace: Workspace,
  roots: WorkspaceRoots,
  mounts: ShellMounts,
): Promise<Result<SandboxFile[], HearthError>> {
  const paths: WorkspacePath[] = [];
  for await (const entry of walk(
    workspace,
    roots,
    await rootEntries(workspace, workspaceDirs(mounts)),
    Infinity,
  )) {
    if (entry.kind !== 'file') continue;
    if (paths.length >= MAX_COPY_FILES) return tooLarge(`${MAX_COPY_FILES} files`);
    paths.push(entry.path);
  }

  const files: (SandboxFile | null)[] = new Array(paths.length).fill(null);
  let bytes = 0;
  let next = 0;
  let overflow = false;
  const reader = async () => {
    while (next < paths.length && !overflow) {
      const i = next++;
      const read = await workspace.read(paths[i]!);
      if (!read.ok) {
        if (read.error.code === 'workspace.file_not_found') continue; // removed while listing
        throw new HearthFailure(read.error);
      }
      bytes += read.value.byteLength;
      overflow ||= bytes > MAX_COPY_BYTES;
      files[i] = { path: paths[i]!, bytes: read.value };
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, paths.length) }, reader));
  if (overflow) return tooLarge(`${MAX_COPY_BYTES / 1024 / 1024} MB`);
  return ok(files.filter((f) => f !== null));
}
