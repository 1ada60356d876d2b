/**
 * What an image file says about itself in its first bytes (tools.md §11): its format, its declared
 * size and, for JPEG, its EXIF orientation. Headers only: nothing here decodes pixels, so a file that
 * declares a huge size can be refused before anything is allocated for it.
 */

export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'gif' | 'unknown';

export type ImageInfo = {
  format: ImageFormat;
  /** Declared in the header; absent when the header is cut short or impossible. */
  width?: number;
  height?: number;
  /** JPEG EXIF orientation, 1 to 8 (absent when there is none or it is out of range). */
  orientation?: number;
  /** From the header (PNG colour type or `tRNS`, WebP flags): a hint, not a promise. */
  hasAlpha?: boolean;
};

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((b, i) => bytes[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));
const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export function sniffImage(bytes: Uint8Array): ImageInfo {
  if (startsWith(bytes, PNG_SIGNATURE)) return png(bytes);
  if (startsWith(bytes, [0xff, 0xd8])) return jpeg(bytes);
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return webp(bytes);
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return gif(bytes);
  return { format: 'unknown' };
}

/** Bit depths each PNG colour type allows (PNG §11.2.2). */
const PNG_DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

export type PngChunk = { type: string; start: number; length: number };

/**
 * The chunks after the signature, as far as they are whole: each chunk's type, offset and data
 * length (its data is at `start + 8`, its CRC after the data).
 */
export function* pngChunks(bytes: Uint8Array): Generator<PngChunk> {
  const v = view(bytes);
  for (let start = 8; start + 12 <= bytes.length;) {
    const length = v.getUint32(start);
    if (start + 12 + length > bytes.length) return;
    yield { type: String.fromCharCode(...bytes.subarray(start + 4, start + 8)), start, length };
    start += 12 + length;
  }
}

function png(bytes: Uint8Array): ImageInfo {
  const chunks = pngChunks(bytes);
  const first = chunks.next();
  if (first.done || first.value.type !== 'IHDR' || first.value.length !== 13) return { format: 'png' };
  const v = view(bytes);
  const [width, height] = [v.getUint32(16), v.getUint32(20)];
  const [depth, colour, compression, filter, interlace] = bytes.subarray(24, 29);
  const valid =
    width > 0 &&
    height > 0 &&
    width < 2 ** 31 &&
    height < 2 ** 31 &&
    (PNG_DEPTHS[colour!]?.includes(depth!) ?? false) &&
    compression === 0 &&
    filter === 0 &&
    interlace! <= 1;
  if (!valid) return { format: 'png' };
  let hasAlpha = colour === 4 || colour === 6;
  for (const { type } of chunks) {
    if (type === 'IDAT') break;
    if (type === 'tRNS') hasAlpha = true;
  }
  return { format: 'png', width, height, hasAlpha };
}

export type JpegSegment = { marker: number; start: number; end: number };

/** Frame headers (SOF0-15 without DHT C4, JPG C8 and DAC CC): they carry the image's size. */
const isFrame = (marker: number) =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/**
 * The marker segments of a JPEG up to and including its first scan header (SOS), as far as they
 * are whole: `start` is the marker's offset, `end` the offset after the segment. Bytes between
 * segments are skipped, as libjpeg skips them.
 */
export function* jpegSegments(bytes: Uint8Array): Generator<JpegSegment> {
  const v = view(bytes);
  let at = 2;
  while (at + 4 <= bytes.length) {
    const marker = bytes[at + 1]!;
    // Stray bytes and fill bytes before a marker, and the markers without a length (TEM, RSTn).
    if (bytes[at] !== 0xff || marker === 0xff) at += 1;
    else if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) at += 2;
    else if (marker === 0xd8 || marker === 0xd9) return;
    else {
      const length = v.getUint16(at + 2);
      const end = at + 2 + length;
      if (length < 2 || end > bytes.length) return;
      yield { marker, start: at, end };
      if (marker === 0xda) return;
      at = end;
    }
  }
}

function jpeg(bytes: Uint8Array): ImageInfo {
  const v = view(bytes);
  const info: ImageInfo = { format: 'jpeg', hasAlpha: false };
  for (const { marker, start, end } of jpegSegments(bytes)) {
    if (isFrame(marker) && info.width === undefined && end - start >= 10) {
      info.height = v.getUint16(start + 5);
      info.width = v.getUint16(start + 7);
    } else if (marker === 0xe1 && info.orientation === undefined) {
      const orientation = exifOrientation(bytes.subarray(start + 4, end));
      if (orientation !== undefined) info.orientation = orientation;
    }
  }
  return info;
}

/** Orientation (tag 0x0112) from IFD0 of an APP1 `Exif\0\0` payload. */
function exifOrientation(app1: Uint8Array): number | undefined {
  if (!startsWith(app1, [...ascii('Exif'), 0, 0]) || app1.length < 14) return undefined;
  const tiff = app1.subarray(6);
  const v = view(tiff);
  const little = startsWith(tiff, ascii('II'));
  if (!little && !startsWith(tiff, ascii('MM'))) return undefined;
  if (v.getUint16(2, little) !== 42) return undefined;
  const ifd = v.getUint32(4, little);
  if (ifd + 2 > tiff.length) return undefined;
  const count = v.getUint16(ifd, little);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > tiff.length) return undefined;
    if (v.getUint16(entry, little) !== 0x0112) continue;
    // Type SHORT, one value, kept in the first two bytes of the value field.
    if (v.getUint16(entry + 2, little) !== 3) return undefined;
    const value = v.getUint16(entry + 8, little);
    return value >= 1 && value <= 8 ? value : undefined;
  }
  return undefined;
}

function webp(bytes: Uint8Array): ImageInfo {
  const v = view(bytes);
  const chunk = String.fromCharCode(...bytes.subarray(12, 16));
  const u24 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
  if (chunk === 'VP8 ' && bytes.length >= 30 && startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) {
    return {
      format: 'webp',
      width: v.getUint16(26, true) & 0x3fff,
      height: v.getUint16(28, true) & 0x3fff,
      hasAlpha: false,
    };
  }
  if (chunk === 'VP8L' && bytes.length >= 25 && bytes[20] === 0x2f) {
    const bits = v.getUint32(21, true);
    if (bits >>> 29 !== 0) return { format: 'webp' };
    return {
      format: 'webp',
      width: (bits & 0x3fff) + 1,
      height: ((bits >>> 14) & 0x3fff) + 1,
      hasAlpha: ((bits >>> 28) & 1) === 1,
    };
  }
  if (chunk === 'VP8X' && bytes.length >= 30) {
    return { format: 'webp', width: u24(24) + 1, height: u24(27) + 1, hasAlpha: (bytes[20]! & 0x10) !== 0 };
  }
  return { format: 'webp' };
}

function gif(bytes: Uint8Array): ImageInfo {
  if (bytes.length < 10) return { format: 'gif' };
  const v = view(bytes);
  return { format: 'gif', width: v.getUint16(6, true), height: v.getUint16(8, true) };
}
