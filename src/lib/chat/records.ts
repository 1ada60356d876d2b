import { z } from 'zod';
import { CharacterCardSchema } from './card';
import type { ChatMessage } from './chat-jsonl';
import { LorebookSchema } from './lorebook';
import { AuthorsNoteSchema, CharacterNoteSchema } from './prompt/authors-note';

/**
 * What Hearth keeps of characters, personas, lorebooks and chats (the Dexie rows decode through
 * these schemas). They live beside the card and lorebook schemas they embed: `domain/` may not
 * import `chat/`.
 */

const BytesSchema = z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected bytes');

/**
 * A character: its card and avatar. The card is stored with `avatar: null` and
 * `characterBook: null`: the avatar bytes are `avatar`, an embedded lorebook becomes a lorebook of
 * its own, attached in `lorebookIds`. The first attached lorebook is the character's own book,
 * written back as `character_book` when the card is exported (SillyTavern's primary lorebook).
 */
export const CharacterRecordSchema = z.object({
  id: z.string().min(1),
  card: CharacterCardSchema,
  /** A PNG without card chunks. */
  avatar: BytesSchema.optional(),
  lorebookIds: z.array(z.string()),
  /** The character's own author's note, for every chat with it (SillyTavern's `note.chara`). */
  note: CharacterNoteSchema.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type CharacterRecord = z.infer<typeof CharacterRecordSchema>;

/** Who the person is in a chat (`{{user}}`, `{{persona}}`). */
export const PersonaRecordSchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  description: z.string(),
  /** An image (PNG, JPEG, WebP, GIF) as uploaded. */
  avatar: BytesSchema.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type PersonaRecord = z.infer<typeof PersonaRecordSchema>;

/** The person's name in chats without a persona: in messages, `{{user}}` and exports alike. */
export const NO_PERSONA_NAME = 'User';

/** Where a lorebook came from: a world info file, or a card's embedded `character_book`. */
export const LorebookSourceSchema = z.object({
  kind: z.enum(['worldInfo', 'card']),
  fileName: z.string(),
  /** For `card`: the character imported with it. */
  characterId: z.string().optional(),
});
export type LorebookSource = z.infer<typeof LorebookSourceSchema>;

export const LorebookRecordSchema = z.object({
  id: z.string().min(1),
  book: LorebookSchema,
  source: LorebookSourceSchema.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type LorebookRecord = z.infer<typeof LorebookRecordSchema>;

/** A chat with a character (its messages are rows of `chatMessages`). */
export const ChatRecordSchema = z.object({
  /** The chat's UUID: its stable id (runtime.md §6.1), never derived from its title. */
  id: z.string().min(1),
  characterId: z.string(),
  title: z.string(),
  /** The persona chosen for this chat; null: the default persona. */
  personaId: z.string().nullable(),
  /** Lorebooks attached to this chat only. */
  lorebookIds: z.array(z.string()),
  /** The model connection this chat uses; absent: the default connection. */
  connectionId: z.string().optional(),
  /** The agent profile that replies in this chat; absent: Default Writer. */
  profileId: z.string().optional(),
  /** The preset that builds its replies' prompt (D23); absent: the selected preset. */
  presetId: z.string().optional(),
  /** The chat's author's note (SillyTavern's `chat_metadata.note_*`); absent: none. */
  authorsNote: AuthorsNoteSchema.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type ChatRecord = z.infer<typeof ChatRecordSchema>;

/**
 * What a chat's list shows of its messages without reading them: kept on the chat's row by the
 * chat store whenever its messages change (a row from before has none until it is listed).
 */
export interface ChatStats {
  messageCount: number;
  /** The start of the last message's shown text; null: no messages. */
  lastMessage: string | null;
}
export type ChatSummary = ChatRecord & ChatStats;

/** How much of the last message a chat's list keeps. */
export const CHAT_PREVIEW_LENGTH = 200;

/**
 * What a person changes about a chat from its header. `lorebookIds`: books attached to this chat
 * only. The author's note has its own call, which checks it.
 */
export type ChatPatch = Partial<
  Pick<ChatRecord, 'title' | 'personaId' | 'connectionId' | 'lorebookIds' | 'profileId' | 'presetId'>
>;

/** One message of a chat, keyed by `[chatId+index]` (0-based). */
export type ChatMessageRow = ChatMessage & { chatId: string; index: number };

// eslint-disable-next-line no-control-regex
const UNSAFE_FILE_CHARACTERS = /[\u0000-\u001f\u007f<>:"/\\|?*]+/g;

/** A file name for an exported character or lorebook: its name without characters file systems refuse. */
export function exportFileName(name: string, extension: string, fallback = 'export'): string {
  const safe = name.replace(UNSAFE_FILE_CHARACTERS, '_').trim().slice(0, 100);
  return `${safe.replace(/^\.+/, '') || fallback}.${extension}`;
}
