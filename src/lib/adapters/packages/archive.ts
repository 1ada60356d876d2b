import { unzipSync } from 'fflate';
import { hearthError, type HearthError } from '$lib/domain/errors';
import type { PackageFile, PackageLimits } from '$lib/domain/package-files';
import { err, ok, type Result } from '$lib/domain/result';

/** Entries smaller than this are not judged by their compression ratio: tiny files compress well. */
const RATIO_FLOOR_BYTES = 64 * 1024;

const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;

/**
 * The files of a zip archive a person installs. Before anything is inflated, each entry's declared
 * size, the total and the compression ratio are checked against the limits, and inflation never
 * writes past the declared size, so a small archive cannot expand into a huge allocation.
 * Folders and macOS metadata (`__MACOSX/`, `.DS_Store`) are left out; paths are checked by the
 * caller (`checkPackageFiles`).
 */
export function readArchive(archive: Uint8Array, limits: PackageLimits): Result<PackageFile[], HearthError> {
  let refusal: HearthError | null = null;
  let count = 0;
  let total = 0;
  const refuse = (message: string) => {
    refusal ??= hearthError('package.too_large', message);
    return false;
  };
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(archive, {
      filter: (entry) => {
        if (refusal) return false;
        const name = entry.name;
        if (name.endsWith('/') || name.startsWith('__MACOSX/') || /(^|\/)\.DS_Store$/.test(name))
          return false;
        if (++count > limits.files) return refuse(`The archive has more than ${limits.files} files.`);
        if (entry.originalSize > limits.fileBytes)
          return refuse(
            `\`${name}\` inflates to ${mib(entry.originalSize)}; a file may be at most ${mib(limits.fileBytes)}.`,
          );
        total += entry.originalSize;
        if (total > limits.totalBytes)
          return refuse(`The archive inflates to over ${mib(limits.totalBytes)}.`);
        if (
          entry.originalSize >= RATIO_FLOOR_BYTES &&
          entry.originalSize > limits.compressionRatio * Math.max(entry.size, 1)
        )
          return refuse(
            `\`${name}\` would inflate ${Math.round(entry.originalSize / Math.max(entry.size, 1))} times its size; at most ${limits.compressionRatio} times is accepted.`,
          );
        return true;
      },
    });
  } catch (e) {
    return err(
      hearthError(
        'package.invalid',
        `This is not a readable zip archive (${e instanceof Error ? e.message : String(e)}).`,
      ),
    );
  }
  if (refusal) return err(refusal);
  return ok(Object.entries(files).map(([path, bytes]) => ({ path, bytes })));
}

/** Whether the bytes start like a zip archive (a local file header, or an empty archive's end record). */
export const looksLikeZip = (bytes: Uint8Array): boolean =>
  bytes.length >= 4 &&
  bytes[0] === 0x50 &&
  bytes[1] === 0x4b &&
  ((bytes[2] === 0x03 && bytes[3] === 0x04) || (bytes[2] === 0x05 && bytes[3] === 0x06));
