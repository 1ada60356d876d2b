import type { Brand } from './brand';
import type { HearthError } from './errors';
import { err, ok, type Result } from './result';

/** A logical, normalized, relative workspace path (`output/main.md`). Made only by the parser. */
export type WorkspacePath = Brand<string, 'WorkspacePath'>;

const DRIVE_PREFIX = /^[A-Za-z]:/;

/**
 * The one place a WorkspacePath is made (tools.md §12.1): reject empty, NUL, absolute and
 * drive-prefixed paths; normalize `\` to `/`; drop empty and `.` segments; reject `..`.
 */
export function parseWorkspacePath(raw: string): Result<WorkspacePath, HearthError> {
  const invalid = (why: string) =>
    err<HearthError>({
      code: 'workspace.invalid_path',
      message: `Invalid workspace path \`${raw}\`: ${why}.`,
    });
  if (raw === '') return invalid('the path is empty');
  if (raw.includes('\0')) return invalid('the path contains a NUL character');
  if (raw.startsWith('/') || raw.startsWith('\\'))
    return invalid('use a relative path such as `work/notes.md`');
  const segments = raw
    .replaceAll('\\', '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return invalid('`..` segments are not allowed');
  if (segments.length === 0) return invalid('the path names no file or directory');
  // Checked after normalizing, so `./C:` cannot become the drive-prefixed `C:`.
  if (DRIVE_PREFIX.test(segments[0]!)) return invalid('drive letters are not allowed; use a relative path');
  return ok(segments.join('/') as WorkspacePath);
}

export const pathSegments = (p: WorkspacePath): string[] => p.split('/');

export const parentOf = (p: WorkspacePath): WorkspacePath | null => {
  const i = p.lastIndexOf('/');
  return i < 0 ? null : (p.slice(0, i) as WorkspacePath);
};

export const joinPath = (dir: WorkspacePath | null, name: string): WorkspacePath =>
  (dir === null ? name : `${dir}/${name}`) as WorkspacePath;
