import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  IMAGE_LIMITS,
  planImage,
  sniffImage,
  soundImage,
  tooLargeImage,
  undecodableImage,
  type ImageInfo,
} from '$lib/domain/image';
import { chunk } from '../../support/png-card';
import { gifFile, ihdr, jpegFile, PNG_SIGNATURE, pngFile, webpFile } from '../../support/image-headers';

const files = {
  png: (w: number, h: number) => pngFile(w, h),
  jpeg: (w: number, h: number) => jpegFile(w, h),
  // VP8X: 24-bit sizes (plain VP8 and VP8L stop at 16,383).
  webp: (w: number, h: number) => webpFile('VP8X', w, h),
};
const MB = IMAGE_LIMITS.maxBytes;

describe('sniffImage', () => {
  it('reads a PNG IHDR, with alpha from the colour type or a tRNS chunk before IDAT', () => {
    expect(sniffImage(pngFile(640, 480))).toEqual({ format: 'png', width: 640, height: 480, hasAlpha: true });
    expect(sniffImage(pngFile(640, 480, { colour: 2 }))).toMatchObject({ hasAlpha: false });
    const trns = chunk('tRNS', Buffer.from([0, 0, 0, 0, 0, 0]));
    expect(sniffImage(pngFile(640, 480, { colour: 2, before: [trns] }))).toMatchObject({ hasAlpha: true });
    expect(sniffImage(pngFile(4, 4, { colour: 0, depth: 16 }))).toMatchObject({ width: 4, hasAlpha: false });
  });

  it.each([
    ['colour type 1', pngFile(8, 8, { colour: 1 })],
    ['bit depth 3', pngFile(8, 8, { colour: 2, depth: 3 })],
    ['16-bit palette', pngFile(8, 8, { colour: 3, depth: 16 })],
    ['no width', pngFile(0, 8)],
    ['IHDR cut short', pngFile(8, 8).slice(0, 24)],
    ['signature only', new Uint8Array(PNG_SIGNATURE)],
    ['first chunk not IHDR', new Uint8Array([...PNG_SIGNATURE, ...chunk('IDAT', Buffer.alloc(13))])],
  ])('gives no size for a PNG with a bad or missing IHDR: %s', (_, bytes) => {
    expect(sniffImage(bytes)).toEqual({ format: 'png' });
  });

  it('reads a JPEG frame header and its EXIF orientation, big- or little-endian', () => {
    expect(sniffImage(jpegFile(3000, 2000))).toEqual({
      format: 'jpeg',
      width: 3000,
      height: 2000,
      hasAlpha: false,
    });
    expect(sniffImage(jpegFile(3000, 2000, { orientation: 6 }))).toMatchObject({
      width: 3000,
      orientation: 6,
    });
    expect(sniffImage(jpegFile(30, 20, { orientation: 8, little: true }))).toMatchObject({ orientation: 8 });
    expect(sniffImage(jpegFile(30, 20, { orientation: 9 }))).not.toHaveProperty('orientation');
  });

  it('skips stray bytes between JPEG segments, as libjpeg does', () => {
    const whole = jpegFile(300, 200);
    const padded = new Uint8Array([...whole.subarray(0, 2), 0, 0, 0x12, ...whole.subarray(2)]);
    expect(sniffImage(padded)).toMatchObject({ width: 300, height: 200 });
  });

  it('gives no size for a JPEG cut short before its frame header', () => {
    const whole = jpegFile(300, 200, { orientation: 3 });
    expect(sniffImage(whole.slice(0, 40))).toEqual({ format: 'jpeg', hasAlpha: false, orientation: 3 });
    expect(sniffImage(whole.slice(0, 2))).toEqual({ format: 'jpeg', hasAlpha: false });
  });

  it('reads WebP VP8, VP8L and VP8X headers', () => {
    expect(sniffImage(webpFile('VP8 ', 1000, 700))).toEqual({
      format: 'webp',
      width: 1000,
      height: 700,
      hasAlpha: false,
    });
    expect(sniffImage(webpFile('VP8L', 16383, 3, true))).toEqual({
      format: 'webp',
      width: 16383,
      height: 3,
      hasAlpha: true,
    });
    expect(sniffImage(webpFile('VP8X', 20000, 20000, true))).toEqual({
      format: 'webp',
      width: 20000,
      height: 20000,
      hasAlpha: true,
    });
    expect(sniffImage(webpFile('VP8 ', 100, 100).slice(0, 26))).toEqual({ format: 'webp' });
  });

  it('reads a GIF logical screen, and knows nothing else', () => {
    expect(sniffImage(gifFile(400, 300))).toEqual({ format: 'gif', width: 400, height: 300 });
    expect(sniffImage(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toEqual({
      format: 'unknown',
    });
    expect(sniffImage(new Uint8Array())).toEqual({ format: 'unknown' });
  });
});

describe('planImage', () => {
  describe.each(Object.entries(files))('%s', (_, file) => {
    const plan = (w: number, h: number, bytes = 1000) => planImage(sniffImage(file(w, h)), bytes);

    it('keeps an image under and at both limits', () => {
      expect(plan(640, 480)).toEqual({ kind: 'keep' });
      expect(plan(1280, 720, MB)).toEqual({ kind: 'keep' });
      expect(plan(720, 1280, MB)).toEqual({ kind: 'keep' });
    });

    it('converts an image over the edge, to a longer edge of 1280, aspect kept', () => {
      expect(plan(1281, 720)).toEqual({ kind: 'convert', width: 1280, height: 719 });
      expect(plan(2000, 1000)).toEqual({ kind: 'convert', width: 1280, height: 640 });
      expect(plan(1000, 3000)).toEqual({ kind: 'convert', width: 427, height: 1280 });
      expect(plan(16000, 1)).toEqual({ kind: 'convert', width: 1280, height: 1 });
    });

    it(`converts an image over ${MB} bytes without enlarging it`, () => {
      expect(plan(1280, 720, MB + 1)).toEqual({ kind: 'convert', width: 1280, height: 720 });
      expect(plan(300, 200, 5 * MB)).toEqual({ kind: 'convert', width: 300, height: 200 });
    });

    it('refuses a declared size over the decode limits before decoding', () => {
      expect(plan(16385, 100)).toMatchObject({ kind: 'refuse', reason: 'bomb' });
      expect(plan(8000, 7000)).toMatchObject({ kind: 'refuse', reason: 'bomb' });
      expect(plan(8160, 6120)).toMatchObject({ kind: 'convert', width: 1280, height: 960 });
    });
  });

  it('refuses a 30,000 × 30,000 px PNG bomb of a few dozen bytes', () => {
    const bomb = pngFile(30000, 30000);
    expect(bomb.byteLength).toBeLessThan(1024);
    expect(planImage(sniffImage(bomb), bomb.byteLength)).toEqual({
      kind: 'refuse',
      reason: 'bomb',
      message:
        'The image declares 30,000 × 30,000 pixels (900 megapixels), more than Hearth decodes ' +
        '(at most 50 megapixels and 16,384 pixels on a side), so it was refused without decoding it.',
    });
  });

  it('turns a JPEG upright: orientations 5 to 8 swap width and height, and are never kept', () => {
    const jpeg = (w: number, h: number, orientation: number) => sniffImage(jpegFile(w, h, { orientation }));
    expect(planImage(jpeg(4000, 3000, 6), MB * 3)).toEqual({ kind: 'convert', width: 960, height: 1280 });
    expect(planImage(jpeg(800, 600, 6), 1000)).toEqual({ kind: 'convert', width: 600, height: 800 });
    expect(planImage(jpeg(800, 600, 8), 1000)).toEqual({ kind: 'convert', width: 600, height: 800 });
    expect(planImage(jpeg(800, 600, 3), 1000)).toEqual({ kind: 'convert', width: 800, height: 600 });
    expect(planImage(jpeg(800, 600, 1), 1000)).toEqual({ kind: 'keep' });
  });

  it('refuses a GIF as unsupported, whatever its size', () => {
    expect(planImage(sniffImage(gifFile(10, 10)), 50)).toEqual({
      kind: 'refuse',
      reason: 'unsupported',
      message: 'The image is a GIF, which Hearth cannot pass on: only PNG, JPEG and WebP are supported.',
    });
  });

  it('refuses other files as unsupported, and a damaged or cut-short header as undecodable', () => {
    expect(planImage({ format: 'unknown' }, 10)).toMatchObject({ kind: 'refuse', reason: 'unsupported' });
    const header = (info: ImageInfo) => planImage(info, 10);
    expect(header(sniffImage(pngFile(8, 8).slice(0, 20)))).toEqual({
      kind: 'refuse',
      reason: 'undecodable',
      message: 'The PNG image could not be decoded: its header is damaged or cut short.',
    });
    expect(header({ format: 'jpeg', width: 0, height: 10 })).toMatchObject({ reason: 'undecodable' });
    expect(header({ format: 'webp' })).toMatchObject({ reason: 'undecodable' });
  });
});

describe('soundImage', () => {
  const damage = (bytes: Uint8Array, format: ImageInfo['format']) => {
    const sound = soundImage(bytes, format);
    return sound.ok ? null : sound.error;
  };
  const flip = (file: Uint8Array, at: number) => file.map((b, i) => (i === at ? b ^ 0x01 : b));

  it('checks every critical PNG chunk CRC up to IEND', () => {
    const whole = pngFile(8, 8);
    expect(soundImage(whole, 'png')).toEqual({ ok: true, value: whole });
    expect(damage(flip(whole, 29), 'png')).toBe('checksum');
    expect(damage(flip(whole, whole.length - 13), 'png')).toBe('checksum');
    expect(damage(whole.slice(0, whole.length - 12), 'png')).toBe('truncated');
    expect(damage(whole.slice(0, whole.length - 1), 'png')).toBe('truncated');
    const withIhdrOnly = new Uint8Array([...PNG_SIGNATURE, ...ihdr(8, 8)]);
    expect(damage(withIhdrOnly, 'png')).toBe('truncated');
  });

  it('leaves out an ancillary chunk whose CRC is bad, as browsers do (PNG 1.2 §5.4, §12.12)', () => {
    const profile = chunk('iCCP', Buffer.from('sRGB\0\0profile'));
    const clean = pngFile(8, 8);
    const withProfile = pngFile(8, 8, { before: [profile] });
    const bad = flip(withProfile, 8 + 25 + profile.length - 1);
    expect(soundImage(withProfile, 'png')).toEqual({ ok: true, value: withProfile });
    expect(soundImage(bad, 'png')).toEqual({ ok: true, value: clean });
    const badText = pngFile(8, 8, { before: [chunk('tEXt', Buffer.from('Title\0x'))] });
    expect(soundImage(flip(badText, 8 + 25 + 8), 'png')).toEqual({ ok: true, value: clean });
  });

  it('wants a JPEG to end with EOI after its scan, trailing bytes allowed', () => {
    const whole = jpegFile(8, 8);
    expect(damage(whole, 'jpeg')).toBeNull();
    expect(damage(new Uint8Array([...whole, 1, 2, 3]), 'jpeg')).toBeNull();
    expect(damage(whole.slice(0, whole.length - 1), 'jpeg')).toBe('truncated');
    expect(damage(whole.slice(0, 30), 'jpeg')).toBe('truncated');
  });

  it('leaves WebP to its decoder', () => {
    expect(damage(webpFile('VP8 ', 8, 8).slice(0, 20), 'webp')).toBeNull();
  });
});

it('explains data that does not decode and a conversion still too large', () => {
  expect(undecodableImage('jpeg', 'truncated').message).toBe(
    'The JPEG image could not be decoded: the file is cut short.',
  );
  expect(undecodableImage('png', 'checksum').message).toBe(
    'The PNG image could not be decoded: the file is damaged (a checksum does not match).',
  );
  expect(undecodableImage('webp')).toEqual({
    kind: 'undecodable',
    message:
      "The WebP image could not be decoded: the file is damaged or uses a feature Hearth's decoder does not support.",
  });
  expect(tooLargeImage(1_433_622, 1280, 1280)).toEqual({
    kind: 'too_large',
    message:
      "The image is still 1,433,622 bytes after conversion to a 1,280 × 1,280 JPEG, over Hearth's limit of 1,000,000 bytes.",
  });
});

it('never throws on damaged bytes: any header, cut anywhere, with any bytes changed', () => {
  const headers = [
    pngFile(40, 30),
    jpegFile(40, 30, { orientation: 6 }),
    webpFile('VP8X', 40, 30),
    gifFile(4, 4),
  ];
  const damaged = fc
    .tuple(
      fc.constantFrom(...headers),
      fc.nat(),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }))),
    )
    .map(([file, cut, changes]) => {
      const bytes = file.slice(0, cut % (file.length + 1));
      for (const [at, value] of changes) if (bytes.length) bytes[at % bytes.length] = value;
      return bytes;
    });
  fc.assert(
    fc.property(fc.oneof(damaged, fc.uint8Array({ maxLength: 64 })), (bytes) => {
      const info = sniffImage(bytes);
      planImage(info, bytes.length);
      soundImage(bytes, info.format);
    }),
    { numRuns: 2000 },
  );
});
