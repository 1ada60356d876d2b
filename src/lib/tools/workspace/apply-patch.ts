import { z } from 'zod';
import { HearthFailure, type ErrorCode } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { textMetrics } from '$lib/domain/text-metrics';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { requiredString } from './params';
import { decodeUtf8, resolveWritablePath } from './paths';

const NAME = 'workspace.apply_patch';

const parameters = z.strictObject({
  path: requiredString('path').describe(
    'Path of the file to change, under a writable root, e.g. `work/notes.md`.',
  ),
  old_string: requiredString('old_string').describe(
    'The exact text to replace, copied from what you read, without the line numbers and ` | ` of `workspace_read_file` output. Must not be empty.',
  ),
  new_string: requiredString('new_string').describe(
    'The text to put in its place, used exactly as given; empty deletes `old_string`.',
  ),
  replace_all: z
    .boolean({ error: 'replace_all must be a boolean' })
    .optional()
    .describe(
      'Replace every occurrence of `old_string` instead of exactly one. Needs a full read of the file. Default false.',
    ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `Change a text file in the workspace by replacing an exact piece of its text.
\`old_string\` must be text you have read in this conversation with \`workspace_read_file\` (or a file you wrote whole with \`workspace_write_file\`), copied exactly, including whitespace and line breaks, and without the line numbers and \` | \` that \`workspace_read_file\` shows before each line. It must occur exactly once in the file; if it occurs more often, include more surrounding text so it is unique, or set \`replace_all\` to replace every occurrence (this needs a read of the whole file).
If the file changed since you read it this tool refuses, and after a failed patch of a file you read only in part, you must read the whole file before patching it again.
The result states the size of the file after the change, not its text; read the file to see it. To create a file or rewrite it whole, use \`workspace_write_file\`.`;

export const applyPatchTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: applyPatch,
});

const FULL_READ =
  'Read the whole file with `workspace_read_file` (without start_line, line_count, start_char or max_chars) before patching it again.';

async function applyPatch(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const { old_string: oldString, new_string: newString } = input;
  const replaceAll = input.replace_all === true;
  if (oldString === '') {
    return failure(
      'workspace.patch_empty_old_string',
      'old_string must not be empty: it names the text to replace. To create a file or rewrite it whole, use `workspace_write_file`.',
    );
  }
  if (oldString === newString) {
    return failure(
      'workspace.patch_no_change',
      'old_string and new_string are identical, so this patch would change nothing. Put the new text in new_string.',
    );
  }
  const resolved = resolveWritablePath(ctx.roots, input.path);
  if (!resolved.ok) return failure(resolved.error.code, resolved.error.message);
  const path = resolved.value;

  const state = ctx.readState.get(path);
  if (!state) {
    return failure(
      'workspace.patch_requires_read',
      `Read \`${path}\` with \`workspace_read_file\` before patching it: old_string must be copied from text you have read.`,
    );
  }
  if (state.patchRequiresFullRead) {
    return failure(
      'workspace.patch_requires_full_read',
      `An earlier patch of \`${path}\` failed after you had read only part of it. ${FULL_READ}`,
    );
  }
  const partial = !state.fullRead;
  /** Every failure after a partial read sets the patch flag and asks for a full read (tools.md §12.3). */
  const fail = (code: ErrorCode, message: string): ToolOutcome => {
    if (!partial) return failure(code, message);
    ctx.readState.requireFullReadForPatch(path);
    return failure(code, `${message} ${FULL_READ}`);
  };
  if (partial && replaceAll) {
    return fail(
      'workspace.patch_requires_full_read',
      `replace_all changes every occurrence in \`${path}\`, but you have read only part of it.`,
    );
  }
  if (partial && !ctx.readState.hasObserved(path, oldString)) {
    return fail(
      'workspace.patch_requires_full_read',
      `old_string is not in the parts of \`${path}\` you have read.`,
    );
  }

  const read = await ctx.workspace.read(path);
  if (!read.ok) {
    switch (read.error.code) {
      case 'workspace.path_is_directory':
        return fail(
          'workspace.path_is_directory',
          `\`${path}\` is a directory; this tool changes files. Call \`workspace_list_files\` to see what it contains.`,
        );
      case 'workspace.file_not_found':
      case 'workspace.not_a_directory':
        return fail(
          'workspace.file_not_found',
          `No file at \`${path}\`: it was removed or moved since you read it. Call \`workspace_list_files\` to see which files exist.`,
        );
      default:
        throw new HearthFailure(read.error);
    }
  }
  const decoded = decodeUtf8(path, read.value);
  if (!decoded.ok) return fail(decoded.error.code, decoded.error.message);
  const text = decoded.value;
  const oldSha256 = await sha256Hex(read.value);
  if (oldSha256 !== state.sha256) return stale(path, fail);

  const at = occurrences(text, oldString);
  if (at.length === 0) {
    return fail(
      'workspace.patch_old_string_not_found',
      `old_string does not occur in \`${path}\`. It must match the file exactly, including whitespace and line breaks.${notFoundHint(text, oldString)}`,
    );
  }
  if (at.length > 1 && !replaceAll) {
    return fail(
      'workspace.patch_old_string_not_unique',
      `old_string occurs ${at.length} times in \`${path}\`. Include more of the surrounding text so it matches exactly one place, or set replace_all to true to replace all ${at.length} (after reading the whole file).`,
    );
  }

  const next = splice(text, replaceAll ? at : at.slice(0, 1), oldString.length, newString);
  const content = new TextEncoder().encode(next);
  const written = await ctx.workspace.write(path, content, {
    kind: 'sha256',
    sha256: oldSha256,
  });
  if (!written.ok) {
    switch (written.error.code) {
      case 'workspace.conflict':
      case 'workspace.file_not_found':
        return stale(path, fail);
      case 'workspace.path_is_directory':
        return fail(
          'workspace.path_is_directory',
          `\`${path}\` became a directory while it was being patched.`,
        );
      default:
        throw new HearthFailure(written.error);
    }
  }

  const sha256 = written.value.sha256;
  ctx.readState.recordPatch(path, { sha256, oldString, newString });
  const { chars, words } = textMetrics(next);
  const replacements = replaceAll ? at.length : 1;
  return success(
    `Patched ${path} with ${replacements} replacement(s); file now has ${chars} chars / ${words} words.`,
    {
      structured: { path, chars, words, oldSha256, sha256, replacements },
      resourceRefs: [path],
      effects: [{ type: 'file-patched', path, chars, words, oldSha256, sha256, replacements, content }],
    },
  );
}

const stale = (path: WorkspacePath, fail: (code: ErrorCode, message: string) => ToolOutcome) =>
  fail(
    'workspace.patch_stale_file',
    `\`${path}\` changed since you last read it. Read it again with \`workspace_read_file\`, then retry the patch against its current text.`,
  );

/** Start offsets of the non-overlapping occurrences of `needle`, left to right. */
function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

/** Replaces `length` code units at each offset (ascending, non-overlapping) by `replacement`. */
function splice(text: string, at: readonly number[], length: number, replacement: string): string {
  const parts: string[] = [];
  let from = 0;
  for (const i of at) {
    parts.push(text.slice(from, i), replacement);
    from = i + length;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

/** Names the usual reasons an old_string read from the file does not match it. */
function notFoundHint(text: string, oldString: string): string {
  if (/^\s*\d+ \| /m.test(oldString)) {
    return ' old_string seems to include line numbers and ` | ` from `workspace_read_file` output; leave them out.';
  }
  if (
    text.includes('\r\n') &&
    /(^|[^\r])\n/.test(oldString) &&
    occurrences(text, oldString.replace(/\r?\n/g, '\r\n')).length > 0
  ) {
    return ' The file uses CRLF (`\\r\\n`) line endings; old_string must use them too.';
  }
  return '';
}
