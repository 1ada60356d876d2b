import { strFromU8, unzipSync } from 'fflate';
import { hearthError, type HearthError } from '$lib/domain/errors';
import type { PackageFile, PackageLimits } from '$lib/domain/package-files';
import { err, ok, type Result } from '$lib/domain/result';

/** Entries smaller than this are not judged by their compression ratio: tiny files compress well. */
const RATIO_FLOOR_BYTES = 64 * 1024;

const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;

/**
 * The files of a zip archive a person installs. Before anything is inflated, each entry's declared
 * size, the total and the compression ratio are checked against the limits, and inflation never
 * writes past the declared size, so a small archive cannot expand into a huge allocation. An
 * archive with a symbolic link entry (by its central directory's Unix mode) is refused outright,
 * also before anything is inflated. Folders and macOS metadata (`__MACOSX/`, `.DS_Store`) are left out; paths are checked by the
 * caller (`checkPackageFiles`).
 */
export function readArchive(archive: Uint8Array, limits: PackageLimits): Result<PackageFile[], HearthError> {
  const unreadableError = (reason: string) =>
    hearthError('package.invalid', `This is not a readable zip archive (${reason}).`);
  const unreadable = (reason: string) => err(unreadableError(reason));
  const inconsistent = 'its central directory could not be read consistently';
  const directory = readCentralDirectory(archive);
  if (!directory.ok) return unreadable(directory.error);
  const link = directory.value.find((entry) => entry.symlink);
  if (link)
    return err(
      hearthError(
        'package.invalid_path',
        `\`${link.name}\` is a symbolic link; packages cannot contain links.`,
      ),
    );
  const entries = directory.value;
  let seen = 0;
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
        // fflate walks the same central directory; an entry it sees that was not checked above
        // for links is never inflated.
        if (entries[seen++]?.name !== entry.name) refusal ??= unreadableError(inconsistent);
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
    return unreadable(e instanceof Error ? e.message : String(e));
  }
  if (refusal) return err(refusal);
  if (seen !== entries.length) return unreadable(inconsistent);
  return ok(Object.entries(files).map(([path, bytes]) => ({ path, bytes })));
}

/** Whether the bytes start like a zip archive (a local file header, or an empty archive's end record). */
export const looksLikeZip = (bytes: Uint8Array): boolean =>
  bytes.length >= 4 &&
  bytes[0] === 0x50 &&
  bytes[1] === 0x4b &&
  ((bytes[2] === 0x03 && bytes[3] === 0x04) || (bytes[2] === 0x05 && bytes[3] === 0x06));

/** One entry of a zip archive's central directory: its name, and whether it is a symbolic link. */
export interface CentralEntry {
  name: string;
  symlink: boolean;
}

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_BYTES = 22;
/** The end record and the longest comment it may carry. */
const EOCD_SEARCH_BYTES = EOCD_BYTES + 0xffff;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_LOCATOR_BYTES = 20;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const ZIP64_EOCD_BYTES = 56;
const CENTRAL_SIGNATURE = 0x02014b50;
const CENTRAL_BYTES = 46;
/** "Version made by" hosts whose external attributes carry a Unix mode in their high 16 bits. */
const UNIX_HOSTS = new Set([3 /* Unix */, 19 /* OS X */]);
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
/** General purpose flag bit 11: the name is UTF-8 (otherwise read as fflate reads it, Latin-1). */
const UTF8_FLAG = 0x800;

/**
 * The entries of a zip archive's central directory, in order, as fflate's `unzipSync` walks it:
 * the last end of central directory record within the archive's final 65,557 bytes, with its
 * entry count and directory offset taken from the ZIP64 end record when a ZIP64 locator precedes
 * it. Nothing is inflated. A malformed directory is an error, the reason in words.
 */
export function readCentralDirectory(bytes: Uint8Array): Result<CentralEntry[], string> {
  const u16 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8);
  const u32 = (at: number) =>
    (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
  const u64 = (at: number) => u32(at) + u32(at + 4) * 0x1_0000_0000;

  let eocd = -1;
  for (let at = bytes.length - EOCD_BYTES; at >= 0 && bytes.length - at <= EOCD_SEARCH_BYTES; at--)
    if (u32(at) === EOCD_SIGNATURE) {
      eocd = at;
      break;
    }
  if (eocd < 0) return err('no end of central directory record was found');

  const diskEntries = u16(eocd + 8);
  let entries = u16(eocd + 10);
  let offset = u32(eocd + 16);
  // fflate reads no entries when this count is 0, whatever a ZIP64 record says.
  if (diskEntries === 0) return ok([]);
  let end = eocd;
  const locator = eocd - ZIP64_LOCATOR_BYTES;
  const record = locator >= 0 && u32(locator) === ZIP64_LOCATOR_SIGNATURE ? u64(locator + 8) : -1;
  if (record >= 0 && record + ZIP64_EOCD_BYTES <= locator && u32(record) === ZIP64_EOCD_SIGNATURE) {
    if (u64(record + 24) !== u64(record + 32)) return err('it spans several disks');
    entries = u64(record + 32);
    offset = u64(record + 48);
    end = record;
  } else if (diskEntries === 0xffff || entries === 0xffff || offset === 0xffffffff) {
    return err('it declares a ZIP64 end of central directory record, but none was found');
  } else if (diskEntries !== entries) {
    return err('it spans several disks');
  }

  const found: CentralEntry[] = [];
  for (let i = 0; i < entries; i++) {
    if (offset + CENTRAL_BYTES > end) return err('its central directory is cut short');
    if (u32(offset) !== CENTRAL_SIGNATURE)
      return err(`its central directory entry ${i + 1} of ${entries} is malformed`);
    const nameLength = u16(offset + 28);
    const next = offset + CENTRAL_BYTES + nameLength + u16(offset + 30) + u16(offset + 32);
    if (next > end) return err('its central directory is cut short');
    const host = bytes[offset + 5]!;
    const mode = (u32(offset + 38) >>> 16) & S_IFMT;
    const name = strFromU8(
      bytes.subarray(offset + CENTRAL_BYTES, offset + CENTRAL_BYTES + nameLength),
      !(u16(offset + 8) & UTF8_FLAG),
    );
    found.push({ name, symlink: UNIX_HOSTS.has(host) && mode === S_IFLNK });
    offset = next;
  }
  return ok(found);
}
