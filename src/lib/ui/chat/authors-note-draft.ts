import type { AuthorsNote } from '$lib/chat/prompt/authors-note';

/** The author's note as its form holds it: an emptied number field is null. */
export type NoteDraft = Omit<AuthorsNote, 'depth' | 'interval'> & {
  depth: number | null;
  interval: number | null;
};

const whole = (n: number | null, max = Infinity): n is number =>
  n !== null && Number.isInteger(n) && n >= 0 && n <= max;

/** What keeps the draft from being saved, in the person's words; null: it can be saved. */
export function noteDraftProblem(draft: NoteDraft): string | null {
  if (draft.position === 'in_chat' && !whole(draft.depth, 1000))
    return 'The depth is a whole number from 0 to 1000.';
  if (!whole(draft.interval)) return 'How often is a whole number: 0 (off) or more.';
  return null;
}

/** The note to save from a draft `noteDraftProblem` accepts (a depth not used keeps its value). */
export function noteOfDraft(draft: NoteDraft, saved: AuthorsNote): AuthorsNote {
  return {
    text: draft.text,
    position: draft.position,
    role: draft.role,
    depth: whole(draft.depth, 1000) ? draft.depth : saved.depth,
    interval: draft.interval ?? saved.interval,
  };
}
