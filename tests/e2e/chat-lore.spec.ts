import { newLorebookEntry } from '../../src/lib/chat/lorebook.ts';
import { expect, test } from './fixtures';

// As JSON: the entry's recursive JSON types are too deep for `page.evaluate`'s argument typing.
const LAMP = JSON.stringify(
  newLorebookEntry(0, {
    comment: "Brindle's lamp",
    keys: ['lighthouse'],
    content: 'The lighthouse lamp has been dark since the keeper Brindle vanished.',
  }),
);

test('which lore fired for a reply and why; a lorebook attached to one chat', async ({ page }) => {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  const characterId = await page.evaluate(async (lamp) => {
    const h = window.hearth;
    const harbour = await h.lorebooks.create('Harbour lore');
    await h.lorebooks.update(harbour.id, { ...harbour.book, entries: [JSON.parse(lamp)] });
    await h.lorebooks.create('Tide tables');
    const c = await h.characters.create('Keeper');
    await h.characters.update(c.id, { lorebookIds: [harbour.id] });
    return c.id;
  }, LAMP);

  await page.goto(`./#/characters/${characterId}`);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page).toHaveURL(/#\/chats\/[^/]+$/);
  const chatId = page.url().split('/').at(-1)!;
  await expect(page.getByRole('note').filter({ hasText: 'Demo: scripted responses' })).toBeVisible();

  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('the lighthouse is dark');
  await box.press('Enter');
  const reply = page.locator('.chat-message.character').last();
  await expect(reply).toContainText('You said');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  // The reply's run used one lore entry: a badge beside its details link.
  await expect(reply.locator('.lore-badge')).toHaveText('1 lore entry');
  await expect(reply.locator('.lore-badge')).toHaveAttribute('title', /Brindle's lamp/);

  // The run view lists the entry, why it fired, and its content on request.
  await reply.getByRole('link', { name: 'details' }).click();
  await expect(page).toHaveURL(/#\/runs\/.+/);
  const lore = page.getByRole('region', { name: 'Lore activated for this reply' });
  const activated = lore.getByRole('list', { name: 'Activated entries' }).getByRole('listitem');
  await expect(activated).toHaveCount(1);
  await expect(activated).toContainText("Brindle's lamp");
  await expect(activated).toContainText('Harbour lore');
  await expect(activated).toContainText('order 100');
  await expect(activated.locator('.lore-why')).toHaveText(/^key lighthouse in message \d+$/);
  await expect(activated.locator('.lore-why code')).toHaveText('lighthouse');
  await expect(activated.getByText('has been dark since')).toBeHidden();
  await activated.getByText('Content', { exact: true }).click();
  await expect(activated.getByText('has been dark since')).toBeVisible();
  await expect(lore).toContainText('Budget:');

  // The chat's lorebook picker: the character's book is locked on; another is attached here.
  await page.getByRole('link', { name: 'Back to the chat' }).click();
  await expect(page).toHaveURL(new RegExp(`#/chats/${chatId}$`));
  const picker = page.locator('.lore-picker');
  const summary = picker.locator('summary');
  await expect(summary).toHaveText(/^Lorebooks \(\d+\)$/);
  const before = Number(/\d+/.exec((await summary.textContent()) ?? '')![0]);
  await summary.click();
  const harbour = picker.getByRole('checkbox', { name: 'Harbour lore' });
  await expect(harbour).toBeChecked();
  await expect(harbour).toBeDisabled();
  await expect(picker).toContainText('from Keeper');
  const tides = picker.getByRole('checkbox', { name: 'Tide tables' });
  await expect(tides).not.toBeChecked();
  await tides.check();
  await expect(summary).toHaveText(`Lorebooks (${before + 1})`);
  await expect
    .poll(() =>
      page.evaluate(async (id) => (await window.hearth.chats.get(id)).chat.lorebookIds.length, chatId),
    )
    .toBe(1);

  await page.reload();
  await page.locator('.lore-picker summary').click();
  await expect(page.locator('.lore-picker').getByRole('checkbox', { name: 'Tide tables' })).toBeChecked();
  await expect(page.locator('.lore-picker').getByRole('checkbox', { name: 'Harbour lore' })).toBeDisabled();
});
