/**
 * Damage the decoders let through. The PNG decoder ignores chunk CRCs and the JPEG decoder fills a
 * cut-short file with grey, yet a model provider's decoder may refuse such a file; a kept file is
 * passed on byte for byte, so Hearth refuses it here rather than have the provider refuse the request.
 */
import { jpegSegments, pngChunks, type ImageFormat } from './image-headers';

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

/** Null when the file is whole as far as Hearth checks: every PNG chunk's CRC, a JPEG's end marker. */
export function imageDamage(bytes: Uint8Array, format: ImageFormat): ImageDamage | null {
  if (format === 'png') return pngDamage(bytes);
  if (format === 'jpeg') return jpegDamage(bytes);
  return null;
}

function pngDamage(bytes: Uint8Array): ImageDamage | null {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const { type, start, length } of pngChunks(bytes)) {
    const crcAt = start + 8 + length;
    if (crc32(bytes.subarray(start + 4, crcAt)) !== v.getUint32(crcAt)) return 'checksum';
    if (type === 'IEND') return null;
  }
  return 'truncated';
}

/** A JPEG ends with EOI (FF D9) after its scans; bytes after it (camera trailers) are allowed. */
function jpegDamage(bytes: Uint8Array): ImageDamage | null {
  let scan = -1;
  for (const { marker, end } of jpegSegments(bytes)) if (marker === 0xda) scan = end;
  if (scan < 0) return 'truncated';
  for (let i = bytes.length - 2; i >= scan; i--) {
    if (bytes[i] === 0xff && bytes[i + 1] === 0xd9) return null;
  }
  return 'truncated';
}
