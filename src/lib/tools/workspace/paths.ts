import { hearthError, type HearthError } from '$lib/domain/errors';
import { err, ok, type Result } from '$lib/domain/result';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { isVisible, isWritable, renderRoots, type WorkspaceRoots } from '$lib/domain/workspace-roots';

const unique = (xs: readonly string[]) => [...new Set(xs)];

export const visibleRoots = (roots: WorkspaceRoots) => unique([...roots.visible, ...roots.readOnly]);
export const writableRoots = (roots: WorkspaceRoots) =>
  roots.writable.filter((r) => !roots.readOnly.includes(r));

/** Parses a model-supplied path: trimmed, required, and valid per tools.md §12.1. */
function parse(raw: string): Result<WorkspacePath, HearthError> {
  const trimmed = raw.trim();
  if (trimmed === '') return err(hearthError('tool.invalid_arguments', 'path is required'));
  return parseWorkspacePath(trimmed);
}

/** A path the model may read: under a visible root or a read-only mount. */
export function resolveVisiblePath(roots: WorkspaceRoots, raw: string): Result<WorkspacePath, HearthError> {
  const path = parse(raw);
  if (!path.ok || isVisible(roots, path.value)) return path;
  return err(
    hearthError(
      'workspace.path_not_visible',
      `\`${path.value}\` is outside the visible workspace. Visible roots: ${renderRoots(visibleRoots(roots))}.`,
    ),
  );
}

/** A path the model may change: strictly under a writable root, never in a read-only mount. */
export function resolveWritablePath(roots: WorkspaceRoots, raw: string): Result<WorkspacePath, HearthError> {
  const path = parse(raw);
  if (!path.ok || isWritable(roots, path.value)) return path;
  const writable = writableRoots(roots);
  const where =
    writable.length > 0 ? `Write to files under ${renderRoots(writable)}.` : 'No root is writable here.';
  const why = writable.includes(path.value)
    ? `\`${path.value}\` is a root directory, not a file.`
    : `\`${path.value}\` is not writable.`;
  return err(hearthError('workspace.path_not_writable', `${why} ${where}`));
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Strict UTF-8 (a byte-order mark is kept as text, so text and bytes stay one-to-one). */
export function decodeUtf8(path: WorkspacePath, bytes: Uint8Array): Result<string, HearthError> {
  try {
    return ok(utf8.decode(bytes));
  } catch {
    return err(
      hearthError(
        'workspace.not_utf8',
        `\`${path}\` is not UTF-8 text, so it cannot be read as text. Only UTF-8 text files can be read.`,
      ),
    );
  }
}
