import { deflateSync } from 'node:zlib';
import { chunk } from './png-card';

// Image files written byte by byte, for what is read from headers: only their first bytes are real.

const u16 = (n: number, little = false) => {
  const b = Buffer.alloc(2);
  if (little) b.writeUInt16LE(n);
  else b.writeUInt16BE(n);
  return b;
};
const u32 = (n: number, little = false) => {
  const b = Buffer.alloc(4);
  if (little) b.writeUInt32LE(n >>> 0);
  else b.writeUInt32BE(n >>> 0);
  return b;
};
const bytes = (...parts: (Buffer | number[])[]) =>
  new Uint8Array(Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p)))));

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export const ihdr = (width: number, height: number, depth = 8, colour = 6, interlace = 0) =>
  chunk('IHDR', Buffer.concat([u32(width), u32(height), Buffer.from([depth, colour, 0, 0, interlace])]));

/** A whole PNG (valid CRCs) whose IDAT holds one row of zeros, whatever the size it declares. */
export function pngFile(
  width: number,
  height: number,
  { depth = 8, colour = 6, before = [] as Buffer[] } = {},
): Uint8Array {
  return bytes(
    PNG_SIGNATURE,
    ihdr(width, height, depth, colour),
    ...before,
    chunk('IDAT', deflateSync(Buffer.alloc(16))),
    chunk('IEND', Buffer.alloc(0)),
  );
}

/** An APP1 segment with an EXIF IFD0 holding only the orientation. */
export function exifSegment(orientation: number, little = false): Buffer {
  const entry = Buffer.concat([
    u16(0x0112, little),
    u16(3, little),
    u32(1, little),
    u16(orientation, little),
    u16(0),
  ]);
  const tiff = Buffer.concat([
    Buffer.from(little ? 'II' : 'MM', 'latin1'),
    u16(42, little),
    u32(8, little),
    u16(1, little),
    entry,
    u32(0, little),
  ]);
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  return Buffer.concat([Buffer.from([0xff, 0xe1]), u16(payload.length + 2), payload]);
}

/** SOI, optional APP1 EXIF, a baseline frame header (SOF0), a scan header, a byte of data and EOI. */
export function jpegFile(
  width: number,
  height: number,
  { orientation = 0, little = false } = {},
): Uint8Array {
  const sof = Buffer.concat([Buffer.from([0xff, 0xc0]), u16(17), Buffer.from([8]), u16(height), u16(width)]);
  const components = Buffer.from([3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  const sos = Buffer.from([0xff, 0xda, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0]);
  return bytes(
    [0xff, 0xd8],
    orientation ? exifSegment(orientation, little) : [],
    sof,
    components,
    sos,
    [0x12, 0xff, 0xd9],
  );
}

/** A RIFF WebP whose first chunk is `VP8 `, `VP8L` or `VP8X`, declaring the given size. */
export function webpFile(
  kind: 'VP8 ' | 'VP8L' | 'VP8X',
  width: number,
  height: number,
  alpha = false,
): Uint8Array {
  const u24 = (n: number) => Buffer.from([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff]);
  const data =
    kind === 'VP8 '
      ? Buffer.concat([
          Buffer.from([0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a]),
          u16(width, true),
          u16(height, true),
        ])
      : kind === 'VP8L'
        ? Buffer.concat([
            Buffer.from([0x2f]),
            u32((width - 1) | ((height - 1) << 14) | ((alpha ? 1 : 0) << 28), true),
          ])
        : Buffer.concat([Buffer.from([alpha ? 0x10 : 0, 0, 0, 0]), u24(width - 1), u24(height - 1)]);
  const body = Buffer.concat([Buffer.from(kind, 'latin1'), u32(data.length, true), data]);
  return bytes(Buffer.from('RIFF'), u32(body.length + 4, true), Buffer.from('WEBP'), body);
}

export const gifFile = (width: number, height: number): Uint8Array =>
  bytes(Buffer.from('GIF89a'), u16(width, true), u16(height, true), [0, 0, 0, 0x3b]);
