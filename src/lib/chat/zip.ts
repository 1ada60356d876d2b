import { readZipEntry, zipEntries } from '$lib/domain/zip-archive';

/**
 * Reading named files out of a ZIP archive (for CHARX cards), with a size cap per file. The cap is
 * checked against the size the archive declares before anything is inflated, and an entry that
 * inflates to more (or less) than that size is refused, so a small archive cannot expand into a
 * huge allocation.
 */

export type ZipRead =
  | { kind: 'ok'; files: Map<string, Uint8Array> }
  | { kind: 'too_large'; name: string; size: number }
  | { kind: 'invalid'; message: string };

export function readZipFiles(archive: Uint8Array, names: ReadonlySet<string>, maxBytes: number): ZipRead {
  const directory = zipEntries(archive);
  if (!directory.ok) return { kind: 'invalid', message: directory.error };
  const wanted = directory.value.filter((entry) => names.has(entry.name));
  const big = wanted.find((entry) => entry.size > maxBytes);
  if (big) return { kind: 'too_large', name: big.name, size: big.size };
  const files = new Map<string, Uint8Array>();
  for (const entry of wanted) {
    const bytes = readZipEntry(archive, entry);
    if (!bytes.ok) return { kind: 'invalid', message: bytes.error };
    files.set(entry.name, bytes.value);
  }
  return { kind: 'ok', files };
}
