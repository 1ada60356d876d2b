import { describe, expect, it } from 'vitest';
import { DEFAULT_AUTHORS_NOTE } from '$lib/chat/prompt/authors-note';
import { noteDraftProblem, noteOfDraft } from '$lib/ui/chat/authors-note-draft';

describe("the author's note form", () => {
  const draft = { ...DEFAULT_AUTHORS_NOTE, text: 'N' };

  it('refuses a depth outside 0-1000 in the chat, and a how-often below 0 or emptied', () => {
    expect(noteDraftProblem(draft)).toBeNull();
    expect(noteDraftProblem({ ...draft, depth: 1001 })).toMatch(/depth/);
    expect(noteDraftProblem({ ...draft, depth: 1.5 })).toMatch(/depth/);
    expect(noteDraftProblem({ ...draft, depth: null })).toMatch(/depth/);
    expect(noteDraftProblem({ ...draft, interval: -1 })).toMatch(/How often/);
    expect(noteDraftProblem({ ...draft, interval: null })).toMatch(/How often/);
  });

  it('ignores the depth when the note is not in the chat, keeping the saved one', () => {
    const inPrompt = { ...draft, position: 'in_prompt' as const, depth: null };
    expect(noteDraftProblem(inPrompt)).toBeNull();
    expect(noteOfDraft(inPrompt, { ...DEFAULT_AUTHORS_NOTE, depth: 7 })).toEqual({
      ...DEFAULT_AUTHORS_NOTE,
      text: 'N',
      position: 'in_prompt',
      depth: 7,
    });
  });
});
