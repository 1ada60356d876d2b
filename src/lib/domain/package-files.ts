import { hearthError, type HearthError } from './errors';
import { sha256Hex } from './hash';
import { err, ok, type Result } from './result';
import { parseWorkspacePath } from './workspace-path';

/** One file of a package a person installs (an extension, later a skill), by its path inside it. */
export interface PackageFile {
  path: string;
  bytes: Uint8Array;
}

/** How much a package may hold; checked before anything is inflated or stored. */
export interface PackageLimits {
  files: number;
  fileBytes: number;
  totalBytes: number;
  /** Inflated size over compressed size, per archive entry (a zip bomb's tell). */
  compressionRatio: number;
}

/** Segments no package may contain: version control, keys and secrets that were zipped by mistake. */
const REFUSED_SEGMENTS = new Set(['.git', '.ssh', '.env']);

/**
 * A path inside a package, normalized like a workspace path (tools.md §12.1: no `..`, nothing
 * absolute, no drive) and without `.git`, `.ssh` or `.env` segments.
 */
export function packagePath(raw: string): Result<string, HearthError> {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok)
    return err(hearthError('package.invalid_path', parsed.error.message.replace('workspace path', 'path')));
  const refused = parsed.value.split('/').find((s) => REFUSED_SEGMENTS.has(s));
  if (refused) return err(hearthError('package.invalid_path', `\`${raw}\` is inside \`${refused}\`.`));
  return ok(parsed.value);
}

const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;

/**
 * The files with normalized paths, or why the package is refused: a path that escapes it, a path
 * given twice, too many files, a file or the whole over its size.
 */
export function checkPackageFiles(
  files: readonly PackageFile[],
  limits: PackageLimits,
): Result<PackageFile[], HearthError> {
  if (files.length > limits.files)
    return err(
      hearthError('package.too_large', `The package has ${files.length} files; at most ${limits.files}.`),
    );
  const out: PackageFile[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const file of files) {
    const path = packagePath(file.path);
    if (!path.ok) return path;
    if (seen.has(path.value))
      return err(hearthError('package.invalid_path', `\`${path.value}\` is in the package twice.`));
    seen.add(path.value);
    if (file.bytes.byteLength > limits.fileBytes)
      return err(
        hearthError(
          'package.too_large',
          `\`${path.value}\` is ${mib(file.bytes.byteLength)}; a file may be at most ${mib(limits.fileBytes)}.`,
        ),
      );
    total += file.bytes.byteLength;
    if (total > limits.totalBytes)
      return err(hearthError('package.too_large', `The package is over ${mib(limits.totalBytes)} in all.`));
    out.push({ path: path.value, bytes: file.bytes });
  }
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return ok(out);
}

/**
 * The content hash of a package (tools.md §16.1): SHA-256 over each file in path order, as its
 * path, NUL, its bytes, NUL. Two packages with the same files have the same hash.
 */
export function packageHash(files: readonly PackageFile[]): Promise<string> {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  const nul = new Uint8Array([0]);
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    parts.push(encoder.encode(file.path), nul, file.bytes, nul);
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.byteLength;
  }
  return sha256Hex(all);
}
