import { unzipSync } from 'fflate';
import { readFile } from 'node:fs/promises';
import { draftFromPreset } from '../../src/lib/domain/connection.ts';
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

test('a restored connection without its key says so in the result and on Connections, and a reply sends nothing', async ({
  page,
  browser,
  baseURL,
  llm,
}) => {
  // An OpenAI connection (a provider that needs a key) pointed at the scripted server, with a key.
  const draft = {
    ...draftFromPreset('openai'),
    displayName: 'Work OpenAI',
    baseUrl: llm.url,
    model: 'gpt-4o-mini',
  };
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  await page.evaluate(async (d) => {
    const saved = await window.hearth.connections.save({ ...d, apiKey: 'sk-test-key' });
    await window.hearth.connections.setDefault(saved.id);
  }, draft);
  await page.goto('./#/settings');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export everything' }).click(),
  ]);
  const archive = await download.path();

  const fresh = await browser.newContext({ baseURL });
  const other = await fresh.newPage();
  await other.goto('./#/settings');
  await other.getByLabel('Backup archive to restore').setInputFiles(archive);
  await other
    .getByRole('region', { name: 'What the restore would do' })
    .getByRole('button', { name: 'Restore', exact: true })
    .click();
  const needs = other.getByRole('list', { name: 'Restored items that need their secret again' });
  await expect(needs.getByRole('listitem')).toHaveText([
    /Work OpenAI: no API key: add one on the Connections page/,
  ]);

  await needs.getByRole('link', { name: 'Connections page' }).click();
  const row = other.getByRole('listitem').filter({ hasText: 'Work OpenAI' });
  await expect(row).toContainText('no API key: add one');
  await row.getByRole('button', { name: /Edit/ }).click();
  // No saved key to keep: the field does not offer to keep one.
  await expect(other.getByLabel('API key')).not.toHaveAttribute('placeholder', /keep the saved key/);

  // A reply on it stops before sending, and says why; the provider hears nothing.
  const heard = llm.requests.length;
  await other.goto('./');
  await other.getByRole('button', { name: 'New session' }).click();
  await send(other, 'Hello?');
  await expect(other.getByRole('alert')).toContainText(
    '“Work OpenAI” has no API key: add one on the Connections page. Nothing was sent.',
  );
  expect(llm.requests.length).toBe(heard);
  await fresh.close();
});
