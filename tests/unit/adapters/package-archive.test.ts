import { strToU8, zipSync, type Zippable } from 'fflate';
import { describe, expect, it } from 'vitest';
import { looksLikeZip, readArchive } from '$lib/adapters/packages/archive';
import type { PackageLimits } from '$lib/domain/package-files';

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

  it('never inflates an entry past the size it declares', () => {
    const zip = zipSync({ 'bomb.bin': new Uint8Array(2 * 1024 * 1024) });
    const [record] = centralRecords(zip);
    new DataView(zip.buffer).setUint32(record! + 24, 1000, true); // declared small, so no ratio to judge
    const r = readArchive(zip, limits);
    expect(r.ok && r.value.map((f) => [f.path, f.bytes.byteLength])).toEqual([['bomb.bin', 1000]]);
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
