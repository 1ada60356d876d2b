import type { Locator, Page } from '@playwright/test';
import { expect, expectReply, startSession, test } from './fixtures';

test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

/** Nothing on the page is wider than the screen, and the control is fully on it. */
async function fitsTheScreen(page: Page, control: Locator) {
  const width = await page.evaluate(() => document.documentElement.clientWidth);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  const box = (await control.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(width);
}

test('on a phone, a session and a chat fit the screen with their composer in reach', async ({ page }) => {
  await startSession(page, 'write a haiku about the sea');
  await expectReply(page, 'Here is your haiku');
  await fitsTheScreen(page, page.getByRole('button', { name: 'Send' }));
  await fitsTheScreen(page, page.getByRole('combobox', { name: 'Model connection' }));

  await page.goto('./#/characters');
  await page
    .getByRole('link', { name: /Brindle/ })
    .first()
    .click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page).toHaveURL(/#\/chats\//);
  await fitsTheScreen(page, page.getByRole('button', { name: 'Send' }));
  for (const name of ['Persona', 'Model connection', 'Agent profile']) {
    const picker = page.getByRole('combobox', { name });
    await fitsTheScreen(page, picker);
    // Wide enough to read the choice, not squeezed to a couple of letters.
    expect((await picker.boundingBox())!.width).toBeGreaterThan(120);
  }
  // The author's note dialog fits too, its Save in reach.
  await page.getByRole('button', { name: 'Author’s note' }).click();
  const note = page.getByRole('dialog', { name: 'Author’s note' });
  await fitsTheScreen(page, note.getByRole('textbox', { name: 'Note' }));
  await fitsTheScreen(page, note.getByRole('button', { name: 'Save' }));
});
