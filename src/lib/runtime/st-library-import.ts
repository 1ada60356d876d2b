import { chatTitleFromFileName, parseChatJsonl } from '$lib/chat/chat-jsonl';
import type { CharacterRecord, LorebookRecord, LorebookSource, PersonaRecord } from '$lib/chat/records';
import {
  cardWorld,
  characterNoteOf,
  chatPersona,
  chatWorld,
  extraBooksOf,
  libraryChatNote,
  planPersonas,
  planStLibrary,
  readStSettings,
  type StLibraryFile,
  type StLibraryLimits,
  type StLibraryPlan,
  type StLibrarySkip,
  type StSettings,
} from '$lib/chat/st-library';
import { utf8 } from '$lib/domain/base64';
import { hearthError, HearthFailure, toHearthError } from '$lib/domain/errors';
import type { CharacterStore, LorebookStore, PersonaStore } from '$lib/ports/characters';
import type { ChatStore } from '$lib/ports/chats';
import type { PresetStore } from '$lib/ports/presets';
import { presetFromSillyTavern } from '$lib/chat/preset/sillytavern';
import { DEFAULT_AUTHORS_NOTE } from '$lib/chat/prompt/authors-note';
import type { Ids } from '$lib/ports/clock';
import type { ChatService } from './chats';
import {
  createPersona,
  MAX_AVATAR_BYTES,
  MAX_CARD_FILE_BYTES,
  MAX_LOREBOOK_FILE_BYTES,
  personaAvatar,
  readCardFile,
  readWorldInfoFile,
  saveImportedCard,
  saveImportedLorebook,
  storedCard,
} from './imported-content';

/**
 * Bringing a whole SillyTavern library over (a user-data folder or its backup zip), through the
 * same imports as one card, one chat, one lorebook and one persona. Nothing already in Hearth is
 * changed; the only setting it may set is the default persona, when Hearth has none.
 */

/** What bringing a SillyTavern library over did. Paths are as chosen (the zip's entry names). */
export interface StLibrarySummary {
  characters: { id: string; name: string; path: string }[];
  chats: {
    id: string;
    characterId: string;
    characterName: string;
    title: string;
    messages: number;
    path: string;
    /** Lines of the file that were skipped or repaired. */
    problems: { line: number; message: string }[];
  }[];
  /** Every lorebook it added, as the Lorebooks page lists them: world files and books cards carry. */
  lorebooks: { id: string; name: string; path: string; source: LorebookSource | null }[];
  /** Chat Completion presets, each with what was left out of it (secrets, values out of range). */
  presets: { id: string; name: string; path: string; problems: string[] }[];
  /** The preset SillyTavern had selected, made the one new chats use, if Hearth had none. */
  selectedPreset: { id: string; name: string } | null;
  personas: { id: string; name: string; path: string }[];
  /** The imported persona made the default, if any. */
  defaultPersona: { id: string; name: string } | null;
  /** Lorebooks attached as the library had them: to every chat, to a character, to a chat. */
  attachments: { lorebook: string; scope: 'global' | 'character' | 'chat'; target: string }[];
  /** Files not imported (and attachments not made), each with why; the same already in Hearth among them. */
  skipped: { path: string; reason: string }[];
}

export type StLibraryUpdate =
  | { type: 'progress'; done: number; total: number; current: string }
  | { type: 'done'; summary: StLibrarySummary };

export interface StLibraryDeps {
  stores: {
    characters: CharacterStore;
    lorebooks: LorebookStore;
    personas: PersonaStore;
    chats: ChatStore;
    presets: PresetStore;
  };
  chats: Pick<ChatService, 'importJsonl' | 'setAuthorsNote'>;
  ids: Ids;
}

const LIMITS: StLibraryLimits = {
  maxFiles: 100_000,
  cardBytes: MAX_CARD_FILE_BYTES,
  lorebookBytes: MAX_LOREBOOK_FILE_BYTES,
  /** A chat is read whole; long roleplays with many swipes reach tens of megabytes. */
  chatBytes: 256 * 1024 * 1024,
  settingsBytes: 32 * 1024 * 1024,
  avatarBytes: MAX_AVATAR_BYTES,
};

const UNCHANGED = 'already in Hearth, unchanged';

/** The chosen files by path, and how to read one. */
export interface LibraryFiles {
  files: StLibraryFile[];
  read(path: string): Promise<Uint8Array>;
  skipped: StLibrarySkip[];
}

/** Structural equality of stored values: key order does not matter, an absent key equals `undefined`. */
function sameContent(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return (
      a instanceof Uint8Array &&
      b instanceof Uint8Array &&
      a.length === b.length &&
      a.every((x, i) => x === b[i])
    );
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameContent(x, b[i]))
    );
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  return [...keys].every((k) => sameContent(ra[k], rb[k]));
}

const message = (e: unknown) => toHearthError(e).message;

/** Imports the library, calling `progress` before each file; resolves with what it did. */
export async function importStLibrary(
  deps: StLibraryDeps,
  library: LibraryFiles,
  progress: (update: StLibraryUpdate) => void,
  signal: AbortSignal,
): Promise<StLibrarySummary> {
  const { characters, lorebooks, personas, chats } = deps.stores;
  const content = { ...deps.stores, ids: deps.ids };
  const planned = planStLibrary(library.files, LIMITS);
  if (!planned.ok) throw new HearthFailure(planned.error);
  const plan: StLibraryPlan = planned.value;
  const summary: StLibrarySummary = {
    characters: [],
    chats: [],
    lorebooks: [],
    presets: [],
    selectedPreset: null,
    personas: [],
    defaultPersona: null,
    attachments: [],
    skipped: [...library.skipped, ...plan.skipped],
  };
  const skip = (path: string, reason: string) => summary.skipped.push({ path, reason });

  let settings: StSettings = {
    personas: [],
    defaultPersona: null,
    globalBooks: [],
    characterBooks: [],
    selectedPreset: null,
    characterNotes: [],
    noteDefaults: {},
  };
  if (plan.settings) {
    try {
      const read = readStSettings(JSON.parse(utf8.decode(await library.read(plan.settings))));
      if (!read.ok) throw new HearthFailure(read.error);
      settings = read.value;
    } catch (e) {
      skip(
        plan.settings,
        `not imported: ${e instanceof SyntaxError ? `not valid JSON (${e.message})` : message(e)}`,
      );
    }
  }
  const personaPlan = planPersonas(settings, plan.avatars);
  summary.skipped.push(...personaPlan.skipped);

  const total =
    plan.presets.length +
    plan.lorebooks.length +
    plan.cards.length +
    plan.chats.length +
    personaPlan.personas.length;
  let done = 0;
  /** Set when the browser's storage is full: nothing more can be saved, so nothing more is tried. */
  let full: string | null = null;
  async function step(path: string, work: () => Promise<void>) {
    if (signal.aborted) throw new HearthFailure(hearthError('rpc.cancelled', 'The import was stopped.'));
    progress({ type: 'progress', done, total, current: path });
    if (full) skip(path, `not imported: ${full}`);
    else {
      try {
        await work();
      } catch (e) {
        const error = toHearthError(e);
        if (error.code === 'storage.quota_exceeded') full = error.message;
        skip(path, `not imported: ${error.message}`);
      }
    }
    done++;
  }

  const [existingBooks, existingCharacters, existingPersonas] = await Promise.all([
    lorebooks.list(),
    characters.list(),
    personas.list(),
  ]);

  /** Presets by name: imported now, or the same one already in Hearth. */
  const existingPresets = await deps.stores.presets.list();
  const presetsByName = new Map<string, { id: string; name: string }>();
  for (const file of plan.presets) {
    await step(file.path, async () => {
      let json: unknown;
      try {
        json = JSON.parse(utf8.decode(await library.read(file.path)));
      } catch (e) {
        throw new HearthFailure(hearthError('preset.invalid', `not valid JSON (${message(e)})`));
      }
      const read = presetFromSillyTavern(json, file.name);
      if (!read.ok) throw new HearthFailure(read.error);
      const same = existingPresets.records.find((r) => sameContent(r.preset, read.value.preset));
      if (same) {
        presetsByName.set(file.name, { id: same.id, name: same.preset.name });
        skip(file.path, UNCHANGED);
        return;
      }
      const now = Date.now();
      const id = deps.ids.contentId('preset');
      await deps.stores.presets.put({ id, preset: read.value.preset, createdAt: now, updatedAt: now });
      presetsByName.set(file.name, { id, name: read.value.preset.name });
      summary.presets.push({
        id,
        name: read.value.preset.name,
        path: file.path,
        problems: read.value.problems,
      });
    });
  }

  /** Lorebooks by world name: imported now, or the same one already in Hearth. */
  const worlds = new Map<string, LorebookRecord>();
  const newBooks = new Set<string>();
  for (const file of plan.lorebooks) {
    await step(file.path, async () => {
      const book = readWorldInfoFile(file.fileName, await library.read(file.path));
      const same = existingBooks.records.find((r) => sameContent(r.book, book));
      if (same) {
        worlds.set(file.worldName, same);
        skip(file.path, UNCHANGED);
        return;
      }
      const record = await saveImportedLorebook(content, file.fileName, book);
      worlds.set(file.worldName, record);
      newBooks.add(record.id);
      summary.lorebooks.push(addedBook(record, file.path));
    });
  }
  const missingBook = (name: string) =>
    `lorebook “${name}” not attached: worlds/${name}.json is not in the library or could not be imported`;

  /** Characters by card path: imported now, or the same one already in Hearth. */
  const cast = new Map<string, CharacterRecord>();
  const newCharacters = new Set<string>();
  for (const file of plan.cards) {
    await step(file.path, async () => {
      const card = readCardFile(file.fileName, await library.read(file.path));
      const note = characterNoteOf(settings, file);
      const same = existingCharacters.records.find(
        (c) => sameContent(c.card, storedCard(card)) && sameContent(c.avatar, card.avatar ?? undefined),
      );
      if (same) {
        cast.set(file.path, same);
        skip(file.path, UNCHANGED);
        if (note && !sameContent(same.note, note))
          skip(
            file.path,
            `author's note of “${same.card.name}” not set: Hearth’s character is kept as it is`,
          );
        return;
      }
      // The world the card links is the live copy of its embedded book (SillyTavern writes the
      // embedded one from it on export), so the library's file wins over the card's copy.
      const world = cardWorld(card.extensions);
      const linked = world ? worlds.get(world) : undefined;
      if (world && !linked && !card.characterBook) skip(file.path, missingBook(world));
      const extra: LorebookRecord[] = [];
      for (const name of extraBooksOf(settings, file)) {
        const book = worlds.get(name);
        if (!book) skip(file.path, missingBook(name));
        else if (book.id !== linked?.id) extra.push(book);
      }
      const { character, lorebook } = await saveImportedCard(
        content,
        file.fileName,
        card,
        { linked: linked?.id, extra: extra.map((b) => b.id) },
        note,
      );
      cast.set(file.path, character);
      newCharacters.add(character.id);
      summary.characters.push({ id: character.id, name: character.card.name, path: file.path });
      if (lorebook) summary.lorebooks.push(addedBook(lorebook, file.path));
      for (const book of [linked ?? lorebook, ...extra]) {
        if (book)
          summary.attachments.push({
            lorebook: book.book.name,
            scope: 'character',
            target: character.card.name,
          });
      }
    });
  }

  /** Personas by their SillyTavern avatar file: before the chats, which name the one they are locked to. */
  const cameAs = new Map<string, PersonaRecord>();
  for (const persona of personaPlan.personas) {
    const path = persona.avatarPath ?? plan.settings!;
    await step(path, async () => {
      let avatar: Uint8Array | undefined;
      if (persona.avatarPath) {
        try {
          avatar = personaAvatar(await library.read(persona.avatarPath));
        } catch (e) {
          skip(persona.avatarPath, `image of persona “${persona.name}” not imported: ${message(e)}`);
        }
      }
      const same = existingPersonas.records.find(
        (p) =>
          p.name === persona.name && p.description === persona.description && sameContent(p.avatar, avatar),
      );
      if (same) {
        cameAs.set(persona.avatarFile, same);
        skip(path, `persona “${persona.name}” ${UNCHANGED}`);
        return;
      }
      const record = await createPersona(content, {
        name: persona.name,
        description: persona.description,
        avatar,
      });
      cameAs.set(persona.avatarFile, record);
      summary.personas.push({ id: record.id, name: record.name, path });
    });
  }

  for (const file of plan.chats) {
    await step(file.path, async () => {
      const character = cast.get(file.cardPath);
      if (!character) {
        skip(file.path, `not imported: its card ${file.cardPath} was not imported`);
        return;
      }
      const bytes = await library.read(file.path);
      const parsed = parseChatJsonl(utf8.decode(bytes));
      if (!parsed.ok) throw new HearthFailure(parsed.error);
      const { messages, header } = parsed.value.transcript;
      const title = chatTitleFromFileName(file.fileName);
      if (!newCharacters.has(character.id)) {
        for (const chat of await chats.list(character.id)) {
          if (chat.title !== title) continue;
          const rows = (await chats.messages(chat.id)).map(({ chatId: _c, index: _i, ...m }) => m);
          if (sameContent(rows, messages)) {
            skip(file.path, UNCHANGED);
            return;
          }
        }
      }
      const world = chatWorld(header.chatMetadata);
      const book = world ? worlds.get(world) : undefined;
      if (world && !book) skip(file.path, missingBook(world));
      const locked = chatPersona(header.chatMetadata);
      const persona = locked ? cameAs.get(locked) : undefined;
      if (locked && !persona)
        skip(
          file.path,
          `persona ${locked} not set: it was not imported, so the chat uses the default persona`,
        );
      const { chat, problems } = await deps.chats.importJsonl(character.id, file.fileName, bytes, {
        lorebookIds: book ? [book.id] : [],
        personaId: persona?.id ?? null,
      });
      const note = libraryChatNote(settings, header.chatMetadata);
      if (!sameContent(note, chat.authorsNote ?? DEFAULT_AUTHORS_NOTE))
        await deps.chats.setAuthorsNote(chat.id, note);
      summary.chats.push({
        id: chat.id,
        characterId: character.id,
        characterName: character.card.name,
        title: chat.title,
        messages: messages.length,
        path: file.path,
        problems,
      });
      if (book) summary.attachments.push({ lorebook: book.book.name, scope: 'chat', target: chat.title });
    });
  }

  if (plan.settings && !full && settings.selectedPreset) {
    const chosen = presetsByName.get(settings.selectedPreset);
    if (!chosen) {
      skip(plan.settings, `selected preset “${settings.selectedPreset}” not chosen: it was not imported`);
    } else if ((await deps.stores.presets.selectedId()) === null) {
      await deps.stores.presets.setSelectedId(chosen.id);
      summary.selectedPreset = chosen;
    } else {
      skip(plan.settings, `selected preset “${chosen.name}” not chosen: Hearth’s selected preset is kept`);
    }
  }
  if (plan.settings && !full) {
    await attachGlobal(
      lorebooks,
      settings.globalBooks,
      worlds,
      newBooks,
      summary,
      missingBook,
      plan.settings,
    );
    const chosen = settings.defaultPersona ? cameAs.get(settings.defaultPersona) : undefined;
    if (settings.defaultPersona && !chosen) {
      skip(plan.settings, `default persona ${settings.defaultPersona} not set: it was not imported`);
    } else if (chosen) {
      const current = await personas.defaultId();
      const kept = current ? await personas.get(current) : undefined;
      if (!kept) {
        await personas.setDefaultId(chosen.id);
        summary.defaultPersona = { id: chosen.id, name: chosen.name };
      } else if (kept.id !== chosen.id) {
        skip(
          plan.settings,
          `default persona “${chosen.name}” not set: Hearth’s default persona “${kept.name}” is kept`,
        );
      }
    }
  }
  progress({ type: 'progress', done, total, current: '' });
  return summary;
}

/** Books SillyTavern attaches to every chat; only those imported now are made global here. */
async function attachGlobal(
  lorebooks: LorebookStore,
  names: readonly string[],
  worlds: ReadonlyMap<string, LorebookRecord>,
  newBooks: ReadonlySet<string>,
  summary: StLibrarySummary,
  missingBook: (name: string) => string,
  settingsPath: string,
) {
  const added: LorebookRecord[] = [];
  for (const name of names) {
    const book = worlds.get(name);
    if (!book) summary.skipped.push({ path: settingsPath, reason: missingBook(name) });
    else if (newBooks.has(book.id)) added.push(book);
  }
  if (added.length === 0) return;
  const ids = await lorebooks.globalIds();
  await lorebooks.setGlobalIds([...ids, ...added.map((b) => b.id).filter((id) => !ids.includes(id))]);
  for (const book of added)
    summary.attachments.push({ lorebook: book.book.name, scope: 'global', target: '' });
}

const addedBook = (record: LorebookRecord, path: string): StLibrarySummary['lorebooks'][number] => ({
  id: record.id,
  name: record.book.name,
  path,
  source: record.source ?? null,
});
