import { describe, expect, it } from 'vitest';
import { lorebookChoices } from '$lib/ui/chat/chat-model';

describe('the chat lorebook picker', () => {
  it('locks global and character books, checks the chat’s own', () => {
    const books = [
      { id: 'a', name: 'Atlas', global: true, characterIds: ['keeper'] },
      { id: 'b', name: 'Beacon', global: false, characterIds: ['keeper', 'other'] },
      { id: 'c', name: 'Charts', global: false, characterIds: ['other'] },
      { id: 'd', name: 'Drift', global: false, characterIds: [] },
    ];
    expect(lorebookChoices(books, ['c'], 'keeper')).toEqual([
      { id: 'a', name: 'Atlas', checked: true, locked: 'global' },
      { id: 'b', name: 'Beacon', checked: true, locked: 'character' },
      { id: 'c', name: 'Charts', checked: true, locked: null },
      { id: 'd', name: 'Drift', checked: false, locked: null },
    ]);
    expect(lorebookChoices(books, [], 'other').map((c) => [c.id, c.checked, c.locked])).toEqual([
      ['a', true, 'global'],
      ['b', true, 'character'],
      ['c', true, 'character'],
      ['d', false, null],
    ]);
  });
});
