import { z } from 'zod';
import { PROMPT_ROLES } from '../lorebook';

/**
 * The author's note of a chat (SillyTavern's `chat_metadata.note_*`, authors-note.js): text put
 * into the prompt every N of the person's messages, in the prompt or at a depth of the chat.
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

/** The character's own note (`extension_settings.note.chara`): instead of the chat's, or around it. */
export interface CharacterNote {
  text: string;
  mode: 'replace' | 'before' | 'after';
}

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
  if (!chara || chara.text === '') return note.text;
  if (chara.mode === 'replace') return chara.text;
  return chara.mode === 'before' ? `${chara.text}\n${note.text}` : `${note.text}\n${chara.text}`;
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
    position: (['in_prompt', 'in_chat', 'before_prompt'] as const)[int(meta.note_position, 1)] ?? d.position,
    depth: Math.min(1000, int(meta.note_depth, d.depth)),
    role: PROMPT_ROLES[int(meta.note_role, 0)] ?? d.role,
    interval: int(meta.note_interval, d.interval),
  };
}
