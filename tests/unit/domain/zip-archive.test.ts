import { deflateSync, strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import {
  entryDataOffset,
  inflateEntry,
  locateCentralDirectory,
  readZipEntry,
  ZIP_TAIL_BYTES,
  zipEntries,
  zipEntryInflater,
  type ZipEntry,
} from '$lib/domain/zip-archive';
import { buildZip, crc32 } from '../../support/zip-builder';

/** Large byte arrays compared as base64 text: an element-wise deep equality takes seconds under load. */
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const text = (s: string) => new TextEncoder().encode(s);

/** Bytes that do not compress. */
const noise = (n: number) => {
  const out = new Uint8Array(n);
  let x = 2463534242;
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

const entriesOf = (zip: Uint8Array): ZipEntry[] => {
  const r = zipEntries(zip);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

/** Every entry's data by name, or the first reason one cannot be read. */
const contents = (zip: Uint8Array): Record<string, string> | string => {
  const r = zipEntries(zip);
  if (!r.ok) return r.error;
  const out: Record<string, string> = {};
  for (const entry of r.value) {
    const data = readZipEntry(zip, entry);
    if (!data.ok) return data.error;
    out[entry.name] = new TextDecoder().decode(data.value);
  }
  return out;
};

const reason = (zip: Uint8Array): string => {
  const r = contents(zip);
  if (typeof r !== 'string') throw new Error(`read as ${JSON.stringify(r)}`);
  return r;
};

/** The offset of the record starting with `signature`, searched from `from` on. */
const find = (zip: Uint8Array, signature: number, from = 0) => {
  const view = new DataView(zip.buffer, zip.byteOffset);
  for (let i = from; i + 4 <= zip.length; i++) if (view.getUint32(i, true) === signature) return i;
  throw new Error('not found');
};
const CENTRAL = 0x02014b50;
const EOCD = 0x06054b50;

describe('zipEntries', () => {
  it('lists every entry in order with its method, sizes, offset and CRC', () => {
    const zip = zipSync({
      'a/': new Uint8Array(0),
      'a/x.js': [strToU8('xxxxxxxxxx'), { comment: 'a comment', extra: { 0xcafe: strToU8('extra') } }],
      'é.txt': [strToU8('utf-8 name'), { level: 0 }],
    });
    const entries = entriesOf(zip);
    expect(
      entries.map(({ name, method, size, directory, symlink, encrypted }) => ({
        name,
        method,
        size,
        directory,
        symlink,
        encrypted,
      })),
    ).toEqual([
      { name: 'a/', method: 8, size: 0, directory: true, symlink: false, encrypted: false },
      { name: 'a/x.js', method: 8, size: 10, directory: false, symlink: false, encrypted: false },
      { name: 'é.txt', method: 0, size: 10, directory: false, symlink: false, encrypted: false },
    ]);
    expect(entries[1]!.crc32).toBe(crc32(strToU8('xxxxxxxxxx')));
    expect(entries[2]!.compressedSize).toBe(10);
    expect(entries[0]!.localHeaderOffset).toBe(0);
    expect(contents(zip)).toEqual({ 'a/': '', 'a/x.js': 'xxxxxxxxxx', 'é.txt': 'utf-8 name' });
  });

  it('reads an empty archive as no entries', () => {
    expect(zipEntries(zipSync({}))).toEqual({ ok: true, value: [] });
  });

  it('marks a Unix (or OS X) symlink entry, by its mode', () => {
    const zip = zipSync({
      'l.js': [strToU8('target.js'), { os: 3, attrs: (0o120777 << 16) >>> 0 }],
      'm.js': [strToU8('target.js'), { os: 19, attrs: (0o120777 << 16) >>> 0 }],
      'socket.js': [strToU8('x'), { os: 3, attrs: (0o140777 << 16) >>> 0 }],
      'dos.js': [strToU8('x'), { os: 0, attrs: (0o120777 << 16) >>> 0 }],
      'file.js': [strToU8('x'), { os: 3, attrs: (0o100644 << 16) >>> 0 }],
    });
    expect(
      entriesOf(zip)
        .filter((e) => e.symlink)
        .map((e) => e.name),
    ).toEqual(['l.js', 'm.js']);
  });

  it('reads a name without the UTF-8 flag as Latin-1, as fflate does', () => {
    const zip = zipSync({ 'caf\u00e9.js': strToU8('x') });
    const view = new DataView(zip.buffer);
    const record = find(zip, CENTRAL);
    view.setUint16(record + 8, view.getUint16(record + 8, true) & ~0x800, true);
    expect(entriesOf(zip).map((e) => e.name)).toEqual(['caf\u00c3\u00a9.js']);
  });

  it('reads a ZIP64 end record', () => {
    const zip = buildZip(
      [
        { name: 'a.txt', data: text('alpha') },
        { name: 'b.txt', data: text('beta'), method: 0 },
      ],
      { zip64End: true },
    );
    expect(contents(zip)).toEqual({ 'a.txt': 'alpha', 'b.txt': 'beta' });
  });

  it('applies ZIP64 extra fields under an ordinary end record', () => {
    const zip = buildZip([
      { name: 'first.txt', data: text('first') },
      { name: 'card.json', data: text('{"spec":"chara_card_v3"}'), zip64Extra: true },
      { name: 'stored.bin', data: noise(300), method: 0, zip64Extra: true },
    ]);
    const [first, card, stored] = entriesOf(zip);
    expect(card).toMatchObject({ size: 24, localHeaderOffset: find(zip, 0x04034b50, 1) });
    expect(card!.compressedSize).toBeLessThan(0xffffffff);
    expect(stored).toMatchObject({ size: 300, compressedSize: 300 });
    expect(readZipEntry(zip, first!)).toEqual({ ok: true, value: text('first') });
    expect(readZipEntry(zip, card!)).toEqual({ ok: true, value: text('{"spec":"chara_card_v3"}') });
    expect(readZipEntry(zip, stored!)).toEqual({ ok: true, value: noise(300) });
  });

  it('reads only the saturated fields from a ZIP64 extra field, in order', () => {
    const entries = [
      { name: 'a.txt', data: text('aaaa') },
      { name: 'offset-only', data: text('offset'), zip64Extra: ['offset' as const] },
      { name: 'size-only', data: text('size'), zip64Extra: ['size' as const] },
      { name: 'sizes', data: noise(50), zip64Extra: ['size' as const, 'compressedSize' as const] },
    ];
    const zip = buildZip(entries);
    const plain = entriesOf(buildZip(entries.map(({ name, data }) => ({ name, data }))));
    const read = entriesOf(zip);
    expect(read.map((e) => [e.size, e.compressedSize])).toEqual(plain.map((e) => [e.size, e.compressedSize]));
    expect(contents(zip)).toEqual({
      'a.txt': 'aaaa',
      'offset-only': 'offset',
      'size-only': 'size',
      sizes: new TextDecoder().decode(noise(50)),
    });
  });

  it('refuses saturated sizes without a ZIP64 extra field holding them', () => {
    const zip = buildZip([{ name: 'a.txt', data: text('a') }]);
    new DataView(zip.buffer).setUint32(find(zip, CENTRAL) + 24, 0xffffffff, true);
    expect(reason(zip)).toBe('`a.txt` declares ZIP64 sizes without a ZIP64 extra field holding them');
  });

  it('reads entries with data descriptors by their central directory sizes', () => {
    const zip = buildZip([
      { name: 'a.txt', data: text('deflated with a descriptor'), dataDescriptor: true },
      { name: 'b.txt', data: text('stored with a descriptor'), method: 0, dataDescriptor: true },
      { name: 'c.txt', data: text('after them') },
    ]);
    expect(contents(zip)).toEqual({
      'a.txt': 'deflated with a descriptor',
      'b.txt': 'stored with a descriptor',
      'c.txt': 'after them',
    });
  });

  it('finds the central directory past a comment and locates it from a tail alone', () => {
    const zip = concat(zipSync({ 'a.js': strToU8('a') }), new Uint8Array(0));
    const withComment = zip.slice();
    const e = find(withComment, EOCD);
    const long = concat(withComment, noise(60000));
    new DataView(long.buffer).setUint16(e + 20, 60000, true);
    expect(contents(long)).toEqual({ 'a.js': 'a' });
    const big = concat(noise(200000), long);
    // Offsets in `big` are shifted, so only the location is checked: from the tail, not the whole.
    const tailOffset = big.length - ZIP_TAIL_BYTES;
    const located = locateCentralDirectory(big.subarray(tailOffset), tailOffset, big.length);
    expect(located).toEqual({ ok: true, value: { offset: find(zip, CENTRAL), end: 200000 + e, entries: 1 } });
  });

  it.each([
    ['no bytes', new Uint8Array(0), 'no end of central directory record'],
    ['21 bytes', new Uint8Array(21), 'no end of central directory record'],
    [
      'an end record over 65,557 bytes from the end',
      concat(zipSync({ 'a.js': strToU8('a') }), new Uint8Array(65536)),
      'no end of central directory record',
    ],
    [
      'saturated end record fields without a ZIP64 record',
      (() => {
        const zip = zipSync({ 'a.js': strToU8('a') });
        new DataView(zip.buffer).setUint16(find(zip, EOCD) + 10, 0xffff, true);
        return zip;
      })(),
      'declares a ZIP64 end of central directory record, but none was found',
    ],
    [
      'a ZIP64 locator pointing nowhere',
      (() => {
        const zip = buildZip([{ name: 'a.js', data: text('a') }], { zip64End: true });
        const view = new DataView(zip.buffer);
        view.setUint32(find(zip, 0x07064b50) + 12, 1, true); // the record offset's high half
        return zip;
      })(),
      'locator points to no ZIP64 end record',
    ],
    ['a truncated archive', zipSync({ 'a.js': strToU8('a'.repeat(100)) }).slice(0, 40), 'no end of central'],
    [
      'a central directory cut short',
      (() => {
        const zip = zipSync({ 'a.js': strToU8('a'), 'b.js': strToU8('b') });
        const e = find(zip, EOCD);
        return concat(zip.subarray(0, e - 3), zip.subarray(e));
      })(),
      'its central directory is cut short',
    ],
    [
      'a broken central record',
      (() => {
        const zip = zipSync({ 'a.js': strToU8('a'), 'b.js': strToU8('b') });
        zip[find(zip, CENTRAL)] = 0;
        return zip;
      })(),
      'its central directory entry 1 of 2 is malformed',
    ],
  ])('refuses %s', (_, zip, why) => {
    expect(reason(zip)).toContain(why);
  });
});

describe('readZipEntry', () => {
  it('reads stored and deflated entries of any content', () => {
    const data = noise(100_000);
    const zip = buildZip([
      { name: 'stored.bin', data, method: 0 },
      { name: 'deflated.bin', data },
      { name: 'zeros.bin', data: new Uint8Array(300_000) },
      { name: 'empty', data: new Uint8Array(0), method: 0 },
    ]);
    const [stored, deflated, zeros, empty] = entriesOf(zip);
    const read = (entry: ZipEntry) => {
      const r = readZipEntry(zip, entry);
      return r.ok ? base64(r.value) : r.error;
    };
    expect(read(stored!)).toBe(base64(data));
    expect(read(deflated!)).toBe(base64(data));
    expect(read(zeros!)).toBe(base64(new Uint8Array(300_000)));
    expect(read(empty!)).toBe('');
  });

  it.each([
    ['deflated, declaring more than it holds', 8, 1001, 'inflates to 1000 bytes, not the 1001 it declares'],
    ['deflated, declaring less than it holds', 8, 999, 'inflates to more than the 999 bytes it declares'],
    ['stored, declaring more than it holds', 0, 1001, 'is stored with 1000 bytes but declares 1001'],
    ['stored, declaring less than it holds', 0, 999, 'is stored with 1000 bytes but declares 999'],
  ])('refuses an entry %s', (_, method, declaredSize, why) => {
    const zip = buildZip([{ name: 'x.bin', data: noise(1000), method, declaredSize }]);
    expect(reason(zip)).toBe(`\`x.bin\` ${why}`);
  });

  it('never yields past the declared size of a bomb', () => {
    const zip = buildZip([{ name: 'bomb', data: new Uint8Array(50 * 1024 * 1024), declaredSize: 100 }]);
    expect(zip.length).toBeLessThan(100_000);
    expect(reason(zip)).toBe('`bomb` inflates to more than the 100 bytes it declares');
  });

  it('refuses a broken deflate stream', () => {
    const compressed = deflateSync(noise(1000));
    compressed[0] = 0xff; // a final block of the reserved type 3
    const zip = buildZip([{ name: 'x.bin', data: noise(1000), compressed }]);
    expect(reason(zip)).toMatch(/^the data of `x\.bin` cannot be inflated \(.+\)$/);
  });

  it('refuses a truncated deflate stream', () => {
    const compressed = deflateSync(noise(1000)).subarray(0, 500);
    const zip = buildZip([{ name: 'x.bin', data: noise(1000), compressed }]);
    expect(reason(zip)).toMatch(/^the data of `x\.bin` cannot be inflated/);
  });

  it('refuses an unknown method and an encrypted entry when read, not when listed', () => {
    const zip = buildZip([{ name: 'x.bz2', data: text('not bzip2'), method: 12 }]);
    expect(entriesOf(zip)).toHaveLength(1);
    expect(reason(zip)).toBe(
      '`x.bz2` uses compression method 12; only stored and deflated entries can be read',
    );
    const locked = buildZip([{ name: 'x.txt', data: text('x') }]);
    const view = new DataView(locked.buffer);
    const record = find(locked, CENTRAL);
    view.setUint16(record + 8, view.getUint16(record + 8, true) | 1, true);
    expect(reason(locked)).toBe('`x.txt` is encrypted');
  });

  it('refuses a bad local header', () => {
    const zip = buildZip([{ name: 'x.txt', data: text('x') }]);
    zip[0] = 0;
    expect(reason(zip)).toBe('the local header of `x.txt` is malformed');
    const [entry] = entriesOf(zip);
    expect(entryDataOffset(new Uint8Array(10), entry!, zip.length)).toEqual({
      ok: false,
      error: 'the local header of `x.txt` is cut short',
    });
  });

  it('refuses a local header whose name and extra run the data past the archive', () => {
    const zip = buildZip([{ name: 'x.txt', data: text('x') }]);
    new DataView(zip.buffer).setUint16(28, 0xffff, true);
    expect(reason(zip)).toBe('the data of `x.txt` is cut short');
  });

  it('takes the data offset from the local header, whose extra field may differ', () => {
    const zip = buildZip([{ name: 'a.txt', data: text('local extra') }]);
    // A 4-byte padding extra field in the local header only (as zipalign writes).
    const padded = concat(zip.subarray(0, 30 + 5), new Uint8Array([0xfe, 0xca, 0, 0]), zip.subarray(35));
    const view = new DataView(padded.buffer);
    view.setUint16(28, 4, true);
    const e = find(padded, EOCD);
    view.setUint32(e + 16, view.getUint32(e + 16, true) + 4, true);
    expect(contents(padded)).toEqual({ 'a.txt': 'local extra' });
  });
});

describe('zipEntryInflater', () => {
  const entryFor = (data: Uint8Array, compressed: Uint8Array, size = data.length): ZipEntry => ({
    name: 'x.bin',
    method: 8,
    compressedSize: compressed.length,
    size,
    localHeaderOffset: 0,
    crc32: crc32(data),
    encrypted: false,
    directory: false,
    symlink: false,
  });

  it('inflates pieces pushed one by one into the whole', () => {
    const data = concat(noise(200_000), new Uint8Array(200_000), noise(50_000));
    const compressed = deflateSync(data);
    const inflater = zipEntryInflater(entryFor(data, compressed));
    if (!inflater.ok) throw new Error(inflater.error);
    const out: Uint8Array[] = [];
    for (let at = 0; at < compressed.length; at += 777) {
      const end = Math.min(compressed.length, at + 777);
      const r = inflater.value.push(compressed.subarray(at, end), end === compressed.length);
      if (!r.ok) throw new Error(r.error);
      out.push(...r.value);
    }
    expect(base64(concat(...out))).toBe(base64(data));
  });

  it('stops at the first piece that yields past the declared size, and stays failed', () => {
    const data = new Uint8Array(10 * 1024 * 1024);
    const compressed = deflateSync(data);
    const inflater = zipEntryInflater(entryFor(data, compressed, 1000));
    if (!inflater.ok) throw new Error(inflater.error);
    const half = compressed.length >> 1;
    const first = inflater.value.push(compressed.subarray(0, half), false);
    expect(first).toEqual({ ok: false, error: '`x.bin` inflates to more than the 1000 bytes it declares' });
    expect(inflater.value.push(compressed.subarray(half), true)).toEqual(first);
  });

  it('refuses more or less compressed data than declared', () => {
    const data = noise(100);
    const compressed = deflateSync(data);
    const more = zipEntryInflater(entryFor(data, compressed.subarray(1)));
    expect(more.ok && more.value.push(compressed, true)).toEqual({
      ok: false,
      error: '`x.bin` holds more data than it declares',
    });
    const less = zipEntryInflater(entryFor(data, compressed));
    expect(less.ok && less.value.push(compressed.subarray(1), true)).toEqual({
      ok: false,
      error: 'the data of `x.bin` is cut short',
    });
  });

  it('is refused for an unknown method', () => {
    const data = noise(10);
    expect(zipEntryInflater({ ...entryFor(data, data), method: 14 }).ok).toBe(false);
    expect(inflateEntry({ ...entryFor(data, data), method: 14 }, data).ok).toBe(false);
  });
});
