import { describe, expect, it } from 'vitest';
import { blobZipEntryChunks, readBlobZipDirectory, readBlobZipEntry } from '$lib/adapters/packages/blob-zip';
import type { ZipEntry } from '$lib/domain/zip-archive';
import { buildZip } from '../../support/zip-builder';

/** Bytes that do not compress. */
const noise = (n: number, seed = 2463534242) => {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
};

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
};

/** A real `Blob` whose slices count the bytes read out of them, and the largest single read. */
const counted = (bytes: Uint8Array<ArrayBuffer>) => {
  const stats = { read: 0, largest: 0 };
  const wrap = (b: Blob): Blob =>
    ({
      size: b.size,
      slice: (start?: number, end?: number) => wrap(b.slice(start, end)),
      arrayBuffer: async () => {
        const buffer = await b.arrayBuffer();
        stats.read += buffer.byteLength;
        stats.largest = Math.max(stats.largest, buffer.byteLength);
        return buffer;
      },
    }) as Blob;
  return { blob: wrap(new Blob([bytes])), stats };
};

const directoryOf = async (blob: Blob): Promise<ZipEntry[]> => {
  const r = await readBlobZipDirectory(blob);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

const collect = async (chunks: AsyncIterable<Uint8Array>) => {
  const out: Uint8Array[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
};

/** Whether two byte arrays are equal; `toEqual` compares multi-MiB arrays too slowly. */
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

const MiB = 1024 * 1024;

describe('readBlobZipDirectory', () => {
  it('lists the entries reading only the tail and the central directory', async () => {
    const zip = buildZip([
      { name: 'a.bin', data: noise(6 * MiB), method: 0 },
      { name: 'b.bin', data: noise(6 * MiB, 7), method: 0 },
      { name: 'c.txt', data: new TextEncoder().encode('c') },
    ]);
    const { blob, stats } = counted(zip);
    const entries = await directoryOf(blob);
    expect(entries.map((e) => [e.name, e.size])).toEqual([
      ['a.bin', 6 * MiB],
      ['b.bin', 6 * MiB],
      ['c.txt', 1],
    ]);
    expect(stats.read).toBeLessThan(70 * 1024);
  });

  it('reads a ZIP64 end record and ZIP64 extra fields', async () => {
    const zip = buildZip(
      [
        { name: 'a.txt', data: new TextEncoder().encode('alpha'), zip64Extra: true },
        { name: 'b.txt', data: new TextEncoder().encode('beta') },
      ],
      { zip64End: true },
    );
    const blob = new Blob([zip]);
    const entries = await directoryOf(blob);
    const texts = await Promise.all(entries.map((e) => readBlobZipEntry(blob, e)));
    expect(texts.map((t) => t.ok && new TextDecoder().decode(t.value))).toEqual(['alpha', 'beta']);
  });

  it('refuses what is not a zip archive, saying why', async () => {
    expect(await readBlobZipDirectory(new Blob([noise(100_000)]))).toEqual({
      ok: false,
      error: 'no end of central directory record was found',
    });
    expect(await readBlobZipDirectory(new Blob([]))).toMatchObject({ ok: false });
  });
});

describe('blobZipEntryChunks', () => {
  const big = concat(noise(5 * MiB), new Uint8Array(3 * MiB), noise(2 * MiB, 11));

  it('yields a multi-MiB deflated entry in chunks equal to the original, reading slices', async () => {
    const zip = buildZip([
      { name: 'first.txt', data: new TextEncoder().encode('before') },
      { name: 'big.bin', data: big },
    ]);
    const { blob, stats } = counted(zip);
    const entry = (await directoryOf(blob))[1]!;
    expect(entry.compressedSize).toBeGreaterThan(6 * MiB);
    stats.largest = 0;
    const chunks = await collect(blobZipEntryChunks(blob, entry, MiB));
    expect(chunks.length).toBeGreaterThan(10);
    expect(stats.largest).toBe(MiB);
    expect(same(concat(...chunks), big)).toBe(true);
  });

  it('yields a stored entry slice by slice', async () => {
    const zip = buildZip([{ name: 'big.bin', data: big, method: 0, zip64Extra: true }]);
    const blob = new Blob([zip]);
    const [entry] = await directoryOf(blob);
    const chunks = await collect(blobZipEntryChunks(blob, entry!));
    expect(chunks.map((c) => c.length)).toEqual([4 * MiB, 4 * MiB, 2 * MiB]);
    expect(same(concat(...chunks), big)).toBe(true);
  });

  it('throws a clear error for an entry whose data lies about its size', async () => {
    const zip = buildZip([{ name: 'x.bin', data: noise(3 * MiB), declaredSize: 2 * MiB }]);
    const blob = new Blob([zip]);
    const [entry] = await directoryOf(blob);
    await expect(collect(blobZipEntryChunks(blob, entry!, 256 * 1024))).rejects.toThrow(
      'This is not a readable zip archive (`x.bin` inflates to more than the 2097152 bytes it declares).',
    );
    const short = buildZip([{ name: 'y.bin', data: noise(1000), declaredSize: 2000 }]);
    const [shortEntry] = await directoryOf(new Blob([short]));
    await expect(collect(blobZipEntryChunks(new Blob([short]), shortEntry!))).rejects.toThrow(
      '`y.bin` inflates to 1000 bytes, not the 2000 it declares',
    );
  });

  it('throws for an unknown method or a bad local header before reading any data', async () => {
    const zip = buildZip([{ name: 'x.xz', data: noise(100), method: 95 }]);
    const [entry] = await directoryOf(new Blob([zip]));
    await expect(collect(blobZipEntryChunks(new Blob([zip]), entry!))).rejects.toThrow(
      'compression method 95',
    );
    const broken = buildZip([{ name: 'a.txt', data: noise(100) }]);
    const [a] = await directoryOf(new Blob([broken]));
    broken[1] = 0;
    await expect(collect(blobZipEntryChunks(new Blob([broken]), a!))).rejects.toThrow(
      'the local header of `a.txt` is malformed',
    );
    expect(await readBlobZipEntry(new Blob([broken]), a!)).toEqual({
      ok: false,
      error: 'the local header of `a.txt` is malformed',
    });
  });
});
