import { z } from 'zod';
import { HearthFailure } from '$lib/domain/errors';
import { textMetrics } from '$lib/domain/text-metrics';
import type { Result } from '$lib/domain/result';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { WorkspaceError } from '$lib/ports/workspace';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { optionalString, requiredString } from './params';
import { resolveWritablePath } from './paths';

const NAME = 'workspace.write_file';
const MODES = ['replace', 'append'] as const;
type Mode = (typeof MODES)[number];

const parameters = z.strictObject({
  path: requiredString('path').describe(
    'Path of the file to write, under a writable root, e.g. `work/notes.md`. Missing parent directories are created.',
  ),
  content: requiredString('content').describe('The text to write, used exactly as given (may be empty).'),
  mode: optionalString('mode').describe(
    '`replace` (default) writes the whole file; `append` adds `content` at the end of the file.',
  ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `Write UTF-8 text to a file in the workspace.
mode \`replace\` (the default) makes \`content\` the whole file. A new file is created along with its parent directories. To replace a file that already exists you must first read it with \`workspace_read_file\` (or have written it with this tool), and this tool refuses if the file changed since then: read it again and retry.
mode \`append\` adds \`content\` exactly at the end of the file, creating the file if it is missing, with no read needed. No newline is added: start \`content\` with a newline when the file does not end with one.
The result states the size of the whole file, not its text; read the file to see it. For small changes to an existing file prefer \`workspace_apply_patch\`.`;

export const writeFileTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: writeFile,
});

async function writeFile(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const mode = (input.mode ?? '').trim() || 'replace';
  if (!isMode(mode)) {
    return failure(
      'workspace.write_mode_invalid',
      `mode must be \`replace\` or \`append\`, not \`${mode}\`.`,
    );
  }
  const path = resolveWritablePath(ctx.roots, input.path);
  if (!path.ok) return failure(path.error.code, path.error.message);
  const data = new TextEncoder().encode(input.content);
  return mode === 'replace' ? replace(ctx, path.value, input.content, data) : append(ctx, path.value, data);
}

const isMode = (mode: string): mode is Mode => (MODES as readonly string[]).includes(mode);

async function replace(ctx: ToolContext, path: WorkspacePath, content: string, data: Uint8Array) {
  const stat = await ctx.workspace.stat(path);
  if (!stat.ok) throw new HearthFailure(stat.error);
  if (stat.value?.kind === 'directory') return isDirectory(path);

  let written: Result<{ sha256: string }, WorkspaceError>;
  if (stat.value === null) {
    written = await ctx.workspace.write(path, data, { kind: 'absent' });
    if (!written.ok && written.error.code === 'workspace.conflict')
      return requiresRead(path, 'was just created');
  } else {
    const state = ctx.readState.get(path);
    if (!state) return requiresRead(path, 'already exists');
    written = await ctx.workspace.write(path, data, { kind: 'sha256', sha256: state.sha256 });
    if (!written.ok && written.error.code === 'workspace.conflict') {
      return failure(
        'workspace.write_stale_file',
        `\`${path}\` changed since you last read or wrote it. Read it again with \`workspace_read_file\`, then retry.`,
      );
    }
    if (!written.ok && written.error.code === 'workspace.file_not_found') {
      return failure(
        'workspace.write_stale_file',
        `\`${path}\` no longer exists: it was removed or moved since you last read it. Check its directory with \`workspace_list_files\` before writing.`,
      );
    }
  }
  if (!written.ok) return writeError(path, written.error);

  ctx.readState.recordReplaceWrite(path, written.value.sha256);
  return fileWritten(path, 'replace', content, data, written.value.sha256);
}

async function append(ctx: ToolContext, path: WorkspacePath, data: Uint8Array) {
  const appended = await ctx.workspace.append(path, data);
  if (!appended.ok) return writeError(path, appended.error);
  ctx.readState.recordAppend(path, appended.value);
  // The summary describes the whole file, so read it back; it is text we just appended to.
  const after = await ctx.workspace.read(path);
  if (!after.ok) throw new HearthFailure(after.error);
  return fileWritten(
    path,
    'append',
    new TextDecoder().decode(after.value),
    after.value,
    appended.value.sha256,
  );
}

function fileWritten(
  path: WorkspacePath,
  mode: Mode,
  fileText: string,
  content: Uint8Array,
  sha256: string,
): ToolOutcome {
  const { chars, words } = textMetrics(fileText);
  return success(`${mode === 'replace' ? 'Wrote' : 'Appended'} ${chars} chars / ${words} words to ${path}.`, {
    structured: { path, mode, chars, words, sha256 },
    resourceRefs: [path],
    effects: [{ type: 'file-written', path, mode, chars, words, sha256, content }],
  });
}

const requiresRead = (path: WorkspacePath, why: string) =>
  failure(
    'workspace.write_requires_read',
    `\`${path}\` ${why}. Read it with \`workspace_read_file\` before replacing it, or use mode \`append\` to add to its end.`,
  );

const isDirectory = (path: WorkspacePath) =>
  failure(
    'workspace.path_is_directory',
    `\`${path}\` is a directory; write to a file path inside it. Call \`workspace_list_files\` to see its contents.`,
  );

function writeError(path: WorkspacePath, error: WorkspaceError): ToolOutcome {
  switch (error.code) {
    case 'workspace.path_is_directory':
      return isDirectory(path);
    case 'workspace.not_a_directory':
      return failure('workspace.not_a_directory', `Cannot write \`${path}\`: ${error.message}`);
    default:
      throw new HearthFailure(error);
  }
}
