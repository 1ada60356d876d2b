import { hearthError, type HearthError } from '$lib/domain/errors';
import type { PackageFile, PackageLimits } from '$lib/domain/package-files';
import { err, ok, type Result } from '$lib/domain/result';
import { readZipEntry, zipEntries } from '$lib/domain/zip-archive';

/** Entries smaller than this are not judged by their compression ratio: tiny files compress well. */
const RATIO_FLOOR_BYTES = 64 * 1024;

const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;

/**
 * The files of a zip archive a person installs. Before anything is inflated, each entry's declared
 * size, the total and the compression ratio are checked against the limits, and inflation stops
 * with a refusal past the declared size, so a small archive cannot expand into a huge allocation. An
 * archive with a symbolic link entry (by its central directory's Unix mode) is refused outright,
 * also before anything is inflated. Folders and macOS metadata (`__MACOSX/`, `.DS_Store`) are left out; paths are checked by the
 * caller (`checkPackageFiles`).
 */
export function readArchive(archive: Uint8Array, limits: PackageLimits): Result<PackageFile[], HearthError> {
  const unreadable = (reason: string) =>
    err(hearthError('package.invalid', `This is not a readable zip archive (${reason}).`));
  const directory = zipEntries(archive);
  if (!directory.ok) return unreadable(directory.error);
  const link = directory.value.find((entry) => entry.symlink);
  if (link)
    return err(
      hearthError(
        'package.invalid_path',
        `\`${link.name}\` is a symbolic link; packages cannot contain links.`,
      ),
    );
  const refuse = (message: string) => err(hearthError('package.too_large', message));
  const entries = directory.value.filter(
    ({ name }) => !(name.endsWith('/') || name.startsWith('__MACOSX/') || /(^|\/)\.DS_Store$/.test(name)),
  );
  let total = 0;
  for (const [i, { name, size, compressedSize }] of entries.entries()) {
    if (i >= limits.files) return refuse(`The archive has more than ${limits.files} files.`);
    if (size > limits.fileBytes)
      return refuse(`\`${name}\` inflates to ${mib(size)}; a file may be at most ${mib(limits.fileBytes)}.`);
    total += size;
    if (total > limits.totalBytes) return refuse(`The archive inflates to over ${mib(limits.totalBytes)}.`);
    if (size >= RATIO_FLOOR_BYTES && size > limits.compressionRatio * Math.max(compressedSize, 1))
      return refuse(
        `\`${name}\` would inflate ${Math.round(size / Math.max(compressedSize, 1))} times its size; at most ${limits.compressionRatio} times is accepted.`,
      );
  }
  const files: PackageFile[] = [];
  for (const entry of entries) {
    const bytes = readZipEntry(archive, entry);
    if (!bytes.ok) return unreadable(bytes.error);
    files.push({ path: entry.name, bytes: bytes.value });
  }
  return ok(files);
}

/** Whether the bytes start like a zip archive (a local file header, or an empty archive's end record). */
export const looksLikeZip = (bytes: Uint8Array): boolean =>
  bytes.length >= 4 &&
  bytes[0] === 0x50 &&
  bytes[1] === 0x4b &&
  ((bytes[2] === 0x03 && bytes[3] === 0x04) || (bytes[2] === 0x05 && bytes[3] === 0x06));
