import { err, type Result } from '$lib/domain/result';
import {
  entryDataOffset,
  inflateEntry,
  LOCAL_HEADER_BYTES,
  locateCentralDirectory,
  parseCentralDirectory,
  ZIP_TAIL_BYTES,
  zipEntryInflater,
  type ZipEntry,
} from '$lib/domain/zip-archive';

/**
 * A zip archive in a `Blob` (a `File` a person picked, possibly gigabytes), read in slices: only
 * its tail and central directory to list it, only one entry's local header and data to read it.
 * Reasons are those of `$lib/domain/zip-archive`; a `Blob` that cannot be read rejects.
 */

const bytesOf = async (blob: Blob, start: number, end: number) =>
  new Uint8Array(await blob.slice(start, end).arrayBuffer());

/** The archive's entries, from its tail and central directory alone. */
export async function readBlobZipDirectory(blob: Blob): Promise<Result<ZipEntry[], string>> {
  const tailOffset = Math.max(0, blob.size - ZIP_TAIL_BYTES);
  const location = locateCentralDirectory(await bytesOf(blob, tailOffset, blob.size), tailOffset, blob.size);
  if (!location.ok) return location;
  const { offset, end } = location.value;
  return parseCentralDirectory(await bytesOf(blob, offset, end), location.value);
}

async function dataOffset(blob: Blob, entry: ZipEntry): Promise<Result<number, string>> {
  const header = await bytesOf(blob, entry.localHeaderOffset, entry.localHeaderOffset + LOCAL_HEADER_BYTES);
  return entryDataOffset(header, entry, blob.size);
}

/** One entry's data, whole: for entries small enough to hold in memory. */
export async function readBlobZipEntry(blob: Blob, entry: ZipEntry): Promise<Result<Uint8Array, string>> {
  const offset = await dataOffset(blob, entry);
  if (!offset.ok) return offset;
  const compressed = await bytesOf(blob, offset.value, offset.value + entry.compressedSize);
  if (compressed.length !== entry.compressedSize) return err(`the data of \`${entry.name}\` is cut short`);
  return inflateEntry(entry, compressed);
}

/**
 * One entry's data in chunks, its compressed data read `sliceBytes` at a time, so an entry of any
 * size passes through a little memory. The chunks add up to exactly the entry's declared size;
 * an unreadable entry throws an `Error` saying why (after the chunks read before the problem).
 */
export async function* blobZipEntryChunks(
  blob: Blob,
  entry: ZipEntry,
  sliceBytes = 4 * 1024 * 1024,
): AsyncIterable<Uint8Array> {
  const fail = (reason: string) => new Error(`This is not a readable zip archive (${reason}).`);
  const inflater = zipEntryInflater(entry);
  if (!inflater.ok) throw fail(inflater.error);
  const offset = await dataOffset(blob, entry);
  if (!offset.ok) throw fail(offset.error);
  const end = offset.value + entry.compressedSize;
  let at = offset.value;
  do {
    const slice = await bytesOf(blob, at, Math.min(end, at + sliceBytes));
    if (slice.length === 0 && at < end) throw fail(`the data of \`${entry.name}\` is cut short`);
    at += slice.length;
    const chunks = inflater.value.push(slice, at >= end);
    if (!chunks.ok) throw fail(chunks.error);
    yield* chunks.value;
  } while (at < end);
}
