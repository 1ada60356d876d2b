import { z } from 'zod';
import { HearthFailure } from '$lib/domain/errors';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { WorkspaceEntry } from '$lib/ports/workspace';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { nonNegativeInt, optionalNullableString } from './params';
import { visibleRoots } from './paths';
import { children, resolveScope, rootEntries, walk } from './tree';

export const DEFAULT_LIST_DEPTH = 2;
export const MAX_LIST_DEPTH = 4;
export const MAX_LIST_ENTRIES = 200;

const NAME = 'workspace.list_files';

const parameters = z.strictObject({
  path: optionalNullableString('path').describe(
    'Directory to list, e.g. `work/notes`. Omit it (or pass `.`) to list the whole visible workspace.',
  ),
  depth: nonNegativeInt('depth')
    .optional()
    .describe(
      `How many directory levels to expand below \`path\`: 0 lists only its direct children. Default ${DEFAULT_LIST_DEPTH}, at most ${MAX_LIST_DEPTH}.`,
    ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `List the files and directories of the workspace that you can see.
Each line of the result is one path relative to the workspace; directories end with \`/\`. Directories come first, then files, each sorted by path.
Without \`path\` this tool lists the visible workspace roots and what they contain. \`depth\` says how many directory levels to expand (0 = only the direct children of \`path\`; default ${DEFAULT_LIST_DEPTH}, at most ${MAX_LIST_DEPTH}). At most ${MAX_LIST_ENTRIES} entries are returned; when the listing says it was truncated, list a subdirectory or use a smaller \`depth\`.
Read a file with \`workspace_read_file\`; find text across files with \`workspace_search_files\`.`;

export const listFilesTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: listFiles,
});

async function listFiles(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const depth = input.depth ?? DEFAULT_LIST_DEPTH;
  if (depth > MAX_LIST_DEPTH) {
    return failure(
      'workspace.list_depth_too_large',
      `depth must be at most ${MAX_LIST_DEPTH}. To see deeper levels, list a subdirectory.`,
    );
  }
  const scope = resolveScope(ctx.roots, input.path);
  if (!scope.ok) return failure(scope.error.code, scope.error.message);

  let first: WorkspaceEntry[];
  if (scope.value.kind === 'root') {
    first = await rootEntries(ctx.workspace, visibleRoots(ctx.roots));
  } else {
    const below = await entriesBelow(ctx, scope.value.path);
    if (below === null) {
      return failure(
        'workspace.path_not_found',
        `Nothing exists at \`${scope.value.path}\`. Call this tool on its parent directory to see what exists.`,
      );
    }
    first = below;
  }

  // Only visible entries are walked, so hidden runtime storage never counts toward the cap.
  const entries: WorkspaceEntry[] = [];
  let truncated = false;
  for await (const entry of walk(ctx.workspace, ctx.roots, first, depth)) {
    if (entries.length === MAX_LIST_ENTRIES) {
      truncated = true;
      break;
    }
    entries.push({ path: entry.path, kind: entry.kind });
  }
  entries.sort(directoriesFirst);

  const lines = entries.map((e) => (e.kind === 'directory' ? `${e.path}/` : e.path));
  if (truncated) lines.push(`... truncated at ${MAX_LIST_ENTRIES} entries`);
  return success(entries.length === 0 ? 'No visible workspace files found.' : lines.join('\n'), {
    structured: { entries: entries.map((e) => ({ path: e.path, kind: e.kind })), truncated },
    resourceRefs: entries.map((e) => e.path),
  });
}

/**
 * The entries that start a listing of `path`: its children for a directory, the file itself for
 * a file, nothing for a visible root not created yet, `null` when nothing is there.
 */
async function entriesBelow(ctx: ToolContext, path: WorkspacePath): Promise<WorkspaceEntry[] | null> {
  const stat = await ctx.workspace.stat(path);
  if (!stat.ok) throw new HearthFailure(stat.error);
  if (stat.value?.kind === 'file') return [{ path, kind: 'file' }];
  if (stat.value === null) return path.includes('/') ? null : [];
  return (await children(ctx.workspace, path)) ?? [];
}

function directoriesFirst(a: WorkspaceEntry, b: WorkspaceEntry): number {
  if (a.kind !== b.kind) return a.kind === 'directory' ? -1 : 1;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}
