import { hearthError, type HearthError } from '$lib/domain/errors';
import { err, ok, type Result } from '$lib/domain/result';
import { isRecord } from './json-fields';
import {
  authorsNoteFromMetadata,
  characterNoteFromSillyTavern,
  type AuthorsNote,
  type CharacterNote,
} from './prompt/authors-note';

/**
 * What each file of a SillyTavern user-data folder is (`data/<handle>/`, also a zip of it as
 * SillyTavern's backup writes it: the same layout, maybe under a leading folder): cards in
 * `characters/`, chats in `chats/<card file name without extension>/`, world info in `worlds/`,
 * personas in `settings.json` with their images in `User Avatars/`. Everything else is skipped
 * with a reason. Pure: it sees paths and sizes, never the bytes.
 */

/** A file of the library by its path relative to what the person chose. */
export interface StLibraryFile {
  path: string;
  size: number;
}

/** Largest files read, by kind, and how many files a library may hold. */
export interface StLibraryLimits {
  maxFiles: number;
  cardBytes: number;
  lorebookBytes: number;
  chatBytes: number;
  settingsBytes: number;
  avatarBytes: number;
}

export interface StLibrarySkip {
  path: string;
  reason: string;
}

export interface StCardFile {
  path: string;
  fileName: string;
  /** The file name without its extension: SillyTavern's name for the character's chats folder. */
  internalName: string;
}

export interface StLorebookFile {
  path: string;
  fileName: string;
  /** The file name without `.json`: the name cards, chats and settings use for the book. */
  worldName: string;
}

export interface StChatFile {
  path: string;
  fileName: string;
  /** The card whose chats folder holds this chat. */
  cardPath: string;
}

export interface StLibraryPlan {
  /** The user-data folder inside what was chosen: '' at the top, else ending in `/`. */
  root: string;
  lorebooks: StLorebookFile[];
  cards: StCardFile[];
  chats: StChatFile[];
  /** Chat Completion presets (`OpenAI Settings/*.json`), by file path; the name is the file's. */
  presets: { path: string; name: string }[];
  settings: string | null;
  /** `User Avatars/` by file name. */
  avatars: Map<string, string>;
  skipped: StLibrarySkip[];
}

/** What settings.json says about personas and where lorebooks are attached. */
export interface StSettings {
  personas: StPersona[];
  /** The avatar file of the default persona. */
  defaultPersona: string | null;
  /** Books attached to every chat, by world name. */
  globalBooks: string[];
  /** Extra books of characters: `character` is the card's file name (SillyTavern writes it without extension). */
  characterBooks: { character: string; books: string[] }[];
  /** The Chat Completion preset SillyTavern had selected (`preset_settings_openai`), by name. */
  selectedPreset: string | null;
  /** Characters' own author's notes: `character` is the card's file name without extension. */
  characterNotes: { character: string; note: CharacterNote }[];
  /** The default author's note, as the `chat_metadata.note_*` keys a chat without them takes. */
  noteDefaults: Record<string, unknown>;
}

export interface StPersona {
  /** The file in `User Avatars/` that is the persona's id in SillyTavern. */
  avatarFile: string;
  name: string;
  description: string;
}

/** The top-level folders and files of a user-data folder, and why each is not imported. */
const NOT_IMPORTED: Record<string, string> = {
  groups: 'group definitions (Hearth has no group chats)',
  'group chats': 'group chats (Hearth has no group chats)',
  themes: 'themes (Hearth has its own look)',
  backgrounds: 'chat backgrounds',
  thumbnails: 'thumbnails (made again from the avatars)',
  'secrets.json': 'API keys never leave SillyTavern: add them in Connections',
  'stats.json': 'usage statistics',
  user: 'uploaded files and workflows',
  extensions: 'SillyTavern extensions (Hearth extensions are installed in Extensions)',
  vectors: 'vector storage',
  backups: 'SillyTavern backups',
  assets: 'assets',
  QuickReplies: 'quick replies',
  instruct: 'instruct templates',
  context: 'context templates',
  sysprompt: 'system prompt presets',
  movingUI: 'UI layouts',
  'KoboldAI Settings': 'generation presets',
  'NovelAI Settings': 'generation presets',
  'TextGen Settings': 'generation presets',
};

/** Folders only a user-data folder has, by which it is found inside what was chosen. */
const MARKERS = new Set([
  'characters',
  'chats',
  'worlds',
  'User Avatars',
  'groups',
  'group chats',
  'themes',
  'backgrounds',
  'thumbnails',
]);
/** How deep the user-data folder may sit: `data/<handle>/` chosen as `data`. */
const MAX_ROOT_DEPTH = 2;

const CARD_EXTENSION = /\.(png|json|charx)$/i;
const AVATAR_EXTENSION = /\.(png|jpe?g|webp|gif)$/i;
const withoutExtension = (name: string) => name.replace(/\.[^.]*$/, '');

/** `a\b/./c` as `a/b/c`; null when it climbs out (`..`) or is empty. */
function cleanPath(raw: string): string | null {
  const segments = raw
    .replaceAll('\\', '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  if (segments.length === 0 || segments.includes('..')) return null;
  return segments.join('/');
}

/** The user-data folder: the shallowest folder holding `characters/`, `settings.json`, …. */
function findRoot(paths: readonly string[]): Result<string, HearthError> {
  const found = new Map<number, Set<string>>();
  for (const path of paths) {
    const segments = path.split('/');
    for (let depth = 0; depth <= Math.min(MAX_ROOT_DEPTH, segments.length - 1); depth++) {
      const rest = segments.slice(depth);
      const marker = rest[0]!;
      const isMarker = rest.length > 1 ? MARKERS.has(marker) : marker === 'settings.json';
      if (!isMarker) continue;
      const prefix = segments
        .slice(0, depth)
        .map((s) => `${s}/`)
        .join('');
      found.set(depth, (found.get(depth) ?? new Set()).add(prefix));
      break;
    }
  }
  const shallowest = Math.min(...found.keys());
  const roots = [...(found.get(shallowest) ?? [])];
  if (roots.length === 0) {
    return err(
      hearthError(
        'library.invalid',
        'This is not a SillyTavern user-data folder: there is no characters/, chats/, worlds/ or settings.json in it.',
      ),
    );
  }
  if (roots.length > 1) {
    return err(
      hearthError(
        'library.invalid',
        `This holds several SillyTavern user folders (${roots.sort().join(', ')}): choose one of them.`,
      ),
    );
  }
  return ok(roots[0]!);
}

const overLimit = (file: StLibraryFile, limit: number) =>
  `not imported: ${file.size} bytes, over the ${limit}-byte limit`;

/**
 * Sorts a library's files into what is imported and what is skipped (with why). Fails only when
 * the whole choice is not one SillyTavern user-data folder, or holds more than `maxFiles` files.
 */
export function planStLibrary(
  files: readonly StLibraryFile[],
  limits: StLibraryLimits,
): Result<StLibraryPlan, HearthError> {
  if (files.length > limits.maxFiles) {
    return err(
      hearthError(
        'library.too_large',
        `This folder holds ${files.length} files, over the ${limits.maxFiles}-file limit: choose the user folder itself (data/default-user), not a folder above it.`,
      ),
    );
  }
  const skipped: StLibrarySkip[] = [];
  const clean: StLibraryFile[] = [];
  for (const file of files) {
    const path = cleanPath(file.path);
    if (path === null)
      skipped.push({ path: file.path, reason: 'not imported: not a path inside the folder' });
    else clean.push({ path, size: file.size });
  }
  // In path order, whatever order the folder or zip listed them in.
  clean.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const rooted = findRoot(clean.map((f) => f.path));
  if (!rooted.ok) return rooted;
  const root = rooted.value;
  const plan: StLibraryPlan = {
    root,
    lorebooks: [],
    cards: [],
    chats: [],
    presets: [],
    settings: null,
    avatars: new Map(),
    skipped,
  };
  /** Chats by the folder they are in; matched to cards once every card is known. */
  const chatFolders: { file: StLibraryFile; folder: string; fileName: string }[] = [];
  const skip = (path: string, reason: string) => skipped.push({ path, reason });

  for (const file of clean) {
    if (!file.path.startsWith(root)) {
      skip(file.path, 'not imported: outside the SillyTavern user folder');
      continue;
    }
    const segments = file.path.slice(root.length).split('/');
    const [top, ...rest] = segments as [string, ...string[]];
    const fileName = segments.at(-1)!;
    if (rest.length === 0 && top === 'settings.json') {
      if (file.size > limits.settingsBytes) skip(file.path, overLimit(file, limits.settingsBytes));
      else plan.settings = file.path;
    } else if (top === 'characters') {
      if (rest.length > 1) skip(file.path, 'not imported: character expression images');
      else if (!CARD_EXTENSION.test(fileName))
        skip(file.path, 'not imported: not a character card (PNG, JSON or CHARX)');
      else if (file.size > limits.cardBytes) skip(file.path, overLimit(file, limits.cardBytes));
      else plan.cards.push({ path: file.path, fileName, internalName: withoutExtension(fileName) });
    } else if (top === 'chats') {
      if (rest.length !== 2) skip(file.path, 'not imported: a chat is in the folder of its character');
      else if (!/\.jsonl$/i.test(fileName)) skip(file.path, 'not imported: not a chat file (.jsonl)');
      else if (file.size > limits.chatBytes) skip(file.path, overLimit(file, limits.chatBytes));
      else chatFolders.push({ file, folder: rest[0]!, fileName });
    } else if (top === 'worlds') {
      if (rest.length > 1 || !/\.json$/i.test(fileName))
        skip(file.path, 'not imported: not a lorebook (.json)');
      else if (file.size > limits.lorebookBytes) skip(file.path, overLimit(file, limits.lorebookBytes));
      else plan.lorebooks.push({ path: file.path, fileName, worldName: withoutExtension(fileName) });
    } else if (top === 'OpenAI Settings') {
      if (rest.length > 1 || !/\.json$/i.test(fileName))
        skip(file.path, 'not imported: not a Chat Completion preset (.json)');
      else if (file.size > limits.lorebookBytes) skip(file.path, overLimit(file, limits.lorebookBytes));
      else plan.presets.push({ path: file.path, name: withoutExtension(fileName) });
    } else if (top === 'User Avatars') {
      if (rest.length > 1 || !AVATAR_EXTENSION.test(fileName))
        skip(file.path, 'not imported: not a persona image');
      else if (file.size > limits.avatarBytes) skip(file.path, overLimit(file, limits.avatarBytes));
      else plan.avatars.set(fileName, file.path);
    } else {
      skip(
        file.path,
        `not imported: ${NOT_IMPORTED[top] ?? 'not part of a SillyTavern library Hearth reads'}`,
      );
    }
  }

  // SillyTavern names a character's chats folder after its card file; it writes PNG cards only,
  // so a PNG wins over a JSON or CHARX card of the same name.
  const cardByFolder = new Map<string, StCardFile>();
  for (const card of plan.cards) {
    const held = cardByFolder.get(card.internalName);
    if (!held || (!/\.png$/i.test(held.fileName) && /\.png$/i.test(card.fileName))) {
      cardByFolder.set(card.internalName, card);
    }
  }
  for (const { file, folder, fileName } of chatFolders) {
    const card = cardByFolder.get(folder);
    if (card) plan.chats.push({ path: file.path, fileName, cardPath: card.path });
    else skip(file.path, `not imported: there is no card characters/${folder}.png for this chat`);
  }
  return ok(plan);
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const names = (v: unknown): string[] =>
  Array.isArray(v) ? [...new Set(v.filter((x): x is string => typeof x === 'string' && x !== ''))] : [];

/**
 * Personas, lorebook attachments and characters' notes from settings.json: `power_user.personas`
 * {avatar file: name}, `power_user.persona_descriptions` {avatar file: {description, …}},
 * `power_user.default_persona`, `world_info_settings.world_info.globalSelect` and `.charLore`
 * [{name, extraBooks}], `extension_settings.note.chara` [{name, prompt, useChara, position}]
 * (authors-note.js AN:177-225) and the default note (`.default`, `.defaultPosition`, …). Anything else in it (generation settings, UI) is not Hearth's.
 * Fields of the wrong type read as absent.
 */
export function readStSettings(json: unknown): Result<StSettings, HearthError> {
  if (!isRecord(json)) return err(hearthError('library.invalid', 'settings.json is not a JSON object.'));
  const power = isRecord(json.power_user) ? json.power_user : {};
  const named = isRecord(power.personas) ? power.personas : {};
  const descriptions = isRecord(power.persona_descriptions) ? power.persona_descriptions : {};
  const personas: StPersona[] = [];
  for (const [avatarFile, name] of Object.entries(named)) {
    const described = descriptions[avatarFile];
    personas.push({
      avatarFile,
      name: text(name).trim() || withoutExtension(avatarFile),
      description: isRecord(described) ? text(described.description) : '',
    });
  }
  // Older settings keep the world info block at the top level (SillyTavern reads both).
  const wiSettings = isRecord(json.world_info_settings) ? json.world_info_settings : json;
  const worldInfo = isRecord(wiSettings.world_info) ? wiSettings.world_info : {};
  const characterBooks = (Array.isArray(worldInfo.charLore) ? worldInfo.charLore : [])
    .filter(isRecord)
    .map((lore) => ({ character: text(lore.name), books: names(lore.extraBooks) }))
    .filter((lore) => lore.character !== '' && lore.books.length > 0);
  const defaultPersona = text(power.default_persona);
  const extensions = isRecord(json.extension_settings) ? json.extension_settings : {};
  const noteSettings = isRecord(extensions.note) ? extensions.note : {};
  const characterNotes = (Array.isArray(noteSettings.chara) ? noteSettings.chara : [])
    .filter(isRecord)
    .map((entry) => ({ character: text(entry.name), note: characterNoteFromSillyTavern(entry) }))
    .filter((entry) => entry.character !== '');
  const noteDefaults = {
    note_prompt: noteSettings.default,
    note_interval: noteSettings.defaultInterval,
    note_position: noteSettings.defaultPosition,
    note_depth: noteSettings.defaultDepth,
    note_role: noteSettings.defaultRole,
  };
  return ok({
    characterNotes,
    noteDefaults,
    selectedPreset: text(json.preset_settings_openai) || null,
    personas,
    defaultPersona: defaultPersona === '' ? null : defaultPersona,
    globalBooks: names(worldInfo.globalSelect),
    characterBooks,
  });
}

/** A persona to import, with its image's path in the library (null: it has none there). */
export interface StPersonaPlan extends StPersona {
  avatarPath: string | null;
}

/** Personas with their images; images no persona uses are skipped. */
export function planPersonas(
  settings: StSettings,
  avatars: ReadonlyMap<string, string>,
): { personas: StPersonaPlan[]; skipped: StLibrarySkip[] } {
  const used = new Set(settings.personas.map((p) => p.avatarFile));
  return {
    personas: settings.personas.map((p) => ({ ...p, avatarPath: avatars.get(p.avatarFile) ?? null })),
    skipped: [...avatars]
      .filter(([fileName]) => !used.has(fileName))
      .map(([, path]) => ({ path, reason: 'not imported: no persona in settings.json uses this image' })),
  };
}

/** The books `settings.charLore` adds to a card (matched by its file name, with or without extension). */
export function extraBooksOf(settings: StSettings, card: StCardFile): string[] {
  return settings.characterBooks
    .filter((lore) => lore.character === card.internalName || lore.character === card.fileName)
    .flatMap((lore) => lore.books);
}

/** The card's own author's note in settings.json (matched by its file name, with or without extension). */
export function characterNoteOf(settings: StSettings, card: StCardFile): CharacterNote | null {
  return (
    settings.characterNotes.find(
      (entry) => entry.character === card.internalName || entry.character === card.fileName,
    )?.note ?? null
  );
}

/** The world a card links as its own (`data.extensions.world`), or null. */
export function cardWorld(extensions: Record<string, unknown>): string | null {
  return text(extensions.world).trim() || null;
}

/** The world a chat links (`chat_metadata.world_info`), or null. */
export function chatWorld(chatMetadata: Record<string, unknown>): string | null {
  return text(chatMetadata.world_info).trim() || null;
}

/** The persona a chat is locked to (`chat_metadata.persona`, its avatar file; personas.js:598, 657), or null. */
export function chatPersona(chatMetadata: Record<string, unknown>): string | null {
  return text(chatMetadata.persona).trim() || null;
}

/**
 * A library chat's author's note as SillyTavern opens it: each `note_*` key the chat has, else
 * the default from settings.json, else SillyTavern's own default (AN:237-262).
 */
export function libraryChatNote(settings: StSettings, chatMetadata: Record<string, unknown>): AuthorsNote {
  const keys = Object.keys(settings.noteDefaults);
  return authorsNoteFromMetadata(
    Object.fromEntries(keys.map((k) => [k, chatMetadata[k] ?? settings.noteDefaults[k]])),
  );
}
