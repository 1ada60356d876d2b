import type { Page } from '@playwright/test';
import { expect, expectReply, send, startSession, test } from './fixtures';

/**
 * Long pages are not cut to one screen (issue 31): a run page grows with its content, so a
 * full-page screenshot holds all of it; on paper a conversation is as long as its messages.
 */
test.use({ viewport: { width: 900, height: 360 } });

/** How tall a full-page screenshot is, in CSS pixels (the PNG's IHDR height). */
const screenshotHeight = async (page: Page) => (await page.screenshot({ fullPage: true })).readUInt32BE(20);

/** Where the bottom of `selector`'s content is, from the top of the document. */
const contentBottom = (page: Page, selector: string) =>
  page.locator(selector).evaluate((el) => el.getBoundingClientRect().top + window.scrollY + el.scrollHeight);

test('a run page taller than the screen is whole in a full-page screenshot and in print', async ({
  page,
}) => {
  await startSession(page, 'write a haiku about the sea');
  await expectReply(page, 'Here is your haiku');
  await page
    .getByRole('link', { name: /details/ })
    .first()
    .click();
  await expect(page.getByRole('heading', { name: 'Run', level: 1 })).toBeVisible();
  const bottom = await contentBottom(page, 'main');
  expect(bottom).toBeGreaterThan(360 * 1.5);
  expect(await screenshotHeight(page)).toBeGreaterThanOrEqual(Math.floor(bottom));
  await page.emulateMedia({ media: 'print' });
  expect(await screenshotHeight(page)).toBeGreaterThanOrEqual(Math.floor(await contentBottom(page, 'main')));
});

test('a session and a chat print with every message, not one screen of them', async ({ page }) => {
  await startSession(page, 'write a haiku about the sea');
  await expectReply(page, 'Here is your haiku');
  await send(page, 'another about the wind');
  await expect(page.locator('.message.user').last()).toContainText('another about the wind');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  // On screen a long session renders the messages in view; on paper it renders every one.
  expect(await page.locator('.message.user').count()).toBeLessThan(2);
  await page.emulateMedia({ media: 'print' });
  await expect(page.locator('.message.user')).toHaveCount(2);
  await expect(page.locator('.message.assistant:not(.streaming)').last()).toContainText('Demo provider');
  const bottom = await contentBottom(page, '.messages');
  expect(bottom).toBeGreaterThan(360 * 1.5);
  expect(await screenshotHeight(page)).toBeGreaterThanOrEqual(Math.floor(bottom));

  await page.emulateMedia({ media: 'screen' });
  await page.goto('./#/characters');
  await page
    .getByRole('link', { name: /Brindle/ })
    .first()
    .click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page.locator('.chat-message').first()).toBeVisible();
  await page.emulateMedia({ media: 'print' });
  const chatBottom = await contentBottom(page, '.messages');
  expect(chatBottom).toBeGreaterThan(360);
  expect(await screenshotHeight(page)).toBeGreaterThanOrEqual(Math.floor(chatBottom));
});
