import { describe, expect, it } from 'vitest';
import { titleFromPrompt } from '$lib/domain/session';

describe('titleFromPrompt', () => {
  it('keeps a short prompt as it is', () => {
    expect(titleFromPrompt('write a haiku about the sea')).toBe('write a haiku about the sea');
  });

  it('takes the first sentence of the first line, without its full stop', () => {
    expect(titleFromPrompt('Summarise work/notes.md. Then list the open questions.\nMore.')).toBe(
      'Summarise work/notes.md',
    );
    expect(titleFromPrompt('Why does the build fail? It worked yesterday.')).toBe('Why does the build fail?');
  });

  it('cuts a long sentence at a word, to at most 48 characters', () => {
    const title = titleFromPrompt(
      'Please look at every file in the work folder and tell me which of them mention the harbour lamps',
    );
    expect(title).toBe('Please look at every file in the work folder…');
    expect(title.length).toBeLessThanOrEqual(48);
    expect(titleFromPrompt('x'.repeat(80))).toBe(`${'x'.repeat(47)}…`);
  });

  it('reads past markdown marks and code fences to the words', () => {
    expect(titleFromPrompt('## Task\n\nfix it')).toBe('Task');
    expect(titleFromPrompt('```js\nconsole.log(1)\n```\nwhy is this **slow**')).toBe('why is this slow');
    expect(titleFromPrompt('- rename `foo` to bar')).toBe('rename foo to bar');
    expect(titleFromPrompt('\n\n  > quoted   words ')).toBe('quoted words');
  });

  it('is "New session" for a prompt without words', () => {
    expect(titleFromPrompt('')).toBe('New session');
    expect(titleFromPrompt('```\nconsole.log(1)\n```')).toBe('New session');
  });
});
