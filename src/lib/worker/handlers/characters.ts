import { utf8 } from '$lib/domain/base64';
import {
  CharacterCardSchema,
  exportCardJson,
  exportCardPng,
  isFavorite,
  newCharacterCard,
  withFavorite,
} from '$lib/chat/card';
import { exportFileName, type CharacterRecord, type LorebookRecord } from '$lib/chat/records';
import { HearthFailure } from '$lib/domain/errors';
import type { RuntimeContext } from '../context';
import type { CharacterMethods, CharacterSummary, ExportedFile } from '../protocol';
import type { Handlers } from '../rpc';
import {
  characterAvatar,
  checkedCharacter,
  fail,
  readCardFile,
  requireName,
  saveImportedCard,
} from '$lib/runtime/imported-content';
import { ids, newId, withTransfer } from './content';

/** The card fields `characters.update` accepts; anything else is refused. */
const CardPatchSchema = CharacterCardSchema.pick({
  name: true,
  description: true,
  personality: true,
  scenario: true,
  firstMes: true,
  alternateGreetings: true,
  mesExample: true,
  creatorNotes: true,
  systemPrompt: true,
  postHistoryInstructions: true,
  tags: true,
  creator: true,
  characterVersion: true,
})
  .partial()
  .strict();

const byName = (a: { name: string }, b: { name: string }) =>
  a.name.localeCompare(b.name, undefined, { sensitivity: 'base' });

const tidyTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim()).filter((t) => t !== ''))];

/** Characters: SillyTavern cards stored in the `characters` table, their avatars and lorebooks. */
export function characterHandlers(ctx: RuntimeContext): Handlers<CharacterMethods, Record<never, never>> {
  const { characters, lorebooks, chats } = ctx.stores;
  const now = () => Date.now();

  const required = async (id: string): Promise<CharacterRecord> =>
    (await characters.get(id)) ?? fail('character.not_found', 'That character no longer exists.');

  /** Ids of existing lorebooks, each once, in the order given. */
  async function existingLorebooks(ids: unknown): Promise<string[]> {
    if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string')) {
      return fail('character.invalid', 'Attached lorebooks must be a list of lorebook ids.');
    }
    const unique = [...new Set(ids as string[])];
    for (const id of unique) {
      if (!(await lorebooks.get(id))) fail('lorebook.not_found', `There is no lorebook "${id}" to attach.`);
    }
    return unique;
  }

  /** The first attached lorebook that still exists: written as the card's `character_book`. */
  async function primaryLorebook(ids: readonly string[]): Promise<LorebookRecord | null> {
    for (const id of ids) {
      const book = await lorebooks.get(id).catch(() => undefined);
      if (book) return book;
    }
    return null;
  }

  const summary = (
    c: CharacterRecord,
    activity: { chats: number; lastChattedAt: number } | undefined,
  ): CharacterSummary => ({
    id: c.id,
    name: c.card.name,
    creator: c.card.creator,
    tags: c.card.tags,
    avatar: c.avatar ?? null,
    lorebookIds: c.lorebookIds,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    favorite: isFavorite(c.card),
    chats: activity?.chats ?? 0,
    lastChattedAt: activity?.lastChattedAt ?? null,
    searchText: [
      c.card.description,
      c.card.personality,
      c.card.scenario,
      c.card.creatorNotes,
      c.card.firstMes,
    ]
      .filter(Boolean)
      .join('\n'),
  });

  const file = (fileName: string, mimeType: string, bytes: Uint8Array) =>
    withTransfer<ExportedFile>({ fileName, mimeType, bytes }, [bytes]);

  return {
    methods: {
      async 'characters.list'() {
        const [{ records, issues }, activity] = await Promise.all([characters.list(), chats.activity()]);
        const list = records.map((c) => summary(c, activity.get(c.id))).sort(byName);
        return withTransfer(
          { characters: list, issues },
          list.map((c) => c.avatar),
        );
      },

      async 'characters.get'({ id }) {
        const c = await required(id);
        return withTransfer(c, [c.avatar]);
      },

      async 'characters.create'({ name }) {
        const t = now();
        const record: CharacterRecord = {
          id: newId('chr'),
          card: newCharacterCard(requireName(name, 'character.invalid', 'A character')),
          lorebookIds: [],
          createdAt: t,
          updatedAt: t,
        };
        await characters.put(checkedCharacter(record));
        return record;
      },

      async 'characters.update'({ id, card, avatar, lorebookIds, note }) {
        const current = await required(id);
        const next: CharacterRecord = { ...current, card: { ...current.card }, updatedAt: now() };
        if (card !== undefined) {
          const patch = CardPatchSchema.safeParse(card);
          if (!patch.success) {
            const first = patch.error.issues[0];
            fail(
              'character.invalid',
              `The character cannot be saved: ${first ? `${first.path.join('.') || 'card'}: ${first.message}` : 'invalid'}.`,
            );
          }
          Object.assign(next.card, patch.data);
          if (patch.data.name !== undefined) {
            next.card.name = requireName(patch.data.name, 'character.invalid', 'A character');
          }
          if (patch.data.tags !== undefined) next.card.tags = tidyTags(patch.data.tags);
          if (patch.data.alternateGreetings !== undefined) {
            next.card.alternateGreetings = patch.data.alternateGreetings.filter((g) => g.trim() !== '');
          }
        }
        if (avatar === null) delete next.avatar;
        else if (avatar !== undefined) next.avatar = characterAvatar(avatar);
        if (lorebookIds !== undefined) next.lorebookIds = await existingLorebooks(lorebookIds);
        if (note === null) delete next.note;
        else if (note !== undefined) next.note = note;
        await characters.put(checkedCharacter(next));
        return withTransfer(next, [next.avatar]);
      },

      async 'characters.setFavorite'({ id, favorite }) {
        const current = await required(id);
        const next: CharacterRecord = {
          ...current,
          card: { ...current.card, extensions: withFavorite(current.card.extensions, favorite === true) },
          updatedAt: now(),
        };
        await characters.put(checkedCharacter(next));
        // This character's chats only, by their index, newest first.
        const own = await chats.list(id);
        const s = summary(next, own[0] ? { chats: own.length, lastChattedAt: own[0].updatedAt } : undefined);
        return withTransfer(s, [s.avatar]);
      },

      async 'characters.duplicate'({ id }) {
        const source = await required(id);
        const t = now();
        const copy: CharacterRecord = {
          ...source,
          id: newId('chr'),
          card: { ...structuredClone(source.card), name: `${source.card.name} (copy)` },
          lorebookIds: [...source.lorebookIds],
          createdAt: t,
          updatedAt: t,
        };
        await characters.put(checkedCharacter(copy));
        return withTransfer(copy, [copy.avatar]);
      },

      async 'characters.delete'({ id }) {
        await characters.delete(id);
        // Skills only this character's card brought go with it (tools.md §16.3).
        await ctx.skills.forgetSource(`character:${id}`, { kind: 'character', characterId: id });
      },

      async 'characters.import'({ fileName, bytes }) {
        const result = await saveImportedCard({ characters, ids }, fileName, readCardFile(fileName, bytes));
        return withTransfer(result, [result.character.avatar]);
      },

      async 'characters.export'({ id, format }) {
        const c = await required(id);
        const book = await primaryLorebook(c.lorebookIds);
        const card = { ...c.card, characterBook: book?.book ?? null, avatar: null };
        const as = format ?? (c.avatar ? 'png' : 'json');
        if (as === 'png') {
          if (!c.avatar) {
            return fail(
              'character.no_avatar',
              `${c.card.name} has no avatar, so there is no PNG to write the card into: export it as JSON or add an avatar.`,
            );
          }
          const png = exportCardPng(card, c.avatar);
          if (!png.ok) throw new HearthFailure(png.error);
          return file(exportFileName(c.card.name, 'png', 'character'), 'image/png', png.value);
        }
        return file(
          exportFileName(c.card.name, 'json', 'character'),
          'application/json',
          utf8.encode(exportCardJson(card)),
        );
      },
    },
    streams: {},
  };
}
