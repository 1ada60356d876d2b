import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';

/** A chat as long as a SillyTavern user's: the greeting and 10,000 more messages. */
const LENGTH = 10_001;

/** SillyTavern JSONL: a header line, then one line per message; the last reply has three swipes. */
function longChatJsonl(): string {
  const lines = [JSON.stringify({ user_name: 'You', character_name: 'Orrin', chat_metadata: {} })];
  for (let i = 0; i < LENGTH; i++) {
    const isUser = i % 2 === 1;
    // Heights vary: some messages are long paragraphs.
    const filler = i % 7 === 0 ? ' The lantern swung as they walked on through the rain.'.repeat(12) : '';
    const mes = `${isUser ? 'Question' : 'Answer'} number ${i}.${filler}${i === 5_000 ? ' needle-in-the-middle' : ''}`;
    const line: Record<string, unknown> = { name: isUser ? 'You' : 'Orrin', is_user: isUser, mes };
    if (i === LENGTH - 1) Object.assign(line, { swipes: [mes, 'Second take.', 'Third take.'], swipe_id: 0 });
    lines.push(JSON.stringify(line));
  }
  return lines.join('\n');
}

async function openLongChat(page: Page): Promise<void> {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  const chatId = await page.evaluate(async (text) => {
    const c = await window.hearth.characters.create('Orrin');
    const bytes = new TextEncoder().encode(text);
    const imported = await window.hearth.chats.importJsonl(c.id, 'long.jsonl', bytes);
    return imported.chat.id;
  }, longChatJsonl());
  await page.goto(`./#/chats/${chatId}`);
}

const messages = (page: Page) => page.locator('.chat-message');
const message = (page: Page, index: number) => page.locator(`.chat-message[data-index="${index}"]`);
/** Message elements in the page: bounded however long the chat is. */
const rendered = (page: Page) => messages(page).count();

test('a chat of 10,001 messages opens at its end with a bounded page, pages back, finds and jumps', async ({
  page,
}) => {
  await openLongChat(page);
  await expect(message(page, LENGTH - 1)).toBeInViewport();
  await expect(page.getByRole('status').filter({ hasText: `${LENGTH} messages` })).toBeVisible();
  expect(await rendered(page)).toBeLessThan(60);
  // The last reply's swipes came over.
  await expect(message(page, LENGTH - 1).locator('.swipe-count')).toHaveText('1/3');

  // Scrolling up reads older pages and keeps the reading position.
  const scroller = page.locator('.messages');
  await scroller.hover();
  const firstLoaded = async () => Number(await messages(page).first().getAttribute('data-index'));
  /** The message at the top of the view. */
  const topShown = () =>
    scroller.evaluate((el) => {
      const top = el.getBoundingClientRect().top;
      const shown = [...el.querySelectorAll('.chat-message')].find(
        (m) => m.getBoundingClientRect().bottom > top,
      );
      return Number(shown?.getAttribute('data-index'));
    });
  for (let i = 0; i < 12; i++) {
    const before = await topShown();
    await page.mouse.wheel(0, -400);
    // A page read in front never throws the view elsewhere: it moves a few messages up.
    await expect.poll(topShown).toBeLessThan(before);
    expect(await topShown()).toBeGreaterThan(before - 12);
  }
  await expect(async () => {
    await page.mouse.wheel(0, -3000);
    expect(await firstLoaded()).toBeLessThan(LENGTH - 150);
  }).toPass();
  expect(await rendered(page)).toBeLessThan(60);

  // Find in chat scrolls to a hit far back and marks it.
  const find = page.getByRole('searchbox', { name: 'Find in chat' });
  await find.fill('needle-in-the-middle');
  await find.press('Enter');
  await expect(message(page, 5_000)).toBeInViewport();
  await expect(message(page, 5_000)).toHaveClass(/highlighted/);
  await expect(page.getByRole('status').filter({ hasText: '1 of 1' })).toBeVisible();
  expect(await rendered(page)).toBeLessThan(60);

  // An edit far back is kept.
  await message(page, 5_000).getByRole('button', { name: 'Edit message 5001' }).click();
  await message(page, 5_000).getByRole('textbox', { name: 'Edit message' }).fill('Edited far back.');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(message(page, 5_000)).toContainText('Edited far back.');

  // The first message, then back to the latest.
  await page.getByRole('button', { name: 'First message' }).click();
  await expect(message(page, 0)).toBeInViewport();
  await expect(message(page, 0)).toContainText('Answer number 0.');
  await page.getByRole('button', { name: 'Jump to latest' }).click();
  await expect(message(page, LENGTH - 1)).toBeInViewport();
  await expect(page.getByRole('button', { name: 'Jump to latest' })).toBeHidden();

  // After a reload the edit and the swipe are there.
  await message(page, LENGTH - 1)
    .getByRole('button', { name: 'Next swipe' })
    .click();
  await expect(message(page, LENGTH - 1)).toContainText('Second take.');
  await page.reload();
  await expect(message(page, LENGTH - 1)).toContainText('Second take.');
  await find.fill('Edited far back');
  await find.press('Enter');
  await expect(message(page, 5_000)).toBeInViewport();
  await expect(message(page, 5_000)).toContainText('Edited far back.');
});

test('sending from far back in a long chat shows the reply at its end', async ({ page }) => {
  await openLongChat(page);
  await expect(message(page, LENGTH - 1)).toBeInViewport();
  await page.getByRole('button', { name: 'First message' }).click();
  await expect(message(page, 0)).toBeInViewport();

  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Where were we?');
  await box.press('Enter');
  // The Demo agent replies after the person's message, at the chat's end, in view.
  await expect(message(page, LENGTH)).toContainText('Where were we?');
  await expect(message(page, LENGTH + 1)).toBeInViewport();
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  await expect(page.getByRole('status').filter({ hasText: `${LENGTH + 2} messages` })).toBeVisible();
  expect(await rendered(page)).toBeLessThan(60);

  // The chat marks where the model's memory begins: above the reply's oldest message sent.
  const memory = page.getByRole('note').filter({ hasText: "The model's memory begins here" });
  const scrollUpTo = async () => {
    await page.locator('.messages').hover();
    await expect(async () => {
      await page.mouse.wheel(0, -1200);
      await expect(memory).toHaveCount(1, { timeout: 1_000 });
    }).toPass();
  };
  await scrollUpTo();
  const memoryIndex = Number(
    await memory.evaluate((note) =>
      note.closest('.row')?.querySelector('.chat-message')?.getAttribute('data-index'),
    ),
  );
  expect(memoryIndex).toBeGreaterThan(LENGTH - 1_000);
  expect(memoryIndex).toBeLessThan(LENGTH);
  await page.reload();
  await expect(message(page, LENGTH + 1)).toBeInViewport();
  await scrollUpTo();
  await page.getByRole('button', { name: 'Jump to latest' }).click();

  // The reply's run says how much of the chat its prompt held, against the Default preset's budget.
  await message(page, LENGTH + 1)
    .getByRole('link', { name: 'details' })
    .click();
  const budget = page.getByRole('region', { name: 'Context budget' });
  await expect(budget).toContainText(/\b\d{1,3} of 10,002 messages fit; 9,9\d\d older left out/);
  // The line in the chat is where the fitting messages start: the newest of the 10,002 the reply
  // answered is the person's, at index LENGTH.
  const fit = Number((await budget.textContent())!.match(/\b(\d{1,3}) of 10,002 messages fit/)![1]);
  expect(memoryIndex).toBe(LENGTH + 1 - fit);
  await expect(budget).toContainText(/[\d,]+ of 3,792 tokens \(4,095 context − 300 for the reply\)/);
});
