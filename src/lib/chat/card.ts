import { z } from 'zod';
import { hearthError, type ErrorCode, type HearthError } from '$lib/domain/errors';
import type { JsonObject, JsonValue } from '$lib/domain/json';
import { err, ok, type Result } from '$lib/domain/result';
import { decodeBase64, encodeBase64, utf8 } from '$lib/domain/base64';
import { JsonObjectSchema, asJsonObject, isRecord, unknownFields, withExtra } from './json-fields';
import { LorebookSchema, exportCharacterBook, parseCharacterBook } from './lorebook';
import { decodeTextChunk, encodePng, encodeTextChunk, isPng, readPngChunks, type PngChunk } from './png';
import { readZipFiles } from './zip';

/**
 * SillyTavern character cards: V1 (flat JSON), V2 (`spec: "chara_card_v2"`, in a PNG `chara` tEXt
 * chunk as base64 JSON, or a JSON file) and V3 (`spec: "chara_card_v3"`, `ccv3` chunk; preferred
 * when a PNG has both; or a CHARX zip with `card.json`), normalised into one `CharacterCard`. Every field is kept, unknown ones
 * verbatim (`extensions`, `extraData`, `extraFields`), so export gives back what was imported.
 */

/** Largest card payload decoded from a PNG text chunk, and largest JSON card file. */
export const MAX_CARD_CHUNK_BYTES = 8 * 1024 * 1024;
export const MAX_CARD_JSON_BYTES = 8 * 1024 * 1024;
/** Largest avatar image read out of a CHARX archive. */
export const MAX_CHARX_ICON_BYTES = 32 * 1024 * 1024;

export const CardAssetSchema = z.object({
  type: z.string(),
  uri: z.string(),
  name: z.string(),
  ext: z.string(),
  /** Unknown asset fields, verbatim. */
  extra: JsonObjectSchema,
});
export type CardAsset = z.infer<typeof CardAssetSchema>;

export const CardOriginSchema = z.object({
  spec: z.enum(['v1', 'v2', 'v3']),
  specVersion: z.string().nullable(),
  container: z.enum(['png', 'json', 'charx']),
});
export type CardOrigin = z.infer<typeof CardOriginSchema>;

export const CharacterCardSchema = z.object({
  name: z.string(),
  description: z.string(),
  personality: z.string(),
  scenario: z.string(),
  firstMes: z.string(),
  mesExample: z.string(),
  creatorNotes: z.string(),
  systemPrompt: z.string(),
  postHistoryInstructions: z.string(),
  alternateGreetings: z.array(z.string()),
  groupOnlyGreetings: z.array(z.string()),
  tags: z.array(z.string()),
  creator: z.string(),
  characterVersion: z.string(),
  /** Application data (`talkativeness`, `fav`, `world`, `depth_prompt`, ...), verbatim. */
  extensions: JsonObjectSchema,
  characterBook: LorebookSchema.nullable(),
  // V3
  nickname: z.string().nullable(),
  creatorNotesMultilingual: z.record(z.string(), z.string()).nullable(),
  source: z.array(z.string()).nullable(),
  assets: z.array(CardAssetSchema).nullable(),
  creationDate: z.number().nullable(),
  modificationDate: z.number().nullable(),
  /** Unknown fields of `data`, verbatim. */
  extraData: JsonObjectSchema,
  /** Unknown top-level fields (SillyTavern's `create_date`, `avatar`, `chat`, ...), verbatim. */
  extraFields: JsonObjectSchema,
  /** The avatar PNG with the card's `chara`/`ccv3` chunks removed; null for JSON cards (and CHARX without a PNG icon). */
  avatar: z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected bytes').nullable(),
  /** Where the card came from (not written back: export always writes V2 + V3). */
  origin: CardOriginSchema,
});
export type CharacterCard = z.infer<typeof CharacterCardSchema>;

/** SillyTavern's favourite mark: `extensions.fav`, a boolean (older cards wrote the string "true"). */
export const isFavorite = (card: Pick<CharacterCard, 'extensions'>): boolean =>
  card.extensions.fav === true || card.extensions.fav === 'true';

/** The extensions with the favourite mark set as SillyTavern writes it. */
export const withFavorite = (extensions: JsonObject, favorite: boolean): JsonObject => ({
  ...extensions,
  fav: favorite,
});

/** A card with nothing but a name (for "create character"). */
export function newCharacterCard(name: string): CharacterCard {
  return {
    name,
    description: '',
    personality: '',
    scenario: '',
    firstMes: '',
    mesExample: '',
    creatorNotes: '',
    systemPrompt: '',
    postHistoryInstructions: '',
    alternateGreetings: [],
    groupOnlyGreetings: [],
    tags: [],
    creator: '',
    characterVersion: '',
    extensions: {},
    characterBook: null,
    nickname: null,
    creatorNotesMultilingual: null,
    source: null,
    assets: null,
    creationDate: null,
    modificationDate: null,
    extraData: {},
    extraFields: {},
    avatar: null,
    origin: { spec: 'v3', specVersion: '3.0', container: 'json' },
  };
}

// ---------------------------------------------------------------------------------------------
// reading

/** Thrown inside this module only; `parseCard` turns it into a value. */
class CardProblem extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const problem = (code: ErrorCode, message: string): never => {
  throw new CardProblem(code, message);
};

function text(obj: Record<string, unknown>, key: string, path: string): string {
  const v = obj[key];
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return problem(
    'card.invalid_card',
    `\`${path}${key}\` must be text, not ${Array.isArray(v) ? 'a list' : 'an object'}.`,
  );
}

function nullableText(obj: Record<string, unknown>, key: string, path: string): string | null {
  return obj[key] === undefined || obj[key] === null ? null : text(obj, key, path);
}

/** A list of strings; a single string counts as a one-item list (`splitCommas`: a comma list). */
function texts(obj: Record<string, unknown>, key: string, path: string, splitCommas = false): string[] {
  const v = obj[key];
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') {
    if (!splitCommas) return [v];
    return v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }
  if (!Array.isArray(v)) return problem('card.invalid_card', `\`${path}${key}\` must be a list of text.`);
  return v.flatMap((item, i) => {
    if (item === null || item === undefined) return [];
    if (typeof item === 'string') return [item];
    if (typeof item === 'number' || typeof item === 'boolean') return [String(item)];
    return problem('card.invalid_card', `\`${path}${key}[${i}]\` must be text.`);
  });
}

function nullableNumber(obj: Record<string, unknown>, key: string, path: string): number | null {
  const v = obj[key];
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return problem('card.invalid_card', `\`${path}${key}\` must be a number.`);
}

function objectField(obj: Record<string, unknown>, key: string, path: string): JsonObject {
  const v = obj[key];
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) return problem('card.invalid_card', `\`${path}${key}\` must be an object.`);
  return asJsonObject(v);
}

const ASSET_FIELDS = new Set(['type', 'uri', 'name', 'ext']);

function assets(data: Record<string, unknown>): CardAsset[] | null {
  const v = data.assets;
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) return problem('card.invalid_card', '`data.assets` must be a list.');
  return v.map((a, i) => {
    if (!isRecord(a)) return problem('card.invalid_card', `\`data.assets[${i}]\` must be an object.`);
    const path = `data.assets[${i}].`;
    return {
      type: text(a, 'type', path),
      uri: text(a, 'uri', path),
      name: text(a, 'name', path),
      ext: text(a, 'ext', path),
      extra: unknownFields(a, ASSET_FIELDS),
    };
  });
}

function multilingual(data: Record<string, unknown>): Record<string, string> | null {
  const v = data.creator_notes_multilingual;
  if (v === undefined || v === null) return null;
  if (!isRecord(v))
    return problem('card.invalid_card', '`data.creator_notes_multilingual` must be an object.');
  return Object.fromEntries(Object.keys(v).map((k) => [k, text(v, k, 'data.creator_notes_multilingual.')]));
}

const DATA_FIELDS = new Set([
  'name',
  'description',
  'personality',
  'scenario',
  'first_mes',
  'mes_example',
  'creator_notes',
  'system_prompt',
  'post_history_instructions',
  'alternate_greetings',
  'group_only_greetings',
  'character_book',
  'tags',
  'creator',
  'character_version',
  'extensions',
  'nickname',
  'creator_notes_multilingual',
  'source',
  'assets',
  'creation_date',
  'modification_date',
]);

/** Top-level V1 copies that V2/V3 writers (SillyTavern among them) keep beside `data`; regenerated on export. */
const MIRROR_FIELDS = [
  'name',
  'description',
  'personality',
  'scenario',
  'first_mes',
  'mes_example',
  'tags',
  'creatorcomment',
] as const;

const V1_FIELDS = new Set([
  'name',
  'description',
  'personality',
  'scenario',
  'first_mes',
  'mes_example',
  'creator_notes',
  'creatorcomment',
  'system_prompt',
  'post_history_instructions',
  'alternate_greetings',
  'tags',
  'creator',
  'character_version',
]);

function characterBook(data: Record<string, unknown>, name: string) {
  const v = data.character_book;
  if (v === undefined || v === null) return null;
  const book = parseCharacterBook(v, name);
  if (!book.ok)
    return problem('card.invalid_card', `The card's embedded lorebook is invalid: ${book.error.message}`);
  return book.value;
}

function requireName(name: string): string {
  if (name.trim() === '') problem('card.invalid_card', 'The card has no character name.');
  return name;
}

function fromV2orV3(root: Record<string, unknown>, origin: CardOrigin): CharacterCard {
  const data = root.data;
  if (!isRecord(data)) {
    return problem(
      'card.invalid_card',
      `A ${root.spec} card must have a \`data\` object with the character.`,
    );
  }
  const p = 'data.';
  const name = requireName(text(data, 'name', p) || text(root, 'name', ''));
  return {
    name,
    description: text(data, 'description', p),
    personality: text(data, 'personality', p),
    scenario: text(data, 'scenario', p),
    firstMes: text(data, 'first_mes', p),
    mesExample: text(data, 'mes_example', p),
    creatorNotes: text(data, 'creator_notes', p),
    systemPrompt: text(data, 'system_prompt', p),
    postHistoryInstructions: text(data, 'post_history_instructions', p),
    alternateGreetings: texts(data, 'alternate_greetings', p),
    groupOnlyGreetings: texts(data, 'group_only_greetings', p),
    tags: texts(data, 'tags', p, true),
    creator: text(data, 'creator', p),
    characterVersion: text(data, 'character_version', p),
    extensions: objectField(data, 'extensions', p),
    characterBook: characterBook(data, name),
    nickname: nullableText(data, 'nickname', p),
    creatorNotesMultilingual: multilingual(data),
    source: data.source === undefined || data.source === null ? null : texts(data, 'source', p),
    assets: assets(data),
    creationDate: nullableNumber(data, 'creation_date', p),
    modificationDate: nullableNumber(data, 'modification_date', p),
    extraData: unknownFields(data, DATA_FIELDS),
    extraFields: unknownFields(root, new Set(['spec', 'spec_version', 'data', ...MIRROR_FIELDS])),
    avatar: null,
    origin,
  };
}

function fromV1(root: Record<string, unknown>, container: CardOrigin['container']): CharacterCard {
  const name = requireName(text(root, 'name', ''));
  return {
    ...newCharacterCard(name),
    description: text(root, 'description', ''),
    personality: text(root, 'personality', ''),
    scenario: text(root, 'scenario', ''),
    firstMes: text(root, 'first_mes', ''),
    mesExample: text(root, 'mes_example', ''),
    creatorNotes: text(root, 'creator_notes', '') || text(root, 'creatorcomment', ''),
    systemPrompt: text(root, 'system_prompt', ''),
    postHistoryInstructions: text(root, 'post_history_instructions', ''),
    alternateGreetings: texts(root, 'alternate_greetings', ''),
    tags: texts(root, 'tags', '', true),
    creator: text(root, 'creator', ''),
    characterVersion: text(root, 'character_version', ''),
    extraFields: unknownFields(root, V1_FIELDS),
    origin: { spec: 'v1', specVersion: null, container },
  };
}

/** A card from its parsed JSON (any spec), or a CardProblem. */
function fromJsonValue(json: unknown, container: CardOrigin['container'], label: string): CharacterCard {
  if (!isRecord(json)) return problem('card.invalid_card', `${label} does not hold a character card object.`);
  const spec = json.spec;
  const specVersion = typeof json.spec_version === 'string' ? json.spec_version : null;
  if (spec === 'chara_card_v3') return fromV2orV3(json, { spec: 'v3', specVersion, container });
  if (spec === 'chara_card_v2') return fromV2orV3(json, { spec: 'v2', specVersion, container });
  if (spec === 'lorebook_v3' || (spec === undefined && isRecord(json.entries))) {
    return problem(
      'card.unsupported_spec',
      `${label} is a lorebook, not a character card: import it as a lorebook.`,
    );
  }
  if (spec !== undefined) {
    return problem(
      'card.unsupported_spec',
      `${label} has an unsupported card spec ${JSON.stringify(spec).slice(0, 60)} (expected chara_card_v2 or chara_card_v3).`,
    );
  }
  if (typeof json.name === 'string') return fromV1(json, container);
  return problem(
    'card.unsupported_spec',
    `${label} has no card spec and no character name: it is not a character card.`,
  );
}

function parseJsonText(source: string, label: string): unknown {
  try {
    return JSON.parse(source);
  } catch (e) {
    return problem(
      'card.invalid_json',
      `${label} is not valid JSON (${e instanceof Error ? e.message : String(e)}).`,
    );
  }
}

const CARD_KEYWORDS = new Set(['chara', 'ccv3']);

function cardKeyword(chunk: PngChunk): string | null {
  if (chunk.type !== 'tEXt' && chunk.type !== 'iTXt' && chunk.type !== 'zTXt') return null;
  const nul = chunk.data.indexOf(0);
  if (nul <= 0 || nul > 79) return null;
  const keyword = String.fromCharCode(...chunk.data.subarray(0, nul)).toLowerCase();
  return CARD_KEYWORDS.has(keyword) ? keyword : null;
}

function fromPng(bytes: Uint8Array, label: string): CharacterCard {
  const read = readPngChunks(bytes, label);
  if (!read.ok) return problem(read.error.code, read.error.message);
  const chunks = read.value;
  const find = (keyword: string) => chunks.find((c) => c.type === 'tEXt' && cardKeyword(c) === keyword);
  const chunk = find('ccv3') ?? find('chara');
  if (!chunk) {
    return problem(
      'card.no_card_data',
      `${label} is a PNG without character data (no \`chara\` or \`ccv3\` text chunk).`,
    );
  }
  const where = `The \`${cardKeyword(chunk)}\` chunk of ${label}`;
  if (chunk.data.length > MAX_CARD_CHUNK_BYTES) {
    return problem(
      'card.chunk_too_large',
      `${where} is ${chunk.data.length} bytes, over the ${MAX_CARD_CHUNK_BYTES}-byte limit for card data.`,
    );
  }
  const payload = decodeTextChunk(chunk.data)!.text;
  const decoded = decodeBase64(payload);
  if (decoded === null) return problem('card.invalid_base64', `${where} is not valid base64.`);
  const json = parseJsonText(utf8.decode(decoded), where);
  const card = fromJsonValue(json, 'png', where);
  const avatar = encodePng(chunks.filter((c) => cardKeyword(c) === null));
  return { ...card, avatar };
}

/** The archive path of the card's main embedded icon (`embeded://path`), if any. */
function embeddedIconPath(assets: CardAsset[] | null): string | null {
  const icons = (assets ?? []).filter((a) => a.type === 'icon' && /^embedd?ed:\/\//.test(a.uri));
  const icon = icons.find((a) => a.name === 'main') ?? icons[0];
  return icon ? icon.uri.replace(/^embedd?ed:\/\//, '') : null;
}

/**
 * A CHARX card: `card.json` at the root of a ZIP, the avatar from the main embedded `icon` asset
 * when it is a PNG. Other embedded assets are not extracted; their entries stay in `assets`.
 */
function fromCharx(bytes: Uint8Array, label: string): CharacterCard {
  const read = readZipFiles(bytes, new Set(['card.json']), MAX_CARD_JSON_BYTES);
  if (read.kind === 'invalid')
    return problem('card.invalid_charx', `${label} is not a readable CHARX (ZIP) file: ${read.message}.`);
  if (read.kind === 'too_large') {
    return problem(
      'card.too_large',
      `card.json in ${label} is ${read.size} bytes, over the ${MAX_CARD_JSON_BYTES}-byte limit.`,
    );
  }
  const file = read.files.get('card.json');
  if (!file) return problem('card.invalid_charx', `${label} is a ZIP file without a card.json at its root.`);
  const where = `card.json in ${label}`;
  const card = fromJsonValue(parseJsonText(utf8.decode(file), where), 'charx', where);
  const iconPath = embeddedIconPath(card.assets);
  let avatar: Uint8Array | null = null;
  if (iconPath !== null) {
    const icon = readZipFiles(bytes, new Set([iconPath]), MAX_CHARX_ICON_BYTES);
    const image = icon.kind === 'ok' ? icon.files.get(iconPath) : undefined;
    const chunks = image && isPng(image) ? readPngChunks(image) : null;
    if (chunks?.ok) avatar = encodePng(chunks.value.filter((c) => cardKeyword(c) === null));
  }
  return { ...card, avatar };
}

function sniff(bytes: Uint8Array): string | null {
  const at = (i: number, ...b: number[]) => b.every((x, k) => bytes[i + k] === x);
  if (at(0, 0xff, 0xd8, 0xff)) return 'a JPEG image (cards are PNG or JSON)';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50))
    return 'a WebP image (cards are PNG or JSON)';
  if (at(0, 0x47, 0x49, 0x46)) return 'a GIF image (cards are PNG or JSON)';
  return null;
}

/**
 * A character card from a file's bytes: a PNG with `ccv3`/`chara` chunks, a JSON card (V1, V2,
 * V3) or a CHARX archive. `fileName` is used in messages and to recognise JSON. Never throws; refusals name the problem.
 */
export function parseCard(bytes: Uint8Array, fileName: string): Result<CharacterCard, HearthError> {
  const label = fileName ? `"${fileName}"` : 'The file';
  try {
    if (isPng(bytes)) return ok(fromPng(bytes, label));
    if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) {
      return ok(fromCharx(bytes, label));
    }
    const other = sniff(bytes);
    if (other !== null) return err(hearthError('card.unsupported_format', `${label} is ${other}.`));
    let start = 0;
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
    while (
      start < bytes.length &&
      (bytes[start] === 0x20 || bytes[start] === 0x0a || bytes[start] === 0x0d || bytes[start] === 0x09)
    )
      start++;
    const looksJson = bytes[start] === 0x7b || bytes[start] === 0x5b || /\.json$/i.test(fileName);
    if (!looksJson) {
      return err(
        hearthError(
          'card.unsupported_format',
          `${label} is not a character card (expected a PNG card or a JSON card).`,
        ),
      );
    }
    if (bytes.length > MAX_CARD_JSON_BYTES) {
      return err(
        hearthError(
          'card.too_large',
          `${label} is ${bytes.length} bytes, over the ${MAX_CARD_JSON_BYTES}-byte limit.`,
        ),
      );
    }
    const json = parseJsonText(utf8.decode(bytes), label);
    return ok(fromJsonValue(json, 'json', label));
  } catch (e) {
    if (e instanceof CardProblem) return err(hearthError(e.code, e.message));
    return err(
      hearthError(
        'card.invalid_card',
        `${label} could not be read: ${e instanceof Error ? e.message : String(e)}`,
      ),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// writing

const nonNull = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/** The card as V2 or V3 JSON (SillyTavern writes the same object under both specs). */
export function cardToJson(card: CharacterCard, spec: 'v2' | 'v3'): JsonObject {
  const data = withExtra(card.extraData, {
    name: card.name,
    description: card.description,
    personality: card.personality,
    scenario: card.scenario,
    first_mes: card.firstMes,
    mes_example: card.mesExample,
    creator_notes: card.creatorNotes,
    system_prompt: card.systemPrompt,
    post_history_instructions: card.postHistoryInstructions,
    alternate_greetings: [...card.alternateGreetings],
    group_only_greetings: [...card.groupOnlyGreetings],
    tags: [...card.tags],
    creator: card.creator,
    character_version: card.characterVersion,
    extensions: structuredClone(card.extensions),
    character_book: card.characterBook === null ? undefined : exportCharacterBook(card.characterBook),
    nickname: nonNull(card.nickname),
    creator_notes_multilingual: nonNull(card.creatorNotesMultilingual),
    source: card.source === null ? undefined : [...card.source],
    assets:
      card.assets === null
        ? undefined
        : card.assets.map((a) => withExtra(a.extra, { type: a.type, uri: a.uri, name: a.name, ext: a.ext })),
    creation_date: nonNull(card.creationDate),
    modification_date: nonNull(card.modificationDate),
  });
  const known: Record<string, JsonValue | undefined> = {
    spec: spec === 'v2' ? 'chara_card_v2' : 'chara_card_v3',
    spec_version: spec === 'v2' ? '2.0' : '3.0',
    // V1 copies for readers that only know V1.
    name: card.name,
    description: card.description,
    personality: card.personality,
    scenario: card.scenario,
    first_mes: card.firstMes,
    mes_example: card.mesExample,
    tags: [...card.tags],
    creatorcomment: card.creatorNotes,
    data,
  };
  return withExtra(card.extraFields, known);
}

/** The card as a V3 JSON file. */
export const exportCardJson = (card: CharacterCard): string =>
  JSON.stringify(cardToJson(card, 'v3'), null, 2);

const textChunk = (keyword: string, json: JsonObject): PngChunk =>
  encodeTextChunk(keyword, encodeBase64(utf8.encode(JSON.stringify(json))));

/**
 * `avatarPng` with the card written in: a `chara` chunk (V2, for older readers) and a `ccv3` chunk
 * (V3), both before IEND; existing card chunks are replaced. Fails only if `avatarPng` is not a
 * readable PNG.
 */
export function exportCardPng(card: CharacterCard, avatarPng: Uint8Array): Result<Uint8Array, HearthError> {
  const read = readPngChunks(avatarPng, 'The avatar image');
  if (!read.ok) return read;
  const kept = read.value.filter((c) => cardKeyword(c) === null);
  const iend = kept.pop()!;
  return ok(
    encodePng([
      ...kept,
      textChunk('chara', cardToJson(card, 'v2')),
      textChunk('ccv3', cardToJson(card, 'v3')),
      iend,
    ]),
  );
}
