import { strToU8, zipSync, type Zippable } from 'fflate';
import { describe, expect, it } from 'vitest';
import { looksLikeZip, readArchive } from '$lib/adapters/packages/archive';
import type { PackageLimits } from '$lib/domain/package-files';
import { buildZip } from '../../support/zip-builder';

const limits: PackageLimits = {
  files: 10,
  fileBytes: 4 * 1024 * 1024,
  totalBytes: 8 * 1024 * 1024,
  compressionRatio: 100,
};

const read = (zip: Uint8Array, l: PackageLimits = limits) => {
  const r = readArchive(zip, l);
  return r.ok ? Object.fromEntries(r.value.map((f) => [f.path, new TextDecoder().decode(f.bytes)])) : r.error;
};

const refusal = (zip: Uint8Array, l: PackageLimits = limits) => {
  const r = readArchive(zip, l);
  expect(r.ok).toBe(false);
  return r.ok ? { code: '', message: '' } : r.error;
};

/** Bytes that do not compress: each entry's compressed size is about its size. */
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

/** The central directory record of each entry (`PK\1\2`), where unzipping reads sizes from. */
const centralRecords = (zip: Uint8Array): number[] => {
  const at: number[] = [];
  for (let i = 0; i + 4 <= zip.length; i++)
    if (zip[i] === 0x50 && zip[i + 1] === 0x4b && zip[i + 2] === 0x01 && zip[i + 3] === 0x02) at.push(i);
  return at;
};

/** The central directory record of the entry named `name`. */
const centralRecord = (zip: Uint8Array, name: string): number => {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const at = centralRecords(zip).find(
    (r) => new TextDecoder().decode(zip.subarray(r + 46, r + 46 + view.getUint16(r + 28, true))) === name,
  );
  if (at === undefined) throw new Error(`no central record for ${name}`);
  return at;
};

const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** Marks an entry as made on `host` (3 = Unix) with `mode` in its external attributes' high bits. */
const withMode = (zip: Uint8Array, name: string, mode: number, host = 3): Uint8Array => {
  const out = zip.slice();
  const view = new DataView(out.buffer);
  const record = centralRecord(out, name);
  view.setUint16(record + 4, (host << 8) | 0x14, true); // "version made by": host, then spec 2.0
  view.setUint32(record + 38, (mode << 16) >>> 0, true);
  return out;
};

/** The offset of the end of central directory record (`PK\5\6`), searched from the end. */
const endRecord = (zip: Uint8Array): number => {
  for (let i = zip.length - 22; i >= 0; i--)
    if (zip[i] === 0x50 && zip[i + 1] === 0x4b && zip[i + 2] === 0x05 && zip[i + 3] === 0x06) return i;
  throw new Error('no end record');
};

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
};

/**
 * The archive in ZIP64 form: a ZIP64 end record and locator before the end record, whose count,
 * size and offset fields are then saturated (0xFFFF / 0xFFFFFFFF) so only the ZIP64 record has them.
 */
const asZip64 = (zip: Uint8Array, { locator = true } = {}): Uint8Array => {
  const e = endRecord(zip);
  const old = new DataView(zip.buffer, zip.byteOffset + e, 22);
  const entries = old.getUint16(10, true);
  const size = old.getUint32(12, true);
  const offset = old.getUint32(16, true);
  const record = new Uint8Array(56);
  const r = new DataView(record.buffer);
  r.setUint32(0, 0x06064b50, true);
  r.setBigUint64(4, 44n, true); // size of the rest of the record
  r.setUint16(12, 45, true); // version made by
  r.setUint16(14, 45, true); // version needed
  r.setBigUint64(24, BigInt(entries), true); // entries on this disk
  r.setBigUint64(32, BigInt(entries), true); // entries in total
  r.setBigUint64(40, BigInt(size), true);
  r.setBigUint64(48, BigInt(offset), true);
  const loc = new Uint8Array(20);
  const l = new DataView(loc.buffer);
  l.setUint32(0, 0x07064b50, true);
  l.setBigUint64(8, BigInt(e), true); // the ZIP64 record takes the end record's place
  l.setUint32(16, 1, true); // disks in total
  const end = zip.slice(e);
  const ev = new DataView(end.buffer);
  ev.setUint16(8, 0xffff, true);
  ev.setUint16(10, 0xffff, true);
  ev.setUint32(12, 0xffffffff, true);
  ev.setUint32(16, 0xffffffff, true);
  return concat(zip.subarray(0, e), record, locator ? loc : new Uint8Array(0), end);
};

describe('readArchive', () => {
  it('reads files back with their paths and bytes', () => {
    const zip = zipSync({
      'manifest.json': strToU8('{"id":"x"}'),
      'index.js': strToU8('export {};'),
      lib: { 'a.js': strToU8('a'), deep: { 'b.mjs': strToU8('b') } },
      'empty.txt': new Uint8Array(0),
    });
    expect(read(zip)).toEqual({
      'manifest.json': '{"id":"x"}',
      'index.js': 'export {};',
      'lib/a.js': 'a',
      'lib/deep/b.mjs': 'b',
      'empty.txt': '',
    });
  });

  it('reads stored (uncompressed) entries', () => {
    const zip = zipSync({ 'a.js': strToU8('stored') }, { level: 0 });
    expect(read(zip)).toEqual({ 'a.js': 'stored' });
  });

  it('keeps binary bytes exactly', () => {
    const bin = noise(1000);
    const r = readArchive(zipSync({ 'x.bin': bin }), limits);
    expect(r.ok && r.value).toEqual([{ path: 'x.bin', bytes: bin }]);
  });

  it('reads an empty archive as no files', () => {
    expect(readArchive(zipSync({}), limits)).toEqual({ ok: true, value: [] });
  });

  it('leaves out folders, __MACOSX and .DS_Store', () => {
    const zip = zipSync({
      'ext/': new Uint8Array(0),
      'ext/lib/': new Uint8Array(0),
      'ext/index.js': strToU8('i'),
      'ext/.DS_Store': strToU8('junk'),
      '.DS_Store': strToU8('junk'),
      '__MACOSX/ext/._index.js': strToU8('junk'),
      'ext/lib/a.js': strToU8('a'),
    });
    expect(read(zip)).toEqual({ 'ext/index.js': 'i', 'ext/lib/a.js': 'a' });
  });

  it('does not count left-out entries against the file limit', () => {
    const zip = zipSync({
      'a/': new Uint8Array(0),
      'a/x.js': strToU8('x'),
      'a/y.js': strToU8('y'),
      'a/.DS_Store': strToU8('junk'),
      '__MACOSX/a/._x.js': strToU8('junk'),
    });
    expect(read(zip, { ...limits, files: 2 })).toEqual({ 'a/x.js': 'x', 'a/y.js': 'y' });
  });

  it('keeps files that only look like metadata', () => {
    const zip = zipSync({
      'x.DS_Store': strToU8('1'),
      'MACOSX/a': strToU8('2'),
      'a/__MACOSX/b': strToU8('3'),
    });
    expect(Object.keys(read(zip)).sort()).toEqual(['MACOSX/a', 'a/__MACOSX/b', 'x.DS_Store']);
  });

  it('accepts exactly the file limit and refuses one more', () => {
    const files = (n: number): Zippable =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}.js`, strToU8(String(i))]));
    expect(Object.keys(read(zipSync(files(3)), { ...limits, files: 3 }))).toHaveLength(3);
    const e = refusal(zipSync(files(4)), { ...limits, files: 3 });
    expect(e.code).toBe('package.too_large');
    expect(e.message).toContain('more than 3 files');
  });

  it('refuses an entry over fileBytes, naming it', () => {
    const zip = zipSync({ 'small.js': noise(100), 'big.bin': noise(2001) }, { level: 0 });
    const e = refusal(zip, { ...limits, fileBytes: 2000 });
    expect(e.code).toBe('package.too_large');
    expect(e.message).toContain('`big.bin`');
  });

  it('accepts an entry of exactly fileBytes', () => {
    const zip = zipSync({ 'x.bin': noise(2000) }, { level: 0 });
    expect(readArchive(zip, { ...limits, fileBytes: 2000 }).ok).toBe(true);
  });

  it('refuses an entry by its declared size, before inflating it', () => {
    const zip = zipSync({ 'a.js': noise(1000) });
    const [record] = centralRecords(zip);
    // Its data is made unreadable: inflating it would fail as an invalid archive.
    const nameLength = zip[26]! | (zip[27]! << 8);
    const extraLength = zip[28]! | (zip[29]! << 8);
    const broken = zip.slice();
    broken[30 + nameLength + extraLength] = 0xff; // a final block of the reserved type 3
    expect(refusal(broken).code).toBe('package.invalid');
    // Declared to inflate to 1 GiB, it is refused for its size and never inflated.
    const view = new DataView(broken.buffer);
    view.setUint32(record! + 24, 1024 * 1024 * 1024, true);
    const e = refusal(broken);
    expect(e.code).toBe('package.too_large');
    expect(e.message).toContain('`a.js` inflates to 1024 MiB');
  });

  it('never inflates an entry past the size it declares, refusing it', () => {
    const zip = zipSync({ 'bomb.bin': new Uint8Array(2 * 1024 * 1024) });
    const [record] = centralRecords(zip);
    new DataView(zip.buffer).setUint32(record! + 24, 1000, true); // declared small, so no ratio to judge
    expect(refusal(zip)).toEqual({
      code: 'package.invalid',
      message:
        'This is not a readable zip archive (`bomb.bin` inflates to more than the 1000 bytes it declares).',
    });
  });

  it('refuses files over totalBytes together', () => {
    const zip = zipSync({ 'a.bin': noise(1500), 'b.bin': noise(1500) }, { level: 0 });
    expect(readArchive(zip, { ...limits, fileBytes: 2000, totalBytes: 3000 }).ok).toBe(true);
    const e = refusal(zip, { ...limits, fileBytes: 2000, totalBytes: 2999 });
    expect(e.code).toBe('package.too_large');
    expect(e.message).toContain('inflates to over');
  });

  it('refuses a large entry that compresses over the ratio', () => {
    const zip = zipSync({ 'bomb.bin': new Uint8Array(2 * 1024 * 1024) });
    expect(zip.length).toBeLessThan(64 * 1024);
    const e = refusal(zip);
    expect(e.code).toBe('package.too_large');
    expect(e.message).toContain('`bomb.bin`');
    expect(e.message).toContain('at most 100 times');
  });

  it('accepts a small entry that compresses as well', () => {
    const r = readArchive(zipSync({ 'zeros.bin': new Uint8Array(1024) }), limits);
    expect(r.ok && r.value).toEqual([{ path: 'zeros.bin', bytes: new Uint8Array(1024) }]);
  });

  it('accepts a large entry that compresses within the ratio', () => {
    const data = noise(128 * 1024);
    const r = readArchive(zipSync({ 'data.bin': data }), limits);
    expect(r.ok && r.value).toEqual([{ path: 'data.bin', bytes: data }]);
  });

  it('refuses a symlink entry, naming it', () => {
    const zip = withMode(
      zipSync({ 'SKILL.md': strToU8('---\n'), 'lib/link.js': strToU8('../../etc/passwd') }),
      'lib/link.js',
      0o120777,
    );
    expect(refusal(zip)).toEqual({
      code: 'package.invalid_path',
      message: '`lib/link.js` is a symbolic link; packages cannot contain links.',
    });
  });

  it('refuses a symlink made by fflate with Unix attributes', () => {
    const zip = zipSync({ 'l.js': [strToU8('target.js'), { os: 3, attrs: (S_IFLNK | 0o777) << 16 }] });
    expect(refusal(zip)).toMatchObject({
      code: 'package.invalid_path',
      message: expect.stringContaining('`l.js`'),
    });
  });

  it('names a symlink with a UTF-8 name', () => {
    const zip = withMode(zipSync({ 'ссылка.js': strToU8('x') }), 'ссылка.js', S_IFLNK | 0o777);
    expect(refusal(zip).message).toBe('`ссылка.js` is a symbolic link; packages cannot contain links.');
  });

  it('refuses symlinks even where entries are otherwise left out', () => {
    const zip = zipSync({ 'a.js': strToU8('a'), '__MACOSX/._a.js': strToU8('x'), 'dir/': new Uint8Array(0) });
    expect(refusal(withMode(zip, '__MACOSX/._a.js', S_IFLNK | 0o777)).code).toBe('package.invalid_path');
    expect(refusal(withMode(zip, 'dir/', S_IFLNK | 0o777)).code).toBe('package.invalid_path');
  });

  it('refuses a symlink before inflating or judging any entry', () => {
    const zip = zipSync({ 'a.js': noise(1000), 'link.js': strToU8('x') });
    const broken = withMode(zip, 'link.js', S_IFLNK | 0o777);
    const nameLength = broken[26]! | (broken[27]! << 8);
    const extraLength = broken[28]! | (broken[29]! << 8);
    broken[30 + nameLength + extraLength] = 0xff; // `a.js` cannot be inflated
    new DataView(broken.buffer).setUint32(centralRecord(broken, 'a.js') + 24, 1024 * 1024 * 1024, true);
    expect(refusal(broken).code).toBe('package.invalid_path');
  });

  it('accepts Unix-made regular files and folders', () => {
    let zip: Uint8Array = zipSync({
      'dir/': new Uint8Array(0),
      'dir/a.js': strToU8('a'),
      'b.js': strToU8('b'),
    });
    zip = withMode(zip, 'dir/', S_IFDIR | 0o755);
    zip = withMode(zip, 'dir/a.js', S_IFREG | 0o644);
    zip = withMode(zip, 'b.js', S_IFREG | 0o755);
    expect(read(zip)).toEqual({ 'dir/a.js': 'a', 'b.js': 'b' });
  });

  it('reads an archive followed by a garbage tail', () => {
    const zip = concat(zipSync({ 'a.js': strToU8('a') }), noise(1000));
    expect(read(zip)).toEqual({ 'a.js': 'a' });
  });

  it('still refuses a symlink in an archive with a garbage tail', () => {
    const zip = concat(withMode(zipSync({ 'a.js': strToU8('a') }), 'a.js', S_IFLNK | 0o777), noise(1000));
    expect(refusal(zip).code).toBe('package.invalid_path');
  });

  it('refuses an archive followed by too long a tail as package.invalid', () => {
    const e = refusal(concat(zipSync({ 'a.js': strToU8('a') }), noise(70000)));
    expect(e.code).toBe('package.invalid');
    expect(e.message).toContain('no end of central directory record');
  });

  it('reads an archive in ZIP64 form and refuses its symlinks', () => {
    const zip = zipSync({ 'a.js': strToU8('a'), 'b.js': strToU8('b') });
    expect(read(asZip64(zip))).toEqual({ 'a.js': 'a', 'b.js': 'b' });
    expect(refusal(asZip64(withMode(zip, 'b.js', S_IFLNK | 0o777))).code).toBe('package.invalid_path');
  });

  it('refuses a ZIP64 locator pointing to no ZIP64 record rather than reading the end record', () => {
    // With the locator's record offset made to point nowhere, the end record's own fields would
    // list one entry and hide the second, a link; the archive is refused instead.
    const plain = zipSync({ 'a.js': strToU8('a'), 'link.js': noise(1000) });
    const offset = new DataView(plain.buffer).getUint32(endRecord(plain) + 16, true);
    const zip = asZip64(withMode(plain, 'link.js', S_IFLNK | 0o777));
    const e = endRecord(zip);
    const view = new DataView(zip.buffer);
    view.setUint16(e + 8, 1, true);
    view.setUint16(e + 10, 1, true);
    view.setUint32(e + 16, offset, true);
    view.setUint32(e - 20 + 12, 1, true);
    const error = refusal(zip);
    expect(error.code).toBe('package.invalid');
    expect(error.message).toContain('locator points to no ZIP64 end record');
  });

  it('reads entries with ZIP64 extra fields under an ordinary end record', () => {
    const zip = buildZip([
      { name: 'SKILL.md', data: strToU8('---\n'), zip64Extra: true },
      { name: 'lib/a.js', data: strToU8('a'), dataDescriptor: true },
    ]);
    expect(read(zip)).toEqual({ 'SKILL.md': '---\n', 'lib/a.js': 'a' });
  });

  it("refuses by the ZIP64 extra field's size, before inflating", () => {
    const zip = buildZip([
      { name: 'big.bin', data: noise(100), zip64Extra: true, declaredSize: 5_000_000_000 },
    ]);
    const e = refusal(zip);
    expect(e.code).toBe('package.too_large');
    expect(e.message).toContain('`big.bin` inflates to 4768.4 MiB');
  });

  it('refuses an entry whose data lies about its size, or uses an unknown method', () => {
    const lies = refusal(buildZip([{ name: 'a.js', data: noise(1000), declaredSize: 1200 }]));
    expect(lies).toEqual({
      code: 'package.invalid',
      message:
        'This is not a readable zip archive (`a.js` inflates to 1000 bytes, not the 1200 it declares).',
    });
    const method = refusal(buildZip([{ name: 'a.js', data: strToU8('a'), method: 12 }]));
    expect(method.code).toBe('package.invalid');
    expect(method.message).toContain('compression method 12');
  });

  it('refuses saturated end record fields without a ZIP64 record as package.invalid', () => {
    const e = refusal(asZip64(zipSync({ 'a.js': strToU8('a') }), { locator: false }));
    expect(e.code).toBe('package.invalid');
    expect(e.message).toContain('ZIP64');
  });

  describe('refuses a malformed central directory as package.invalid', () => {
    const zip = zipSync({ 'a.js': strToU8('a'), 'b.js': strToU8('b') });
    const [first, second] = centralRecords(zip);
    const e = endRecord(zip);
    const patched = (at: number, set: (view: DataView) => void) => {
      const out = zip.slice();
      set(new DataView(out.buffer, at));
      return out;
    };
    it.each([
      // The second record loses its last bytes; the end record still counts two entries.
      ['cut short', concat(zip.subarray(0, e - 3), zip.subarray(e)), 'cut short'],
      ['cut to one record', concat(zip.subarray(0, second!), zip.subarray(e)), 'cut short'],
      [
        'counting more entries than it has',
        patched(e, (v) => (v.setUint16(8, 3, true), v.setUint16(10, 3, true))),
        'cut short',
      ],
      ['with a name running past it', patched(second!, (v) => v.setUint16(28, 200, true)), 'cut short'],
      [
        'with a broken record signature',
        patched(first!, (v) => v.setUint8(0, 0)),
        'entry 1 of 2 is malformed',
      ],
      ['starting past the end record', patched(e, (v) => v.setUint32(16, e + 100, true)), 'cut short'],
      ['spanning disks', patched(e, (v) => v.setUint16(8, 1, true)), 'spans several disks'],
    ])('%s', (_, bytes, reason) => {
      const error = refusal(bytes);
      expect(error.code).toBe('package.invalid');
      expect(error.message).toContain('not a readable zip archive');
      expect(error.message).toContain(reason);
    });
  });

  it.each([
    ['garbage bytes', noise(200)],
    ['no bytes', new Uint8Array(0)],
    ['text', strToU8('this is not a zip archive, just some text')],
    ['a truncated archive', zipSync({ 'a.js': strToU8('a'.repeat(100)) }).slice(0, 40)],
  ])('refuses %s as package.invalid', (_, bytes) => {
    const e = refusal(bytes);
    expect(e.code).toBe('package.invalid');
    expect(e.message).toContain('not a readable zip archive');
  });
});

describe('looksLikeZip', () => {
  it.each([
    ['an archive', zipSync({ 'a.js': strToU8('a') }), true],
    ['an empty archive', zipSync({}), true],
    ['a local file header alone', new Uint8Array([0x50, 0x4b, 0x03, 0x04]), true],
    ['an end record alone', new Uint8Array([0x50, 0x4b, 0x05, 0x06]), true],
    ['a spanned archive marker', new Uint8Array([0x50, 0x4b, 0x07, 0x08]), false],
    ['a central directory record', new Uint8Array([0x50, 0x4b, 0x01, 0x02]), false],
    ['text', strToU8('PK but not a zip'), false],
    ['JavaScript', strToU8('export const x = 1;'), false],
    ['three bytes', new Uint8Array([0x50, 0x4b, 0x03]), false],
    ['no bytes', new Uint8Array(0), false],
  ])('%s: %s', (_, bytes, expected) => expect(looksLikeZip(bytes)).toBe(expected));
});
