import { expect, test } from './fixtures';

/** A library the size SillyTavern users bring: 300 characters with tags, card text and chats. */
const SIZE = 300;
/** With the example character. */
const TOTAL = SIZE + 1;

test('300 characters: a bounded grid, search in card text, tag chips, sort by chats, favourites kept', async ({
  page,
}) => {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  await page.evaluate(async (size) => {
    // The list waits for a fresh install's example character, so it is always there too.
    await window.hearth.characters.list();
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
  await expect(page.getByRole('status').filter({ hasText: `${TOTAL} characters` })).toBeVisible();
  // Only the rows in view (and a margin) are in the page.
  expect(await list.getByRole('listitem').count()).toBeLessThan(100);

  // Search reaches the card's text, not only its name.
  const search = page.getByLabel('Search characters');
  await search.fill('moonlit-shore');
  await expect(list.getByRole('listitem')).toHaveCount(1);
  await expect(list.getByRole('listitem', { name: 'Hero 217' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: `1 of ${TOTAL} characters` })).toBeVisible();
  await search.fill('odd author hero 00');
  await expect(list.getByRole('listitem')).toHaveCount(5);
  await search.fill('');

  // Tag chips: both must apply.
  const tags = page.getByRole('group', { name: 'Filter by tag' });
  await tags.getByRole('button', { name: /^Villain/ }).click();
  await expect(page.getByRole('status').filter({ hasText: `30 of ${TOTAL}` })).toBeVisible();
  await tags.getByRole('button', { name: /^Fantasy/ }).click();
  await expect(page.getByRole('status').filter({ hasText: `10 of ${TOTAL}` })).toBeVisible();
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
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await expect(list.getByRole('listitem', { name: `Hero ${SIZE - 1}` })).toBeVisible();
  expect(await list.getByRole('listitem').count()).toBeLessThan(100);
});

test('a 251-entry lorebook and a character with 150 chats render only the rows in view', async ({ page }) => {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  const { bookId, characterId } = await page.evaluate(async () => {
    const entries: Record<string, unknown> = {};
    for (let uid = 0; uid < 251; uid++) {
      entries[uid] = { uid, key: [`key${uid}`], comment: `Entry ${uid}`, content: `Lore of place ${uid}.` };
    }
    const bytes = new TextEncoder().encode(JSON.stringify({ entries }));
    const book = await window.hearth.lorebooks.import('Realm.json', bytes);
    const c = await window.hearth.characters.create('Wanderer');
    for (let i = 0; i < 150; i++) await window.hearth.chats.create(c.id);
    return { bookId: book.id, characterId: c.id };
  });

  await page.goto(`./#/lorebooks/${bookId}`);
  const entries = page.getByRole('list', { name: 'Entries of Realm' });
  await expect(entries.getByRole('listitem').first()).toContainText('Entry 0');
  expect(await entries.getByRole('listitem').count()).toBeLessThan(80);
  await page.getByLabel('Filter entries').fill('place 250.');
  await expect(entries.getByRole('listitem')).toHaveCount(1);
  await expect(entries.getByRole('button', { name: 'Entry 250', exact: true })).toBeVisible();
  await page.getByLabel('Filter entries').fill('');
  // A new entry is the last row, brought into view and open.
  await page.getByRole('button', { name: 'Add entry' }).click();
  await expect(page.getByRole('heading', { name: 'Entries (252)' })).toBeVisible();
  await expect(entries.getByRole('button', { expanded: true })).toBeInViewport();
  expect(await entries.getByRole('listitem').count()).toBeLessThan(80);

  await page.goto(`./#/characters/${characterId}`);
  const chats = page.getByRole('list', { name: 'Chats with Wanderer' });
  await expect(chats.getByRole('listitem').first()).toBeVisible();
  expect(await chats.getByRole('listitem').count()).toBeLessThan(60);
});
