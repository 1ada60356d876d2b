import { unzipSync } from 'fflate';
import { readFile } from 'node:fs/promises';
import { expect, expectReply, send, startSession, test } from './fixtures';

test('everything exported from one browser profile and restored into a fresh one: the chat and the session go on', async ({
  page,
  browser,
  baseURL,
}) => {
  // A session and a chat, each with a finished reply (the Demo provider answers).
  await startSession(page, 'Remember the word heliotrope.');
  await expectReply(page, /./);
  const sessionUrl = page.url();
  const characterId = await page.evaluate(async () => (await window.hearth.characters.create('Orrin')).id);
  await page.goto(`./#/characters/${characterId}`);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page).toHaveURL(/#\/chats\/[^/]+$/);
  const chatUrl = page.url();
  await send(page, 'Guten Abend, Orrin. ünïcödé ✓');
  await expect(page.locator('.chat-message')).toHaveCount(2);
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();

  await page.goto('./#/settings');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export everything' }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^hearth-backup-.+\.zip$/);
  const archive = await download.path();
  const names = Object.keys(unzipSync(new Uint8Array(await readFile(archive))));
  expect(names).toContain('manifest.json');
  expect(names.some((n) => n.startsWith('db/chatMessages/'))).toBe(true);

  // A fresh profile: nothing of the first one, until the archive is restored.
  const fresh = await browser.newContext({ baseURL });
  const other = await fresh.newPage();
  await other.goto('./#/settings');
  await other.getByLabel('Backup archive to restore').setInputFiles(archive);
  const plan = other.getByRole('region', { name: 'What the restore would do' });
  await expect(plan.getByRole('row', { name: /^Chats 1 0 0$/ })).toBeVisible();
  await expect(plan.getByRole('row', { name: /^Sessions 1 0 0$/ })).toBeVisible();
  // Orrin is new; the example character, seeded in both profiles and unchanged, is not counted.
  await expect(plan.getByRole('row', { name: /^Characters 1 0 0$/ })).toBeVisible();
  await plan.getByRole('button', { name: 'Restore', exact: true }).click();
  await expect(other.getByRole('status').filter({ hasText: 'Restored:' })).toBeVisible();

  await other.goto(sessionUrl);
  await expect(other.locator('.user-text').first()).toHaveText('Remember the word heliotrope.');
  await send(other, 'What was the word?');
  await expect(other.locator('.message.assistant:not(.streaming)')).toHaveCount(2);
  await expect(other.getByRole('button', { name: 'Stop' })).toBeHidden();

  await other.goto(chatUrl);
  await expect(other.locator('.chat-message').first()).toContainText('Guten Abend, Orrin. ünïcödé ✓');
  await send(other, 'Still there?');
  await expect(other.locator('.chat-message')).toHaveCount(4);
  await expect(other.getByRole('button', { name: 'Stop' })).toBeHidden();
  await fresh.close();
});
