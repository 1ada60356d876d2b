import { parseCard, type CharacterCard } from '$lib/chat/card';
import { parseWorldInfo, type Lorebook } from '$lib/chat/lorebook';
import { encodePng, isPng, latin1, readPngChunks, type PngChunk } from '$lib/chat/png';
import type { CharacterNote } from '$lib/chat/prompt/authors-note';
import {
  CharacterRecordSchema,
  LorebookRecordSchema,
  type CharacterRecord,
  type LorebookRecord,
  type PersonaRecord,
} from '$lib/chat/records';
import { utf8 } from '$lib/domain/base64';
import { hearthError, HearthFailure, type ErrorCode } from '$lib/domain/errors';
import type { CharacterStore, LorebookStore, PersonaStore } from '$lib/ports/characters';
import type { Ids } from '$lib/ports/clock';

/**
 * What Hearth takes in as characters, lorebooks and personas, one file at a time or a whole
 * SillyTavern library: size limits, the check every saved record passes (so every saved row reads
 * back), avatars, and reading and saving an imported card, world info file or persona.
 */

/** Largest card file read (PNG cards carry their avatar). */
export const MAX_CARD_FILE_BYTES = 64 * 1024 * 1024;
/** Largest avatar kept for a character or persona. */
export const MAX_AVATAR_BYTES = 16 * 1024 * 1024;
/** Largest world info file read. */
export const MAX_LOREBOOK_FILE_BYTES = 32 * 1024 * 1024;

export function fail(code: ErrorCode, message: string): never {
  throw new HearthFailure(hearthError(code, message));
}

/** A name without surrounding space, or a refusal when nothing is left. */
export function requireName(name: unknown, code: ErrorCode, what: string): string {
  if (typeof name !== 'string' || name.trim() === '') return fail(code, `${what} needs a name.`);
  return name.trim();
}

export const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;

export interface CharacterImportResult {
  character: CharacterRecord;
  /** The card's embedded `character_book`, saved as a lorebook and attached first. */
  lorebook: LorebookRecord | null;
}

const CARD_KEYWORDS = new Set(['chara', 'ccv3']);

/** A text chunk whose keyword is `chara` or `ccv3` (as card.ts reads them). */
function isCardChunk(c: PngChunk): boolean {
  if (c.type !== 'tEXt' && c.type !== 'iTXt' && c.type !== 'zTXt') return false;
  const nul = c.data.subarray(0, 80).indexOf(0);
  return nul > 0 && CARD_KEYWORDS.has(latin1(c.data.subarray(0, nul)).toLowerCase());
}

/** Avatar bytes of at most MAX_AVATAR_BYTES, or a refusal with `code`. */
function avatarBytes(bytes: unknown, code: ErrorCode): Uint8Array {
  if (!isBytes(bytes)) return fail(code, 'The avatar must be image bytes.');
  if (bytes.length > MAX_AVATAR_BYTES)
    return fail(code, `The avatar is ${bytes.length} bytes, over the ${MAX_AVATAR_BYTES}-byte limit.`);
  return bytes;
}

/**
 * A character avatar: a readable PNG of at most MAX_AVATAR_BYTES, with any card chunks
 * (`chara`, `ccv3`) removed so an old card never rides along inside the picture.
 */
export function characterAvatar(given: unknown): Uint8Array {
  const bytes = avatarBytes(given, 'character.avatar_invalid');
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
export function personaAvatar(given: unknown): Uint8Array {
  const bytes = avatarBytes(given, 'persona.invalid');
  if (imageKind(bytes) === null)
    return fail('persona.invalid', 'The avatar must be a PNG, JPEG, WebP or GIF image.');
  return bytes.slice();
}

/** A record checked against its schema before it is saved, so every saved row reads back. */
export function checkedCharacter(record: CharacterRecord): CharacterRecord {
  const parsed = CharacterRecordSchema.safeParse(record);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    fail(
      'character.invalid',
      `The character cannot be saved: ${first ? `${first.path.join('.')}: ${first.message}` : 'invalid'}.`,
    );
  }
  return record;
}

/** A card file, its size checked and then parsed; a broken or hostile card is refused naming the problem. */
export function readCardFile(fileName: string, bytes: unknown): CharacterCard {
  const label = fileName ? `"${fileName}"` : 'The file';
  if (!isBytes(bytes) || bytes.length === 0) fail('card.unsupported_format', `${label} is empty.`);
  if (bytes.length > MAX_CARD_FILE_BYTES) {
    fail('card.too_large', `${label} is ${bytes.length} bytes, over the ${MAX_CARD_FILE_BYTES}-byte limit.`);
  }
  const parsed = parseCard(bytes, fileName);
  if (!parsed.ok) throw new HearthFailure(parsed.error);
  return parsed.value;
}

/** The card as a character keeps it: its avatar and embedded book are stored apart. */
export const storedCard = (card: CharacterCard): CharacterCard => ({
  ...card,
  avatar: null,
  characterBook: null,
});

/**
 * Saves a read card as a new character. Its embedded `character_book` becomes a lorebook of its
 * own, attached first, unless `linked` (an existing lorebook: the one the card links) is attached
 * first instead; `extra` (existing lorebooks) are attached after it. `note`: the character's
 * author's note (a library's settings.json keeps it beside the card).
 */
export async function saveImportedCard(
  deps: { characters: CharacterStore; ids: Ids },
  fileName: string,
  card: CharacterCard,
  books: { linked?: string; extra?: string[] } = {},
  note: CharacterNote | null = null,
): Promise<CharacterImportResult> {
  const id = deps.ids.contentId('chr');
  const t = Date.now();
  const lorebook: LorebookRecord | null =
    card.characterBook && !books.linked
      ? {
          id: deps.ids.contentId('lb'),
          book: { ...card.characterBook, name: card.characterBook.name.trim() || `${card.name}'s lorebook` },
          source: { kind: 'card', fileName, characterId: id },
          createdAt: t,
          updatedAt: t,
        }
      : null;
  const record: CharacterRecord = {
    id,
    card: storedCard(card),
    ...(card.avatar ? { avatar: card.avatar } : {}),
    lorebookIds: [books.linked ?? lorebook?.id, ...(books.extra ?? [])].filter((id) => id !== undefined),
    ...(note ? { note } : {}),
    createdAt: t,
    updatedAt: t,
  };
  await deps.characters.put(checkedCharacter(record), { lorebooks: lorebook ? [lorebook] : [] });
  return { character: record, lorebook };
}

/** The book's name from a file name: `Eldoria.json` -> `Eldoria`. */
const baseName = (fileName: string) => fileName.replace(/^.*[\\/]/, '').replace(/\.json$/i, '');

/**
 * A record checked against its schema before it is saved (so every saved row reads back): a
 * name, and entry uids that are unique integers.
 */
export function checkedLorebook(record: LorebookRecord): LorebookRecord {
  const parsed = LorebookRecordSchema.safeParse(record);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first ? first.path.filter((p) => p !== 'book').join('.') : '';
    fail(
      'lorebook.invalid',
      `The lorebook cannot be saved: ${where ? `${where}: ` : ''}${first?.message ?? 'invalid'}.`,
    );
  }
  const book = parsed.data.book;
  requireName(book.name, 'lorebook.invalid', 'A lorebook');
  const seen = new Set<number>();
  for (const entry of book.entries) {
    if (seen.has(entry.uid)) fail('lorebook.invalid', `Two entries share the uid ${entry.uid}.`);
    seen.add(entry.uid);
  }
  return { ...parsed.data, book: { ...book, name: book.name.trim() } };
}

/** A world info file, its size checked and then parsed; refused with a message naming the problem. */
export function readWorldInfoFile(fileName: string, bytes: unknown): Lorebook {
  const label = fileName ? `"${fileName}"` : 'The file';
  if (!isBytes(bytes) || bytes.length === 0) fail('lorebook.invalid', `${label} is empty.`);
  if (bytes.length > MAX_LOREBOOK_FILE_BYTES) {
    fail(
      'lorebook.invalid',
      `${label} is ${bytes.length} bytes, over the ${MAX_LOREBOOK_FILE_BYTES}-byte limit.`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(utf8.decode(bytes));
  } catch (e) {
    return fail(
      'lorebook.invalid',
      `${label} is not valid JSON (${e instanceof Error ? e.message : String(e)}).`,
    );
  }
  const spec = (json as { spec?: unknown } | null)?.spec;
  if (spec === 'chara_card_v2' || spec === 'chara_card_v3') {
    fail('lorebook.invalid', `${label} is a character card, not a lorebook: import it on Characters.`);
  }
  const parsed = parseWorldInfo(json, baseName(fileName));
  if (!parsed.ok) throw new HearthFailure({ ...parsed.error, message: `${label}: ${parsed.error.message}` });
  return { ...parsed.value, name: parsed.value.name.trim() || 'Imported lorebook' };
}

/** Saves a read world info file as a new lorebook. */
export async function saveImportedLorebook(
  deps: { lorebooks: LorebookStore; ids: Ids },
  fileName: string,
  book: Lorebook,
): Promise<LorebookRecord> {
  const t = Date.now();
  const record = checkedLorebook({
    id: deps.ids.contentId('lb'),
    book,
    source: { kind: 'worldInfo', fileName },
    createdAt: t,
    updatedAt: t,
  });
  await deps.lorebooks.put(record);
  return record;
}

export const text = (v: unknown, what: string): string =>
  typeof v === 'string' ? v : fail('persona.invalid', `${what} must be text.`);

/** A new persona: a name, a description (default none) and an avatar image (optional). */
export async function createPersona(
  deps: { personas: PersonaStore; ids: Ids },
  { name, description, avatar }: { name: unknown; description?: unknown; avatar?: unknown },
): Promise<PersonaRecord> {
  const t = Date.now();
  const persona: PersonaRecord = {
    id: deps.ids.contentId('per'),
    name: requireName(name, 'persona.invalid', 'A persona'),
    description: description === undefined ? '' : text(description, 'The description'),
    ...(avatar !== undefined ? { avatar: personaAvatar(avatar) } : {}),
    createdAt: t,
    updatedAt: t,
  };
  await deps.personas.put(persona);
  return persona;
}
