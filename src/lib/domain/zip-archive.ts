import { Inflate, strFromU8 } from 'fflate';
import { err, ok, type Result } from './result';

/**
 * Reading zip archives: the central directory found from the archive's tail, each entry's sizes
 * and offsets (with its ZIP64 extended information applied, whatever the end record is), and an
 * entry's data inflated to exactly the size it declares. Nothing here does I/O: callers hand in
 * the bytes each step asks for, whole (`zipEntries`, `readZipEntry`) or in slices of a `Blob`.
 * Failures are the reason in words, phrased to follow "This is not a readable zip archive (…)".
 */

/** One entry of a zip archive's central directory. */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflate; any other is refused when the entry is read. */
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
  crc32: number;
  encrypted: boolean;
  directory: boolean;
  /** By the Unix mode in its external attributes, when a Unix (or OS X) host made it. */
  symlink: boolean;
}

/** Where the central directory is: `entries` records from `offset`, none reaching past `end`. */
export interface CentralDirectoryLocation {
  offset: number;
  end: number;
  entries: number;
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
const LOCAL_SIGNATURE = 0x04034b50;
const ZIP64_EXTRA_ID = 0x0001;
const SATURATED_16 = 0xffff;
const SATURATED_32 = 0xffffffff;
/** "Version made by" hosts whose external attributes carry a Unix mode in their high 16 bits. */
const UNIX_HOSTS = new Set([3 /* Unix */, 19 /* OS X */]);
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const ENCRYPTED_FLAG = 0x1;
/** General purpose flag bit 11: the name is UTF-8 (otherwise read as fflate reads it, Latin-1). */
const UTF8_FLAG = 0x800;

/**
 * How many bytes of the archive's end `locateCentralDirectory` needs: the end record, its longest
 * comment, and the ZIP64 locator and end record before it.
 */
export const ZIP_TAIL_BYTES = EOCD_SEARCH_BYTES + ZIP64_LOCATOR_BYTES + ZIP64_EOCD_BYTES;

/** A local file header's fixed part; its name and extra field follow. */
export const LOCAL_HEADER_BYTES = 30;

const reader = (bytes: Uint8Array) => {
  const u16 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8);
  const u32 = (at: number) =>
    (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
  // NaN past 2^53, which every comparison below then refuses.
  const u64 = (at: number) => {
    const high = u32(at + 4);
    return high < 0x200000 ? u32(at) + high * 0x1_0000_0000 : NaN;
  };
  return { u16, u32, u64 };
};

/**
 * Where the central directory is, from the archive's last bytes (`tail`, at `tailOffset`, up to
 * `ZIP_TAIL_BYTES` of them, ending at `archiveSize`): the last end of central directory record
 * within the archive's final 65,557 bytes, with its count and offset taken from the ZIP64 end
 * record when a ZIP64 locator precedes it.
 */
export function locateCentralDirectory(
  tail: Uint8Array,
  tailOffset: number,
  archiveSize: number,
): Result<CentralDirectoryLocation, string> {
  const { u16, u32, u64 } = reader(tail);
  let eocd = -1;
  for (
    let at = tail.length - EOCD_BYTES;
    at >= 0 && archiveSize - (tailOffset + at) <= EOCD_SEARCH_BYTES;
    at--
  )
    if (u32(at) === EOCD_SIGNATURE) {
      eocd = at;
      break;
    }
  if (eocd < 0) return err('no end of central directory record was found');

  const diskEntries = u16(eocd + 8);
  const entries = u16(eocd + 10);
  const offset = u32(eocd + 16);
  const locator = eocd - ZIP64_LOCATOR_BYTES;
  let location: CentralDirectoryLocation;
  if (locator >= 0 && u32(locator) === ZIP64_LOCATOR_SIGNATURE) {
    // The ZIP64 end record sits just before its locator; one found elsewhere, or none, is refused
    // rather than falling back to the end record's own fields.
    const record = u64(locator + 8) - tailOffset;
    if (!(record >= 0 && record + ZIP64_EOCD_BYTES <= locator && u32(record) === ZIP64_EOCD_SIGNATURE))
      return err('its ZIP64 end of central directory locator points to no ZIP64 end record');
    if (u32(locator + 16) > 1 || u64(record + 24) !== u64(record + 32)) return err('it spans several disks');
    location = { offset: u64(record + 48), end: tailOffset + record, entries: u64(record + 32) };
  } else if (diskEntries === SATURATED_16 || entries === SATURATED_16 || offset === SATURATED_32) {
    return err('it declares a ZIP64 end of central directory record, but none was found');
  } else if (diskEntries !== entries) {
    return err('it spans several disks');
  } else {
    location = { offset, end: tailOffset + eocd, entries };
  }
  if (!(location.offset + CENTRAL_BYTES * location.entries <= location.end))
    return err('its central directory is cut short');
  return ok(location);
}

/**
 * The entries of the central directory at `location`, in order, from its bytes (`directory`, from
 * `location.offset` to `location.end`). Each entry's ZIP64 extended information extra field
 * (0x0001) supplies, in order, the size, compressed size and local header offset whose 32-bit
 * fields are saturated (0xFFFFFFFF).
 */
export function parseCentralDirectory(
  directory: Uint8Array,
  location: CentralDirectoryLocation,
): Result<ZipEntry[], string> {
  const { u16, u32, u64 } = reader(directory);
  const end = location.end - location.offset;
  const found: ZipEntry[] = [];
  let at = 0;
  for (let i = 0; i < location.entries; i++) {
    if (at + CENTRAL_BYTES > end) return err('its central directory is cut short');
    if (u32(at) !== CENTRAL_SIGNATURE)
      return err(`its central directory entry ${i + 1} of ${location.entries} is malformed`);
    const flags = u16(at + 8);
    const nameLength = u16(at + 28);
    const extraLength = u16(at + 30);
    const extraStart = at + CENTRAL_BYTES + nameLength;
    const next = extraStart + extraLength + u16(at + 32);
    if (next > end) return err('its central directory is cut short');
    const name = strFromU8(directory.subarray(at + CENTRAL_BYTES, extraStart), !(flags & UTF8_FLAG));
    let size = u32(at + 24);
    let compressedSize = u32(at + 20);
    let localHeaderOffset = u32(at + 42);
    const saturated = [size, compressedSize, localHeaderOffset].filter((v) => v === SATURATED_32).length;
    if (saturated > 0) {
      const zip64 = extraField(directory, extraStart, extraStart + extraLength, ZIP64_EXTRA_ID);
      if (!zip64 || zip64.end - zip64.start < 8 * saturated)
        return err(`\`${name}\` declares ZIP64 sizes without a ZIP64 extra field holding them`);
      let field = zip64.start;
      const take = () => ((field += 8), u64(field - 8));
      if (size === SATURATED_32) size = take();
      if (compressedSize === SATURATED_32) compressedSize = take();
      if (localHeaderOffset === SATURATED_32) localHeaderOffset = take();
      if ([size, compressedSize, localHeaderOffset].some(Number.isNaN))
        return err(`\`${name}\` declares sizes too large to read`);
    }
    const mode = (u32(at + 38) >>> 16) & S_IFMT;
    found.push({
      name,
      method: u16(at + 10),
      compressedSize,
      size,
      localHeaderOffset,
      crc32: u32(at + 16),
      encrypted: (flags & ENCRYPTED_FLAG) !== 0,
      directory: name.endsWith('/'),
      symlink: UNIX_HOSTS.has(directory[at + 5]!) && mode === S_IFLNK,
    });
    at = next;
  }
  return ok(found);
}

/** The data of the extra field `id` between `start` and `end`, if present and whole. */
function extraField(bytes: Uint8Array, start: number, end: number, id: number) {
  const { u16 } = reader(bytes);
  for (let at = start; at + 4 <= end;) {
    const length = u16(at + 2);
    if (at + 4 + length > end) return null;
    if (u16(at) === id) return { start: at + 4, end: at + 4 + length };
    at += 4 + length;
  }
  return null;
}

/**
 * Where `entry`'s compressed data starts, from its local header (`localHeader`, at least its
 * first `LOCAL_HEADER_BYTES` bytes): after the local header's own name and extra field, which may
 * differ in length from the central directory's. The data must end within `archiveSize`.
 */
export function entryDataOffset(
  localHeader: Uint8Array,
  entry: ZipEntry,
  archiveSize: number,
): Result<number, string> {
  const { u16, u32 } = reader(localHeader);
  if (localHeader.length < LOCAL_HEADER_BYTES)
    return err(`the local header of \`${entry.name}\` is cut short`);
  if (u32(0) !== LOCAL_SIGNATURE) return err(`the local header of \`${entry.name}\` is malformed`);
  const offset = entry.localHeaderOffset + LOCAL_HEADER_BYTES + u16(26) + u16(28);
  if (offset + entry.compressedSize > archiveSize) return err(`the data of \`${entry.name}\` is cut short`);
  return ok(offset);
}

/** A DEFLATE stream yields at most 1,032 bytes per byte it holds. */
const DEFLATE_MAX_RATIO = 1032;
const PIECE_MIN_BYTES = 16 * 1024;
const PIECE_MAX_BYTES = 64 * 1024;

/** Inflates one entry's compressed data, pushed in order, never yielding past its declared size. */
export interface ZipEntryInflater {
  /**
   * The inflated bytes of the next piece of compressed data (`last` with the final one), or why
   * the entry is unreadable: more or less data than it declares, or a broken stream. After an
   * error every push returns it again.
   */
  push(compressed: Uint8Array, last: boolean): Result<Uint8Array[], string>;
}

/**
 * A streaming inflater for `entry`. The compressed data goes to fflate's `Inflate` in pieces sized
 * by what is left of the declared size, so no piece can expand much past it (at most about
 * `PIECE_MIN_BYTES` × 1,032 bytes over) before the inflater stops with an error.
 */
export function zipEntryInflater(entry: ZipEntry): Result<ZipEntryInflater, string> {
  const readable = checkReadable(entry);
  if (!readable.ok) return readable;
  const name = `\`${entry.name}\``;
  let pushed = 0;
  let produced = 0;
  let out: Uint8Array[] = [];
  const keep = (chunk: Uint8Array) => {
    produced += chunk.length;
    if (produced <= entry.size && chunk.length) out.push(chunk);
  };
  const inflate = new Inflate(keep);
  const pushOnce = (compressed: Uint8Array, last: boolean): Result<Uint8Array[], string> => {
    pushed += compressed.length;
    if (pushed > entry.compressedSize) return err(`${name} holds more data than it declares`);
    if (last && pushed < entry.compressedSize) return err(`the data of ${name} is cut short`);
    out = [];
    if (entry.method === 0) keep(compressed);
    else {
      let at = 0;
      do {
        const left = entry.size - produced + 1;
        const piece = Math.min(
          PIECE_MAX_BYTES,
          Math.max(PIECE_MIN_BYTES, Math.ceil(left / DEFLATE_MAX_RATIO)),
        );
        const end = Math.min(compressed.length, at + piece);
        try {
          inflate.push(compressed.subarray(at, end), last && end === compressed.length);
        } catch (e) {
          return err(
            `the data of ${name} cannot be inflated (${e instanceof Error ? e.message : String(e)})`,
          );
        }
        at = end;
      } while (at < compressed.length && produced <= entry.size);
    }
    if (produced > entry.size)
      return err(`${name} inflates to more than the ${entry.size} bytes it declares`);
    if (last && produced < entry.size)
      return err(`${name} inflates to ${produced} bytes, not the ${entry.size} it declares`);
    return ok(out);
  };
  let failure: { ok: false; error: string } | null = null;
  return ok({
    push(compressed, last) {
      if (failure) return failure;
      const result = pushOnce(compressed, last);
      if (!result.ok) failure = result;
      return result;
    },
  });
}

function checkReadable(entry: ZipEntry): Result<void, string> {
  if (entry.encrypted) return err(`\`${entry.name}\` is encrypted`);
  if (entry.method !== 0 && entry.method !== 8)
    return err(
      `\`${entry.name}\` uses compression method ${entry.method}; only stored and deflated entries can be read`,
    );
  if (entry.method === 0 && entry.compressedSize !== entry.size)
    return err(`\`${entry.name}\` is stored with ${entry.compressedSize} bytes but declares ${entry.size}`);
  return ok(undefined);
}

/** `entry`'s data, from exactly its `compressedSize` compressed bytes, as a new array of exactly its declared size. */
export function inflateEntry(entry: ZipEntry, compressed: Uint8Array): Result<Uint8Array, string> {
  const inflater = zipEntryInflater(entry);
  if (!inflater.ok) return inflater;
  const pieces = inflater.value.push(compressed, true);
  if (!pieces.ok) return pieces;
  const out = new Uint8Array(entry.size);
  let at = 0;
  for (const piece of pieces.value) {
    out.set(piece, at);
    at += piece.length;
  }
  return ok(out);
}

/** The entries of an archive held in memory. */
export function zipEntries(archive: Uint8Array): Result<ZipEntry[], string> {
  const tailOffset = Math.max(0, archive.length - ZIP_TAIL_BYTES);
  const location = locateCentralDirectory(archive.subarray(tailOffset), tailOffset, archive.length);
  if (!location.ok) return location;
  return parseCentralDirectory(archive.subarray(location.value.offset, location.value.end), location.value);
}

/** One entry's data from an archive held in memory. */
export function readZipEntry(archive: Uint8Array, entry: ZipEntry): Result<Uint8Array, string> {
  const header = archive.subarray(entry.localHeaderOffset, entry.localHeaderOffset + LOCAL_HEADER_BYTES);
  const offset = entryDataOffset(header, entry, archive.length);
  if (!offset.ok) return offset;
  return inflateEntry(entry, archive.subarray(offset.value, offset.value + entry.compressedSize));
}
