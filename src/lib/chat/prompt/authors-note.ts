import { z } from 'zod';
import { PROMPT_ROLES } from '../lorebook';

/**
 * The author's note of a chat (SillyTavern's `chat_metadata.note_*`, authors-note.js): text put
 * into the prompt every N of the person's messages, in the prompt or at a depth of the chat.
 * A position's index is SillyTavern's `note_position` number (SCR:588-593).
 */
export const AUTHORS_NOTE_POSITIONS = ['in_prompt', 'in_chat', 'before_prompt'] as const;

export const AuthorsNoteSchema = z.object({
  text: z.string(),
  /** `in_prompt`: after the main prompt; `before_prompt`: before it; `in_chat`: at `depth` as `role`. */
  position: z.enum(AUTHORS_NOTE_POSITIONS),
  depth: z.int().min(0).max(1000),
  role: z.enum(PROMPT_ROLES),
  /** Every how many of the person's messages it is sent; 0: never. */
  interval: z.int().min(0),
});
export type AuthorsNote = z.infer<typeof AuthorsNoteSchema>;

/** SillyTavern's defaults when a chat has none (AN:237-262). */
export const DEFAULT_AUTHORS_NOTE: AuthorsNote = {
  text: '',
  position: 'in_chat',
  depth: 4,
  role: 'system',
  interval: 1,
};

/**
 * The character's own note (SillyTavern's `extension_settings.note.chara`, AN:32-36, 329-347):
 * when `enabled` (`useChara`), it replaces the chat's note, or goes before or after it. A mode's
 * index is SillyTavern's `chara_note_position` number.
 */
export const CHARACTER_NOTE_MODES = ['replace', 'before', 'after'] as const;

export const CharacterNoteSchema = z.object({
  text: z.string(),
  mode: z.enum(CHARACTER_NOTE_MODES),
  enabled: z.boolean(),
});
export type CharacterNote = z.infer<typeof CharacterNoteSchema>;

/**
 * Whether the note is sent this turn (AN:298-327): `userMessages` counts the person's messages in
 * the chat, the one just sent included.
 */
export function authorsNoteFires(interval: number, userMessages: number): boolean {
  if (interval <= 0) return false;
  if (interval === 1) return true;
  return (userMessages >= interval ? userMessages % interval : interval - userMessages) === 0;
}

/** The note's text with the character's note applied (AN:330-347). */
export function noteText(note: AuthorsNote, chara: CharacterNote | null): string {
  if (!chara || !chara.enabled || chara.text === '') return note.text;
  if (chara.mode === 'replace') return chara.text;
  return chara.mode === 'before' ? `${chara.text}\n${note.text}` : `${note.text}\n${chara.text}`;
}

/**
 * A character's note from SillyTavern's `extension_settings.note.chara` entry: `prompt`,
 * `useChara`, `position` (absent: replace, as SillyTavern reads it).
 */
export function characterNoteFromSillyTavern(entry: Record<string, unknown>): CharacterNote {
  return {
    text: typeof entry.prompt === 'string' ? entry.prompt : '',
    mode: CHARACTER_NOTE_MODES[typeof entry.position === 'number' ? entry.position : 0] ?? 'replace',
    enabled: entry.useChara === true,
  };
}

/** SillyTavern's note values (`note_position` 0/1/2, `note_role` 0/1/2) from a chat's metadata. */
export function authorsNoteFromMetadata(meta: Record<string, unknown>): AuthorsNote {
  const int = (v: unknown, fallback: number) => {
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : fallback;
  };
  const d = DEFAULT_AUTHORS_NOTE;
  return {
    text: typeof meta.note_prompt === 'string' ? meta.note_prompt : d.text,
    position: AUTHORS_NOTE_POSITIONS[int(meta.note_position, 1)] ?? d.position,
    depth: Math.min(1000, int(meta.note_depth, d.depth)),
    role: PROMPT_ROLES[int(meta.note_role, 0)] ?? d.role,
    interval: int(meta.note_interval, d.interval),
  };
}

/** The note as SillyTavern's `chat_metadata.note_*` (the inverse of `authorsNoteFromMetadata`). */
export function authorsNoteToMetadata(note: AuthorsNote): Record<string, string | number> {
  return {
    note_prompt: note.text,
    note_interval: note.interval,
    note_position: AUTHORS_NOTE_POSITIONS.indexOf(note.position),
    note_depth: note.depth,
    note_role: PROMPT_ROLES.indexOf(note.role),
  };
}
