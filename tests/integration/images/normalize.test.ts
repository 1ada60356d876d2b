import { deflateSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import type { CodecWasm } from '$lib/adapters/images/codecs';
import { chunk } from '../../support/png-card';
import { gifFile, ihdr, PNG_SIGNATURE, pngFile } from '../../support/image-headers';
import {
  decode,
  encodeJpeg,
  encodePng,
  encodeWebp,
  nodeWasm,
  noise,
  pixel,
  rgba,
  withOrientation,
} from '../../support/image-codecs';

/** The real codecs in Node, on files made here with the codecs themselves. */
const normalizer = new JsquashImageNormalizer({ loadWasm: nodeWasm });
const normalized = async (bytes: Uint8Array) => {
  const result = await normalizer.normalize(bytes);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
};
const refusal = async (bytes: Uint8Array, on = normalizer) => {
  const result = await on.normalize(bytes);
  if (result.ok) throw new Error('normalized');
  return result.error;
};
/** Each channel within `tolerance` of `expected` (JPEG is lossy). */
const near = (actual: number[], expected: number[], tolerance = 6) =>
  expect(actual.slice(0, 3).map((c, i) => Math.abs(c - expected[i]!) <= tolerance)).toEqual([
    true,
    true,
    true,
  ]);

const gradient = (w: number, h: number, alpha = 255) => rgba(w, h, (x, y) => [x % 256, y % 256, 128, alpha]);

describe('kept byte for byte', () => {
  it('a small PNG', async () => {
    const png = await encodePng(gradient(300, 200, 200));
    const out = await normalized(png);
    expect(out).toEqual({ bytes: png, mimeType: 'image/png', width: 300, height: 200, kept: true });
    expect(out.bytes).toBe(png);
  });

  it('a WebP', async () => {
    const webp = await encodeWebp(gradient(400, 300));
    expect(await normalized(webp)).toEqual({
      bytes: webp,
      mimeType: 'image/webp',
      width: 400,
      height: 300,
      kept: true,
    });
  });

  it('a JPEG at the edge, with EXIF orientation 1', async () => {
    const jpeg = withOrientation(await encodeJpeg(gradient(1280, 720), 85), 1);
    expect(await normalized(jpeg)).toEqual({
      bytes: jpeg,
      mimeType: 'image/jpeg',
      width: 1280,
      height: 720,
      kept: true,
    });
  });
});

describe('converted to JPEG quality 85', () => {
  it('a 2000 × 1000 PNG with alpha: 1280 × 640, transparency flattened onto white', async () => {
    // Left quarter transparent black, next quarter half-transparent black, then opaque red and blue.
    const colours = [
      [0, 0, 0, 0],
      [0, 0, 0, 128],
      [255, 0, 0, 255],
      [0, 0, 255, 255],
    ];
    const png = await encodePng(rgba(2000, 1000, (x) => colours[Math.floor(x / 500)]!));
    const out = await normalized(png);
    expect(out).toMatchObject({ mimeType: 'image/jpeg', width: 1280, height: 640, kept: false });
    const image = await decode('jpeg', out.bytes);
    expect([image.width, image.height]).toEqual([1280, 640]);
    near(pixel(image, 160, 320), [255, 255, 255]);
    near(pixel(image, 480, 320), [127, 127, 127]);
    near(pixel(image, 800, 320), [255, 0, 0], 12);
    near(pixel(image, 1120, 320), [0, 0, 255], 12);
    expect(pixel(image, 160, 320)[3]).toBe(255);
  });

  it('a JPEG over 1,000,000 bytes but within the edge: same size, fewer bytes', async () => {
    const jpeg = await encodeJpeg(noise(1280, 960, 60), 100);
    expect(jpeg.byteLength).toBeGreaterThan(1_000_000);
    const out = await normalized(jpeg);
    expect(out).toMatchObject({ mimeType: 'image/jpeg', width: 1280, height: 960, kept: false });
    expect(out.bytes.byteLength).toBeLessThanOrEqual(1_000_000);
  });

  it('a palette PNG with a transparent entry, over the edge', async () => {
    const rows = Buffer.alloc(1500 * (1 + 3000));
    for (let y = 0; y < 1500; y++) rows.fill(y < 750 ? 0 : 1, y * 3001 + 1, (y + 1) * 3001);
    const png = new Uint8Array([
      ...PNG_SIGNATURE,
      ...ihdr(3000, 1500, 8, 3),
      ...chunk('PLTE', Buffer.from([0, 128, 0, 0, 0, 0])),
      ...chunk('tRNS', Buffer.from([255, 0])),
      ...chunk('IDAT', deflateSync(rows)),
      ...chunk('IEND', Buffer.alloc(0)),
    ]);
    const image = await decode('jpeg', (await normalized(png)).bytes);
    expect([image.width, image.height]).toEqual([1280, 640]);
    near(pixel(image, 640, 100), [0, 128, 0]);
    near(pixel(image, 640, 540), [255, 255, 255]);
  });

  it.each([
    [6, 100, 200, [90, 10]],
    [8, 100, 200, [10, 190]],
    [3, 200, 100, [190, 90]],
  ])('an EXIF orientation %i JPEG, turned upright', async (orientation, width, height, [x, y]) => {
    // 200 × 100 as stored, its top-left corner red, the rest blue.
    const stored = rgba(200, 100, (x, y) => (x < 40 && y < 40 ? [255, 0, 0, 255] : [0, 0, 255, 255]));
    const jpeg = withOrientation(await encodeJpeg(stored, 95), orientation);
    const out = await normalized(jpeg);
    expect(out).toMatchObject({ mimeType: 'image/jpeg', width, height, kept: false });
    const image = await decode('jpeg', out.bytes);
    expect([image.width, image.height]).toEqual([width, height]);
    near(pixel(image, x!, y!), [255, 0, 0], 30);
    near(pixel(image, width - 1 - x!, height - 1 - y!), [0, 0, 255], 30);
  });
});

describe('refused', () => {
  it('noise still over 1,000,000 bytes as a 1280 × 1280 JPEG: too_large', async () => {
    expect(await refusal(await encodePng(noise(1280, 1280)))).toEqual({
      kind: 'too_large',
      message: expect.stringMatching(
        /^The image is still 1,\d{3},\d{3} bytes after conversion to a 1,280 × 1,280 JPEG, over Hearth's limit of 1,000,000 bytes\.$/,
      ),
    });
  });

  it('a truncated PNG and a truncated JPEG: undecodable', async () => {
    const png = await encodePng(gradient(300, 200));
    const jpeg = await encodeJpeg(gradient(300, 200), 85);
    for (const [file, name] of [
      [png, 'PNG'],
      [jpeg, 'JPEG'],
    ] as const) {
      expect(await refusal(file.slice(0, file.length >> 1))).toEqual({
        kind: 'undecodable',
        message: `The ${name} image could not be decoded: the file is cut short.`,
      });
    }
  });

  it('a truncated WebP: undecodable', async () => {
    const webp = await encodeWebp(gradient(300, 200), true);
    expect(await refusal(webp.slice(0, webp.length >> 1))).toMatchObject({ kind: 'undecodable' });
  });

  it('a 30,000 × 30,000 px bomb in a few dozen bytes, before any codec loads', async () => {
    const loadWasm = vi.fn(nodeWasm);
    const fresh = new JsquashImageNormalizer({ loadWasm });
    const bomb = pngFile(30000, 30000);
    expect(bomb.byteLength).toBeLessThan(1024);
    const started = performance.now();
    expect(await refusal(bomb, fresh)).toMatchObject({ kind: 'bomb' });
    expect(performance.now() - started).toBeLessThan(50);
    expect(loadWasm).not.toHaveBeenCalled();
  });

  it('a GIF and a file that is no image: unsupported, before any codec loads', async () => {
    const loadWasm = vi.fn(nodeWasm);
    const fresh = new JsquashImageNormalizer({ loadWasm });
    expect(await refusal(gifFile(10, 10), fresh)).toEqual({
      kind: 'unsupported',
      message: 'The image is a GIF, which Hearth cannot pass on: only PNG, JPEG and WebP are supported.',
    });
    expect(await refusal(new TextEncoder().encode('%PDF-1.7'), fresh)).toMatchObject({ kind: 'unsupported' });
    expect(loadWasm).not.toHaveBeenCalled();
  });

  describe('PngSuite-style corrupt PNGs', async () => {
    const good = await encodePng(gradient(32, 32));
    const flipped = (at: number) => good.map((b, i) => (i === at ? b ^ 0x01 : b));
    const rebuilt = (...chunks: Buffer[]) =>
      new Uint8Array([...PNG_SIGNATURE, ...chunks.flatMap((c) => [...c]), ...chunk('IEND', Buffer.alloc(0))]);
    const idat = chunk('IDAT', deflateSync(Buffer.alloc(33 * 32 * 4)));
    it.each([
      ['xhdn: IHDR checksum', flipped(29), 'the file is damaged (a checksum does not match)'],
      ['xcsn: IDAT checksum', flipped(good.length - 13), 'the file is damaged (a checksum does not match)'],
      ['xc1n: colour type 1', rebuilt(ihdr(32, 32, 8, 1), idat), 'its header is damaged or cut short'],
      ['xd3n: bit depth 3', rebuilt(ihdr(32, 32, 3, 2), idat), 'its header is damaged or cut short'],
      [
        'xdtn: no IDAT',
        rebuilt(ihdr(32, 32)),
        "the file is damaged or uses a feature Hearth's decoder does not support",
      ],
      [
        'IDAT not zlib',
        rebuilt(ihdr(32, 32), chunk('IDAT', Buffer.alloc(64, 0xab))),
        "the file is damaged or uses a feature Hearth's decoder does not support",
      ],
    ])('%s: undecodable', async (_, bytes, why) => {
      expect(await refusal(bytes)).toEqual({
        kind: 'undecodable',
        message: `The PNG image could not be decoded: ${why}.`,
      });
    });

    it('xs1n: a damaged signature is no PNG: unsupported', async () => {
      expect(await refusal(flipped(0))).toMatchObject({ kind: 'unsupported' });
    });
  });

  it('damaged files of every format, cut and changed anywhere: an answer each, never a crash', async () => {
    const files = [
      await encodePng(gradient(64, 48, 180)),
      await encodeJpeg(gradient(64, 48), 85),
      await encodeWebp(gradient(64, 48)),
      await encodeWebp(gradient(64, 48), true),
    ];
    let seed = 15;
    const next = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    const kinds = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const file = files[i % files.length]!;
      const bytes = file.slice(0, next(4) ? file.length : next(file.length));
      for (let changes = next(4); changes > 0; changes--) bytes[next(bytes.length)] = next(256);
      const result = await normalizer.normalize(bytes);
      kinds.add(result.ok ? 'ok' : result.error.kind);
    }
    expect([...kinds].sort()).toEqual(['ok', 'undecodable', 'unsupported']);
  });

  it('and the decoders still work after all of that', async () => {
    expect(await normalized(await encodePng(gradient(20, 20)))).toMatchObject({ kept: true });
    expect(await normalized(await encodeJpeg(gradient(20, 20), 85))).toMatchObject({ kept: true });
  });
});

describe('system failures reject, they are not the image’s fault', () => {
  const failing = (which: CodecWasm) =>
    new JsquashImageNormalizer({
      loadWasm: (name) =>
        name === which ? Promise.reject(new Error(`${name} did not load`)) : nodeWasm(name),
    });

  it('an encoder that cannot load', async () => {
    const png = await encodePng(gradient(2000, 100));
    await expect(failing('jpeg-encode').normalize(png)).rejects.toThrow('jpeg-encode did not load');
  });

  it('a decoder that cannot load, and then can', async () => {
    let attempts = 0;
    const flaky = new JsquashImageNormalizer({
      loadWasm: (name) =>
        name === 'png' && attempts++ === 0 ? Promise.reject(new Error('offline')) : nodeWasm(name),
    });
    const png = await encodePng(gradient(20, 20));
    await expect(flaky.normalize(png)).rejects.toThrow('offline');
    expect(await flaky.normalize(png)).toMatchObject({ ok: true, value: { kept: true } });
  });
});
