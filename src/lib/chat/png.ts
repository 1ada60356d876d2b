import { err, ok, type Result } from '$lib/domain/result';
import { hearthError, type HearthError } from '$lib/domain/errors';

/**
 * PNG chunk reading and writing (PNG spec §5): an 8-byte signature, then chunks of
 * `length (u32 BE) | type (4 ASCII letters) | data | CRC-32 of type+data`, IHDR first, IEND last.
 * Only the container is handled; pixel data is never decoded.
 *
 * CRCs are checked: SillyTavern's reader (png-chunks-extract) refuses a file whose CRC does not
 * match, so a card Hearth accepts is one SillyTavern would accept too.
 */

export interface PngChunk {
  type: string;
  data: Uint8Array;
}

export const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO 3309, as PNG uses it) of `bytes[start, end)`. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export const isPng = (bytes: Uint8Array): boolean =>
  bytes.length >= 8 && PNG_SIGNATURE.every((b, i) => bytes[i] === b);

const readU32 = (b: Uint8Array, at: number): number =>
  ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;

const isChunkType = (b: Uint8Array, at: number): boolean => {
  for (let i = at; i < at + 4; i++) {
    const c = b[i]!;
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122))) return false;
  }
  return true;
};

/** All chunks up to and including IEND; bytes after IEND are ignored. Never throws. */
export function readPngChunks(bytes: Uint8Array, label = 'the file'): Result<PngChunk[], HearthError> {
  if (!isPng(bytes))
    return err(hearthError('card.not_png', `${label} is not a PNG image (wrong signature).`));
  const chunks: PngChunk[] = [];
  let at = 8;
  for (;;) {
    if (at + 8 > bytes.length) {
      return err(
        hearthError('card.truncated_png', `${label} is a truncated PNG: it ends before its IEND chunk.`),
      );
    }
    const length = readU32(bytes, at);
    if (!isChunkType(bytes, at + 4)) {
      return err(
        hearthError('card.invalid_png', `${label} is not a valid PNG: chunk at byte ${at} has a bad type.`),
      );
    }
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    if (length > 0x7fffffff || at + 12 + length > bytes.length) {
      return err(
        hearthError(
          'card.truncated_png',
          `${label} is a truncated PNG: its ${type} chunk declares ${length} bytes but the file ends first.`,
        ),
      );
    }
    const stored = readU32(bytes, at + 8 + length);
    if (crc32(bytes, at + 4, at + 8 + length) !== stored) {
      return err(
        hearthError(
          'card.png_crc_mismatch',
          `${label} is a corrupted PNG: the CRC of its ${type} chunk does not match.`,
        ),
      );
    }
    if (chunks.length === 0 && type !== 'IHDR') {
      return err(
        hearthError('card.invalid_png', `${label} is not a valid PNG: it does not start with IHDR.`),
      );
    }
    chunks.push({ type, data: bytes.slice(at + 8, at + 8 + length) });
    at += 12 + length;
    if (type === 'IEND') return ok(chunks);
  }
}

/** A PNG file from chunks (CRCs computed here). */
export function encodePng(chunks: readonly PngChunk[]): Uint8Array {
  let size = 8;
  for (const c of chunks) size += 12 + c.data.length;
  const out = new Uint8Array(size);
  out.set(PNG_SIGNATURE, 0);
  let at = 8;
  for (const c of chunks) {
    const n = c.data.length;
    out[at] = n >>> 24;
    out[at + 1] = (n >>> 16) & 0xff;
    out[at + 2] = (n >>> 8) & 0xff;
    out[at + 3] = n & 0xff;
    for (let i = 0; i < 4; i++) out[at + 4 + i] = c.type.charCodeAt(i);
    out.set(c.data, at + 8);
    const crc = crc32(out, at + 4, at + 8 + n);
    out[at + 8 + n] = crc >>> 24;
    out[at + 9 + n] = (crc >>> 16) & 0xff;
    out[at + 10 + n] = (crc >>> 8) & 0xff;
    out[at + 11 + n] = crc & 0xff;
    at += 12 + n;
  }
  return out;
}

/** Bytes as a Latin-1 string (PNG text chunks are Latin-1), in slices to keep the call stack small. */
export function latin1(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return s;
}

/** A tEXt chunk's keyword and text, or null when it has no keyword separator. */
export function decodeTextChunk(data: Uint8Array): { keyword: string; text: string } | null {
  const nul = data.indexOf(0);
  if (nul <= 0 || nul > 79) return null;
  return { keyword: latin1(data.subarray(0, nul)), text: latin1(data.subarray(nul + 1)) };
}

/** A tEXt chunk; `text` must be Latin-1 (card payloads are base64, so ASCII). */
export function encodeTextChunk(keyword: string, text: string): PngChunk {
  const data = new Uint8Array(keyword.length + 1 + text.length);
  for (let i = 0; i < keyword.length; i++) data[i] = keyword.charCodeAt(i) & 0xff;
  data[keyword.length] = 0;
  for (let i = 0; i < text.length; i++) data[keyword.length + 1 + i] = text.charCodeAt(i) & 0xff;
  return { type: 'tEXt', data };
}
