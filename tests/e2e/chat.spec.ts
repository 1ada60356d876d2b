import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import { parseChatJsonl } from '../../src/lib/chat/chat-jsonl.ts';
import { addScriptedConnection, expect, test } from './fixtures';

/** A character with a greeting (carrying a script that must never run) and one alternate greeting. */
async function createCharacter(page: Page): Promise<string> {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  return page.evaluate(async () => {
    const c = await window.hearth.characters.create('Orrin');
    await window.hearth.characters.update(c.id, {
      card: {
        firstMes: 'Evening. Walk with me?<script>window.__pwned = true</script>',
        alternateGreetings: ['You came *back*.'],
      },
    });
    return c.id;
  });
}

const messages = (page: Page) => page.locator('.chat-message');

async function exportChat(page: Page): Promise<string> {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export JSONL' }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/\.jsonl$/);
  return readFile(await download.path(), 'utf8');
}

test('a chat: greeting swipes, a working run stopped, a failure, edit, delete, export as JSONL', async ({
  page,
  llm,
}) => {
  const characterId = await createCharacter(page);
  await addScriptedConnection(page, llm);
  await page.goto(`./#/characters/${characterId}`);
  await expect(page.getByText('No chats with Orrin yet')).toBeVisible();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page).toHaveURL(/#\/chats\/[^/]+$/);
  await expect(page.getByRole('heading', { name: 'Orrin' })).toBeVisible();

  // The greeting, sanitized, with the alternate greeting as its second swipe.
  const greeting = messages(page).first();
  await expect(greeting).toContainText('Evening. Walk with me?');
  expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned)).toBeUndefined();
  await expect(greeting.locator('.swipe-count')).toHaveText('1/2');
  await greeting.getByRole('button', { name: 'Next swipe' }).click();
  await expect(greeting.locator('.swipe-count')).toHaveText('2/2');
  await expect(greeting).toContainText('You came back.');
  await expect(greeting.locator('em')).toHaveText('back');
  // ←/→ on the focused message switch swipes too.
  await greeting.focus();
  await page.keyboard.press('ArrowLeft');
  await expect(greeting.locator('.swipe-count')).toHaveText('1/2');
  await page.keyboard.press('ArrowRight');
  await expect(greeting.locator('.swipe-count')).toHaveText('2/2');
  await expect(greeting).toContainText('You came back.');

  // The person's message (Enter sends); the agent's working text streams into a muted box that
  // links the run; Stop cancels it.
  llm.script({ text: Array.from({ length: 200 }, (_, i) => `w${i} `), delayMs: 150 });
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Lead the way, Orrin.');
  await box.press('Enter');
  await expect(page.locator('.chat-message.person')).toContainText('Lead the way, Orrin.');
  const working = page.getByRole('region', { name: 'Agent working' });
  await expect(working).toContainText('w3');
  await expect(working.getByRole('link', { name: 'open the run' })).toHaveAttribute('href', /^#\/runs\/.+/);
  await expect(page.getByRole('status').filter({ hasText: 'round 1' })).toBeVisible();
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByText('Stopped.')).toBeVisible();
  await expect(working).toBeHidden();

  // A failed run shows its code and message, and Retry regenerates.
  llm.script({ fault: 'http', status: 400, body: '{"error":{"message":"model not found"}}' });
  await page.getByRole('button', { name: 'Retry' }).click();
  const failure = page.getByRole('alert').filter({ hasText: 'The reply failed' });
  await expect(failure).toContainText('model not found');
  await expect(failure.locator('code')).not.toBeEmpty();
  await expect(failure.getByRole('button', { name: 'Retry' })).toBeVisible();
  await expect(messages(page)).toHaveCount(2);

  // Edit the greeting's shown swipe (saved: it survives a reload).
  await page.getByRole('button', { name: 'Edit message 1' }).click();
  await page.getByRole('textbox', { name: 'Edit message' }).fill('You came *back*, friend.');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(greeting).toContainText('You came back, friend.');
  await page.reload();
  await expect(greeting).toContainText('You came back, friend.');
  await expect(greeting.locator('.swipe-count')).toHaveText('2/2');

  // Delete the person's message (confirmed).
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Delete message 2' }).click();
  await expect(messages(page)).toHaveCount(1);

  // Export: SillyTavern JSONL that parses, with the greeting's swipes and the edit.
  const parsed = parseChatJsonl(await exportChat(page));
  if (!parsed.ok) throw new Error(parsed.error.message);
  expect(parsed.value.problems).toEqual([]);
  expect(parsed.value.transcript.header.characterName).toBe('Orrin');
  expect(parsed.value.transcript.messages).toHaveLength(1);
  const [first] = parsed.value.transcript.messages;
  expect(first).toMatchObject({ isUser: false, swipeId: 1, mes: 'You came *back*, friend.' });
  expect(first!.swipes.map((s) => s.text)).toEqual([
    'Evening. Walk with me?<script>window.__pwned = true</script>',
    'You came *back*, friend.',
  ]);
});

// Depends on the Demo provider answering in Chat runs (issue 7 item 9, the lead's work in
// progress): until it commits a reply this test fails at the first reply check.
test('the Demo agent replies in a chat; › regenerates a new swipe and ‹ goes back', async ({ page }) => {
  const characterId = await createCharacter(page);
  await page.goto(`./#/characters/${characterId}`);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page.getByRole('note').filter({ hasText: 'Demo: scripted responses' })).toBeVisible();
  await expect(messages(page).first()).toContainText('Evening. Walk with me?');
  await page.getByRole('textbox', { name: 'Message' }).fill('Lead the way, Orrin.');
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');

  const reply = messages(page).nth(2);
  await expect(reply).toHaveClass(/character/, { timeout: 30_000 });
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  await expect(page.getByRole('alert')).toHaveCount(0);
  const firstRun = await reply.getByRole('link', { name: 'details' }).getAttribute('href');
  expect(firstRun).toMatch(/^#\/runs\/.+/);
  await expect(reply.locator('.swipe-count')).toHaveText('1/1');
  const firstText = (await reply.locator('.text').textContent())!;

  await reply.getByRole('button', { name: 'Regenerate (a new swipe)' }).click();
  await expect(reply.locator('.swipe-count')).toHaveText('2/2', { timeout: 30_000 });
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  await expect(reply.getByRole('link', { name: 'details' })).not.toHaveAttribute('href', firstRun!);
  await reply.getByRole('button', { name: 'Previous swipe' }).click();
  await expect(reply.locator('.swipe-count')).toHaveText('1/2');
  await expect(reply.locator('.text')).toHaveText(firstText);
  await expect(reply.getByRole('link', { name: 'details' })).toHaveAttribute('href', firstRun!);

  const parsed = parseChatJsonl(await exportChat(page));
  if (!parsed.ok) throw new Error(parsed.error.message);
  const saved = parsed.value.transcript.messages[2]!;
  expect(saved.swipes).toHaveLength(2);
  expect(saved.swipeId).toBe(0);
  expect(saved.swipes.map((s) => (s.extra.hearth as { runId?: string } | undefined)?.runId)).toEqual([
    firstRun!.slice('#/runs/'.length),
    expect.any(String),
  ]);
});

test("a character's chats: list, import SillyTavern JSONL with line problems, delete", async ({ page }) => {
  const characterId = await createCharacter(page);
  await page.goto(`./#/characters/${characterId}`);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(messages(page).first()).toContainText('Evening. Walk with me?');
  const exported = await exportChat(page);

  await page.getByRole('link', { name: 'Back to Orrin' }).click();
  const list = page.getByRole('list', { name: 'Chats with Orrin' });
  await expect(list.getByRole('listitem')).toHaveCount(1);
  await expect(list).toContainText('1 message');
  await expect(list).toContainText('Evening. Walk with me?');

  // Import the exported chat with a broken line and a message added by hand.
  const lines = exported.split('\n');
  const extra = JSON.stringify({
    name: 'You',
    is_user: true,
    is_system: false,
    mes: 'Hello from SillyTavern',
  });
  const file = [...lines, '{not json', extra].join('\n');
  await page.getByLabel('SillyTavern chat to import').setInputFiles({
    name: 'orrin-st.jsonl',
    mimeType: 'application/jsonl',
    buffer: Buffer.from(file),
  });
  const imported = page.getByRole('status', { name: 'Chat imported' });
  await expect(imported).toContainText('Imported “orrin-st.jsonl”');
  await expect(imported.getByRole('list', { name: 'Import problems' })).toContainText(
    `Line ${lines.length + 1}`,
  );
  await expect(list.getByRole('listitem')).toHaveCount(2);
  await expect(list).toContainText('Hello from SillyTavern');

  await imported.getByRole('link').click();
  await expect(page).toHaveURL(/#\/chats\/[^/]+$/);
  await expect(messages(page)).toHaveCount(2);
  await expect(messages(page).last()).toContainText('Hello from SillyTavern');
  await expect(messages(page).first().locator('.swipe-count')).toHaveText('1/2');

  // Delete a chat (confirmed) from the list.
  await page.getByRole('link', { name: 'Back to Orrin' }).click();
  const first = list.getByRole('listitem').first();
  const title = (await first.locator('.title').textContent())!;
  page.once('dialog', (d) => void d.accept());
  await first.getByRole('button', { name: `Delete ${title}` }).click();
  await expect(list.getByRole('listitem')).toHaveCount(1);
  await expect(list).not.toContainText(title);
});
