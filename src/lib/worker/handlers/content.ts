import { encodePng, isPng, latin1, readPngChunks, type PngChunk } from '$lib/chat/png';
import { hearthError, HearthFailure, type ErrorCode } from '$lib/domain/errors';
import { randomIds } from '$lib/adapters/system/clock';
import { Transfer } from '../rpc';

/**
 * Helpers shared by the character, persona and lorebook handlers: ids, byte limits, avatars and
 * transferring bytes back to the page.
 */

/** Largest card file read (PNG cards carry their avatar). */
export const MAX_CARD_FILE_BYTES = 64 * 1024 * 1024;
/** Largest avatar kept for a character or persona. */
export const MAX_AVATAR_BYTES = 16 * 1024 * 1024;
/** Largest world info file read. */
export const MAX_LOREBOOK_FILE_BYTES = 32 * 1024 * 1024;

export const newId = (prefix: string): string => randomIds.contentId(prefix);

export function fail(code: ErrorCode, message: string): never {
  throw new HearthFailure(hearthError(code, message));
}

/** A name without surrounding space, or a refusal when nothing is left. */
export function requireName(name: unknown, code: ErrorCode, what: string): string {
  if (typeof name !== 'string' || name.trim() === '') return fail(code, `${what} needs a name.`);
  return name.trim();
}

export const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;

/** `value` with the buffers of `bytes` transferred (each buffer once), not copied. */
export function withTransfer<T>(value: T, bytes: readonly (Uint8Array | null | undefined)[]): Transfer<T> {
  const buffers = new Set<ArrayBuffer>();
  for (const b of bytes) if (b && b.buffer instanceof ArrayBuffer) buffers.add(b.buffer);
  return new Transfer(value, [...buffers]);
}

const CARD_KEYWORDS = new Set(['chara', 'ccv3']);

/** A text chunk whose keyword is `chara` or `ccv3` (as card.ts reads them). */
function isCardChunk(c: PngChunk): boolean {
  if (c.type !== 'tEXt' && c.type !== 'iTXt' && c.type !== 'zTXt') return false;
  const nul = c.data.subarray(0, 80).indexOf(0);
  return nul > 0 && CARD_KEYWORDS.has(latin1(c.data.subarray(0, nul)).toLowerCase());
}

/**
 * A character avatar: a readable PNG of at most MAX_AVATAR_BYTES, with any card chunks
 * (`chara`, `ccv3`) removed so an old card never rides along inside the picture.
 */
export function characterAvatar(bytes: unknown): Uint8Array {
  if (!isBytes(bytes)) return fail('character.avatar_invalid', 'The avatar must be image bytes.');
  if (bytes.length > MAX_AVATAR_BYTES) {
    return fail(
      'character.avatar_invalid',
      `The avatar is ${bytes.length} bytes, over the ${MAX_AVATAR_BYTES}-byte limit.`,
    );
  }
  if (!isPng(bytes)) return fail('character.avatar_invalid', 'A character avatar must be a PNG image.');
  const chunks = readPngChunks(bytes, 'The avatar');
  if (!chunks.ok) return fail('character.avatar_invalid', chunks.error.message);
  const kept = chunks.value.filter((c) => !isCardChunk(c));
  return kept.length === chunks.value.length ? bytes.slice() : encodePng(kept);
}

/** The image types a persona avatar may be, by their first bytes. */
function imageKind(bytes: Uint8Array): string | null {
  const at = (i: number, ...b: number[]) => b.every((x, k) => bytes[i + k] === x);
  if (isPng(bytes)) return 'png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp';
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'gif';
  return null;
}

/** A persona avatar: a PNG, JPEG, WebP or GIF image of at most MAX_AVATAR_BYTES. */
export function personaAvatar(bytes: unknown): Uint8Array {
  if (!isBytes(bytes)) return fail('persona.invalid', 'The avatar must be image bytes.');
  if (bytes.length > MAX_AVATAR_BYTES) {
    return fail(
      'persona.invalid',
      `The avatar is ${bytes.length} bytes, over the ${MAX_AVATAR_BYTES}-byte limit.`,
    );
  }
  if (imageKind(bytes) === null)
    return fail('persona.invalid', 'The avatar must be a PNG, JPEG, WebP or GIF image.');
  return bytes.slice();
}
