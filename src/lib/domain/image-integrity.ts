/**
 * Damage the decoders let through. The PNG decoder ignores chunk CRCs and the JPEG decoder fills a
 * cut-short file with grey, yet a model provider's decoder may refuse such a file; a kept file is
 * passed on byte for byte, so Hearth refuses it here rather than have the provider refuse the request.
 */
import { jpegSegments, pngChunks, type ImageFormat } from './image-headers';
import { err, ok, type Result } from './result';

export type ImageDamage = 'truncated' | 'checksum';

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * The file as far as Hearth checks it: every critical PNG chunk's CRC, a JPEG's end marker. An
 * ancillary PNG chunk (iCCP, tEXt, …) with a bad CRC is left out of the bytes, as browsers skip it.
 */
export function soundImage(bytes: Uint8Array, format: ImageFormat): Result<Uint8Array, ImageDamage> {
  if (format === 'png') return soundPng(bytes);
  if (format === 'jpeg') return jpegDamage(bytes) ?? ok(bytes);
  return ok(bytes);
}

/** PNG's chunk naming: the first letter in lower case (bit 5 set) marks a chunk a decoder may skip. */
const isAncillary = (bytes: Uint8Array, start: number) => (bytes[start + 4]! & 0x20) !== 0;

function soundPng(bytes: Uint8Array): Result<Uint8Array, ImageDamage> {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const damaged: { start: number; end: number }[] = [];
  for (const { type, start, length } of pngChunks(bytes)) {
    const crcAt = start + 8 + length;
    if (crc32(bytes.subarray(start + 4, crcAt)) !== v.getUint32(crcAt)) {
      if (!isAncillary(bytes, start)) return err('checksum');
      damaged.push({ start, end: crcAt + 4 });
    }
    if (type === 'IEND') return ok(without(bytes, damaged));
  }
  return err('truncated');
}

function without(bytes: Uint8Array, ranges: readonly { start: number; end: number }[]): Uint8Array {
  if (ranges.length === 0) return bytes;
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const { start, end } of ranges) {
    parts.push(bytes.subarray(from, start));
    from = end;
  }
  parts.push(bytes.subarray(from));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A JPEG ends with EOI (FF D9) after its scans; bytes after it (camera trailers) are allowed. */
function jpegDamage(bytes: Uint8Array): Result<never, ImageDamage> | null {
  let scan = -1;
  for (const { marker, end } of jpegSegments(bytes)) if (marker === 0xda) scan = end;
  if (scan < 0) return err('truncated');
  for (let i = bytes.length - 2; i >= scan; i--) {
    if (bytes[i] === 0xff && bytes[i + 1] === 0xd9) return null;
  }
  return err('truncated');
}
