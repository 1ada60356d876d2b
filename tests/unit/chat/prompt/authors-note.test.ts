import { describe, expect, it } from 'vitest';
import {
  authorsNoteFromMetadata,
  AuthorsNoteSchema,
  authorsNoteToMetadata,
  characterNoteFromSillyTavern,
  DEFAULT_AUTHORS_NOTE,
  noteText,
  type AuthorsNote,
} from '$lib/chat/prompt/authors-note';

describe("a chat's author's note as SillyTavern's chat_metadata.note_* (AN:25-31, 237-262)", () => {
  it('reads each position and role by number (SCR:588-593), and the defaults when a key is missing', () => {
    expect(
      authorsNoteFromMetadata({
        note_prompt: 'Keep it short.',
        note_interval: 3,
        note_position: 2,
        note_depth: 6,
        note_role: 2,
      }),
    ).toEqual({
      text: 'Keep it short.',
      position: 'before_prompt',
      depth: 6,
      role: 'assistant',
      interval: 3,
    });
    expect(authorsNoteFromMetadata({ note_position: 0, note_role: 1 })).toMatchObject({
      position: 'in_prompt',
      role: 'user',
    });
    expect(authorsNoteFromMetadata({})).toEqual(DEFAULT_AUTHORS_NOTE);
  });

  it('writes every field back under its key and number, and reads back the same note', () => {
    const notes: AuthorsNote[] = [
      { text: 'A', position: 'in_chat', depth: 1, role: 'user', interval: 0 },
      { text: 'B\nC', position: 'in_prompt', depth: 4, role: 'system', interval: 1 },
      { text: '', position: 'before_prompt', depth: 1000, role: 'assistant', interval: 7 },
    ];
    expect(authorsNoteToMetadata(notes[0]!)).toEqual({
      note_prompt: 'A',
      note_interval: 0,
      note_position: 1,
      note_depth: 1,
      note_role: 1,
    });
    for (const note of notes) {
      expect(AuthorsNoteSchema.parse(note)).toEqual(note);
      expect(authorsNoteFromMetadata(authorsNoteToMetadata(note))).toEqual(note);
    }
  });
});

describe("a character's note (extension_settings.note.chara, AN:32-36, 177-225, 329-347)", () => {
  it('reads prompt, useChara and position: 0 or absent replace, 1 before, 2 after', () => {
    expect(characterNoteFromSillyTavern({ name: 'Aqua', prompt: 'P', useChara: true, position: 1 })).toEqual({
      text: 'P',
      mode: 'before',
      enabled: true,
    });
    expect(characterNoteFromSillyTavern({ prompt: 'P', useChara: true, position: 2 }).mode).toBe('after');
    expect(characterNoteFromSillyTavern({ prompt: 'P' })).toEqual({
      text: 'P',
      mode: 'replace',
      enabled: false,
    });
    // SillyTavern's switch sends anything else to its default: replace.
    expect(characterNoteFromSillyTavern({ prompt: 'P', position: 9 }).mode).toBe('replace');
    expect(characterNoteFromSillyTavern({ prompt: 'P', position: '1' }).mode).toBe('replace');
  });

  it('applies to the note only when in use, joined with a newline', () => {
    const note = { ...DEFAULT_AUTHORS_NOTE, text: 'N' };
    expect(noteText(note, null)).toBe('N');
    expect(noteText(note, { text: 'C', mode: 'replace', enabled: true })).toBe('C');
    expect(noteText(note, { text: 'C', mode: 'before', enabled: true })).toBe('C\nN');
    expect(noteText(note, { text: 'C', mode: 'after', enabled: true })).toBe('N\nC');
    expect(noteText(note, { text: 'C', mode: 'replace', enabled: false })).toBe('N');
  });
});
