import type { Page } from '@playwright/test';
import { addScriptedConnection, test } from '../../tests/e2e/fixtures';

/**
 * Issue 30: a SillyTavern chat of 10,001 messages in the built app (Chromium), beside a chat of 51
 * messages opened the same way in the same run. Per round: a reload on the chat's page to its last
 * message in view; then the message elements in the page and the JS heap. Sending: from Enter to
 * the scripted server receiving the model request, and that request's size. Numbers only.
 */

const ROUNDS = 5;
const call = (id: string, name: string, args: object) => ({
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

function jsonl(length: number): string {
  const lines = [JSON.stringify({ user_name: 'You', character_name: 'Orrin', chat_metadata: {} })];
  for (let i = 0; i < length; i++) {
    const filler = i % 7 === 0 ? ' The lantern swung as they walked on through the rain.'.repeat(12) : '';
    lines.push(
      JSON.stringify({ name: i % 2 ? 'You' : 'Orrin', is_user: i % 2 === 1, mes: `Line ${i}.${filler}` }),
    );
  }
  return lines.join('\n');
}

async function importChat(page: Page, length: number): Promise<string> {
  return page.evaluate(async (text) => {
    const c = await window.hearth.characters.create('Orrin');
    const imported = await window.hearth.chats.importJsonl(
      c.id,
      'chat.jsonl',
      new TextEncoder().encode(text),
    );
    return imported.chat.id;
  }, jsonl(length));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The last tab `openTimes` opened, left open to be looked at. */
let opened: Page | null = null;

/** Opens the chat in a new tab (a new runtime worker) `ROUNDS` times. */
async function openTimes(page: Page, chatId: string, last: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const tab = await page.context().newPage();
    const start = Date.now();
    await tab.goto(`./#/chats/${chatId}`);
    await tab.locator(`.chat-message[data-index="${last}"]`).waitFor();
    times.push(Date.now() - start);
    if (i < ROUNDS - 1) await tab.close();
    else opened = tab;
  }
  return times;
}

/**
 * Frame times while the person scrolls up with the wheel (older pages are read on the way): the
 * gaps between animation frames over 40 wheel steps of 300 px, 16 ms apart.
 */
async function scrollFrames(tab: Page): Promise<{ p95: number; max: number; frames: number }> {
  await tab.locator('.messages').hover();
  await tab.evaluate(() => {
    const w = window as unknown as { frames_: number[]; framing: boolean };
    w.frames_ = [];
    w.framing = true;
    const tick = (t: number) => {
      w.frames_.push(t);
      if (w.framing) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  for (let i = 0; i < 40; i++) {
    await tab.mouse.wheel(0, -300);
    await tab.waitForTimeout(16);
  }
  const times = await tab.evaluate(() => {
    const w = window as unknown as { frames_: number[]; framing: boolean };
    w.framing = false;
    return w.frames_;
  });
  const gaps = times
    .slice(1)
    .map((t, i) => t - times[i]!)
    .sort((a, b) => a - b);
  return { p95: gaps[Math.floor(gaps.length * 0.95)]!, max: gaps.at(-1)!, frames: gaps.length };
}

test('long chat: open, page size, heap, send', async ({ page, llm }) => {
  await addScriptedConnection(page, llm);
  await page.waitForFunction(() => window.hearth !== undefined);
  const long = await importChat(page, 10_001);
  const short = await importChat(page, 51);

  const longOpen = await openTimes(page, long, 10_000);
  const elements = await opened!.locator('.chat-message').count();
  const heap = await opened!.evaluate(
    () => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0,
  );
  const longFrames = await scrollFrames(opened!);
  await opened!.close();
  const shortOpen = await openTimes(page, short, 50);
  const shortFrames = await scrollFrames(opened!);
  await opened!.close();

  const sendTimes: number[] = [];
  const sizes: number[] = [];
  for (const chatId of [long, short]) {
    await page.goto(`./#/chats/${chatId}`);
    llm.script(
      call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'Noted.' }),
      call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
    );
    const before = llm.requests.length;
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('And then?');
    const start = Date.now();
    await box.press('Enter');
    while (llm.requests.length === before) await new Promise((r) => setTimeout(r, 2));
    sendTimes.push(Date.now() - start);
    sizes.push(JSON.stringify(llm.requests[before]!.body).length);
    await page.locator('.chat-message').filter({ hasText: 'Noted.' }).last().waitFor();
  }

  console.log(
    `RESULT long-chat open, 10,001 messages: median ${median(longOpen)} ms (${longOpen.join(', ')}); ` +
      `51 messages: median ${median(shortOpen)} ms (${shortOpen.join(', ')})`,
  );
  console.log(
    `RESULT long-chat message elements in the page: ${elements}; JS heap ${(heap / 1e6).toFixed(1)} MB`,
  );
  console.log(
    `RESULT long-chat scroll up, frame gaps: 10,001 messages p95 ${longFrames.p95.toFixed(1)} ms, max ` +
      `${longFrames.max.toFixed(1)} ms over ${longFrames.frames} frames; 51 messages p95 ` +
      `${shortFrames.p95.toFixed(1)} ms, max ${shortFrames.max.toFixed(1)} ms over ${shortFrames.frames} frames`,
  );
  console.log(
    `RESULT long-chat Enter to model request: ${sendTimes[0]} ms, ${(sizes[0]! / 1e3).toFixed(1)} KB; ` +
      `51 messages: ${sendTimes[1]} ms, ${(sizes[1]! / 1e3).toFixed(1)} KB`,
  );
});
