import { unzipSync } from 'fflate';

/**
 * Reading named files out of a ZIP archive (for CHARX cards), with a size cap per file. The cap is
 * checked against the size the archive declares before anything is inflated, and inflation never
 * writes past that declared size, so a small archive cannot expand into a huge allocation.
 */

export type ZipRead =
  | { kind: 'ok'; files: Map<string, Uint8Array> }
  | { kind: 'too_large'; name: string; size: number }
  | { kind: 'invalid'; message: string };

export function readZipFiles(archive: Uint8Array, names: ReadonlySet<string>, maxBytes: number): ZipRead {
  let tooLarge: { name: string; size: number } | null = null;
  try {
    const files = unzipSync(archive, {
      filter: (f) => {
        if (!names.has(f.name)) return false;
        if (f.originalSize > maxBytes) {
          tooLarge ??= { name: f.name, size: f.originalSize };
          return false;
        }
        return true;
      },
    });
    const big = tooLarge as { name: string; size: number } | null;
    if (big) return { kind: 'too_large', name: big.name, size: big.size };
    return { kind: 'ok', files: new Map(Object.entries(files)) };
  } catch (e) {
    return { kind: 'invalid', message: e instanceof Error ? e.message : String(e) };
  }
}
