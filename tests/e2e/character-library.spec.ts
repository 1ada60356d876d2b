import { expect, test } from './fixtures';

/** A library the size SillyTavern users bring: 300 characters with tags, card text and chats. */
const SIZE = 300;

test('300 characters: a bounded grid, search in card text, tag chips, sort by chats, favourites kept', async ({
  page,
}) => {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  await page.evaluate(async (size) => {
    for (let i = 0; i < size; i++) {
      const name = `Hero ${String(i).padStart(3, '0')}`;
      const c = await window.hearth.characters.create(name);
      await window.hearth.characters.update(c.id, {
        card: {
          tags: [i % 3 === 0 ? 'Fantasy' : 'Modern', ...(i % 10 === 0 ? ['Villain'] : [])],
          description: i === 217 ? 'Keeps a lighthouse on the moonlit-shore.' : `Character number ${i}.`,
          creator: i % 2 ? 'Odd Author' : 'Even Author',
        },
      });
      if (i === 42) for (let k = 0; k < 3; k++) await window.hearth.chats.create(c.id);
    }
  }, SIZE);

  await page.goto('./#/characters');
  const list = page.getByRole('list', { name: 'Characters' });
  await expect(list.getByRole('listitem', { name: 'Hero 000' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: `${SIZE} characters` })).toBeVisible();
  // Only the rows in view (and a margin) are in the page.
  expect(await list.getByRole('listitem').count()).toBeLessThan(100);

  // Search reaches the card's text, not only its name.
  const search = page.getByLabel('Search characters');
  await search.fill('moonlit-shore');
  await expect(list.getByRole('listitem')).toHaveCount(1);
  await expect(list.getByRole('listitem', { name: 'Hero 217' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: `1 of ${SIZE} characters` })).toBeVisible();
  await search.fill('odd author hero 00');
  await expect(list.getByRole('listitem')).toHaveCount(5);
  await search.fill('');

  // Tag chips: both must apply.
  const tags = page.getByRole('group', { name: 'Filter by tag' });
  await tags.getByRole('button', { name: /^Villain/ }).click();
  await expect(page.getByRole('status').filter({ hasText: `30 of ${SIZE}` })).toBeVisible();
  await tags.getByRole('button', { name: /^Fantasy/ }).click();
  await expect(page.getByRole('status').filter({ hasText: `10 of ${SIZE}` })).toBeVisible();
  await tags.getByRole('button', { name: 'Clear filters' }).click();

  // Most chats first.
  await page.getByLabel('Sort characters').selectOption({ label: 'Most chats' });
  await expect(list.getByRole('listitem').first()).toHaveAccessibleName('Hero 042');
  await expect(list.getByRole('listitem').first()).toContainText('3 chats');

  // A favourite stays one after a reload, and the filter shows only favourites.
  await list.getByRole('button', { name: 'Favourite Hero 042' }).click();
  await expect(list.getByRole('button', { name: 'Favourite Hero 042' })).toHaveAttribute(
    'aria-pressed',
    'true',
  );
  await page.reload();
  await page.getByRole('button', { name: '★ Favourites' }).click();
  await expect(list.getByRole('listitem')).toHaveCount(1);
  await expect(list.getByRole('button', { name: 'Favourite Hero 042' })).toHaveAttribute(
    'aria-pressed',
    'true',
  );

  // Scrolled to the end, the last character is there and the page still holds a bounded number.
  await page.getByRole('button', { name: '★ Favourites' }).click();
  await page.getByLabel('Sort characters').selectOption({ label: 'Name' });
  await page.keyboard.press('End');
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await expect(list.getByRole('listitem', { name: `Hero ${SIZE - 1}` })).toBeVisible();
  expect(await list.getByRole('listitem').count()).toBeLessThan(100);
});
