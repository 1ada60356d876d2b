import { expect, it } from 'vitest';
import { imagesNotKept, withImageNotes } from '$lib/domain/tool-result';

it('writes the images-not-kept notes after the text and counts them back (tools.md §11)', () => {
  expect(withImageNotes('Two shots.', [])).toBe('Two shots.');
  const noted = withImageNotes('Two shots.', [
    'Image 2 was not kept: a GIF',
    'Image 3 was not kept: too large',
  ]);
  expect(noted).toBe(
    'Two shots.\n\n## Images not kept\n\n- Image 2 was not kept: a GIF\n- Image 3 was not kept: too large',
  );
  expect(imagesNotKept(noted)).toBe(2);
  expect(imagesNotKept(withImageNotes('', ['Image 1 was not kept: a GIF']))).toBe(1);
  expect(imagesNotKept('Two shots.\n- a list item')).toBe(0);
});
