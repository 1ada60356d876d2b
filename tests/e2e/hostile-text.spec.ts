import type { Page } from '@playwright/test';
import { startListener, type Listener } from '../support/listener.ts';
import { addScriptedConnection, expect, send, test } from './fixtures';

/**
 * Untrusted text in every place the app renders it: a card's fields, a reply while it streams and
 * after, a lorebook entry, a workspace file, the run viewer, an imported chat. The markup tries to
 * load from a listener on 127.0.0.1 (an image address can carry chat content out), to cover the
 * page, and to run script; none of it may happen.
 */

let listener: Listener;
test.beforeEach(async () => {
  listener = await startListener();
});
test.afterEach(async () => {
  await listener.close();
});

const hostile = (place: string) => {
  const at = (file: string) => `${listener.url}/${place}/${file}?chat=secret`;
  return [
    `Hello from ${place}.`,
    '',
    `![map](${at('markdown.png')})`,
    `<img src="${at('img.png')}" srcset="${at('srcset.png')} 2x" onerror="window.__pwned = '${place}'">`,
    `<video poster="${at('poster.png')}" src="${at('video.mp4')}" autoplay></video>`,
    `<audio src="${at('audio.mp3')}" autoplay></audio>`,
    `<div style="position:fixed;inset:0;z-index:2147483647;background:url(${at('bg.png')})">COVER</div>`,
    `<div class="banner">CLASS COVER</div>`,
    `<style>@import url(${at('import.css')}); body { background: url(${at('body.png')}) }</style>`,
    `<link rel="stylesheet" href="${at('link.css')}">`,
    `<svg><image href="${at('svg.png')}"/></svg>`,
    `<iframe src="${at('frame')}"></iframe><object data="${at('object')}"></object>`,
    `<a href="javascript:window.__pwned='${place}'" ping="${at('ping')}">a link</a>`,
    `<script>window.__pwned = '${place}'</script>`,
  ].join('\n');
};

/** Nothing executed, nothing covers the point given (the composer, or the page's heading). */
async function expectUntouched(page: Page, over: string): Promise<void> {
  const covered = await page.evaluate((selector) => {
    const target = document.querySelector(selector)!;
    const box = target.getBoundingClientRect();
    const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    return hit && (target === hit || target.contains(hit))
      ? null
      : (hit?.outerHTML.slice(0, 120) ?? 'nothing');
  }, over);
  expect(covered).toBeNull();
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  // The covers' text may stay, as plain text in the flow of the page.
  const positioned = await page.evaluate(() =>
    [...document.querySelectorAll('div')]
      .filter((d) => /^(CLASS )?COVER$/.test(d.textContent ?? ''))
      .map((d) => getComputedStyle(d).position)
      .filter((p) => p !== 'static'),
  );
  expect(positioned).toEqual([]);
}

const cardJson = () =>
  JSON.stringify({
    spec: 'chara_card_v2',
    spec_version: '2.0',
    data: {
      name: 'Mallory',
      description: hostile('card-description'),
      personality: '',
      scenario: '',
      first_mes: hostile('card-greeting'),
      mes_example: '',
      creator_notes: hostile('card-notes'),
      system_prompt: '',
      post_history_instructions: '',
      alternate_greetings: [hostile('card-alternate')],
      tags: [],
      creator: '',
      character_version: '',
      extensions: {},
    },
  });

const worldInfo = () =>
  JSON.stringify({
    entries: {
      0: { uid: 0, key: ['mallory'], keysecondary: [], comment: 'Trap', content: hostile('lore-entry') },
    },
  });

const chatJsonl = () =>
  [
    JSON.stringify({ user_name: 'You', character_name: 'Mallory', create_date: '2024-01-01@10h00m00s' }),
    JSON.stringify({
      name: 'Mallory',
      is_user: false,
      send_date: '2024-01-01@10h00m01s',
      mes: hostile('imported-chat'),
    }),
  ].join('\n');

test('hostile markup in every rendered place loads nothing, covers nothing and runs nothing', async ({
  page,
  llm,
}) => {
  test.setTimeout(120_000);
  const composer = '#composer-input';
  const started: string[] = [];
  page.context().on('request', (r) => r.url().startsWith(listener.url) && started.push(r.url()));

  // A card: its creator notes on its page, its greeting (and the alternate) in a chat.
  await page.goto('./#/characters');
  await page.getByLabel('Character card to import').setInputFiles({
    name: 'mallory.json',
    mimeType: 'application/json',
    buffer: Buffer.from(cardJson()),
  });
  await page.getByRole('listitem', { name: 'Mallory' }).getByRole('link').first().click();
  await expect(page.getByRole('region', { name: 'Notes from the creator' })).toContainText(
    'Hello from card-notes.',
  );
  await expect(
    page.getByRole('link', { name: /^Image: map \(127\.0\.0\.1:\d+\): open$/ }).first(),
  ).toBeVisible();
  await expectUntouched(page, 'h1');
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page.locator('.chat-message').first()).toContainText('Hello from card-greeting.');
  await expectUntouched(page, composer);
  await page.locator('.chat-message').first().getByRole('button', { name: 'Next swipe' }).click();
  await expect(page.locator('.chat-message').first()).toContainText('Hello from card-alternate.');
  await expectUntouched(page, composer);

  // An imported chat.
  await page.getByRole('link', { name: 'Back to Mallory' }).click();
  await page.getByLabel('SillyTavern chat to import').setInputFiles({
    name: 'mallory.jsonl',
    mimeType: 'application/jsonl',
    buffer: Buffer.from(chatJsonl()),
  });
  await page.getByRole('status', { name: 'Chat imported' }).getByRole('link').click();
  await expect(page.locator('.chat-message').last()).toContainText('Hello from imported-chat.');
  await expectUntouched(page, composer);

  // A lorebook entry, in its editor.
  await page.goto('./#/lorebooks');
  await page.getByLabel('World info file to import').setInputFiles({
    name: 'trap.json',
    mimeType: 'application/json',
    buffer: Buffer.from(worldInfo()),
  });
  await page.getByRole('listitem', { name: 'trap' }).getByRole('link').click();
  await page.getByRole('button', { name: 'Trap', exact: true }).click();
  await expect(page.getByLabel('Content', { exact: true })).toHaveValue(/Hello from lore-entry\./);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();

  // A Session reply, while it streams and after; then the same text as a workspace file; then the
  // run viewer, which shows the model's response.
  const reply = hostile('reply');
  // Paced so the reply streams for seconds: long enough to be checked while it streams on a busy machine.
  llm.script({ text: reply.match(/[\s\S]{1,40}/g)!, delayMs: 150 });
  await addScriptedConnection(page, llm);
  await page.goto('./');
  await page
    .getByRole('button', { name: /new session|start your first session/i })
    .first()
    .click();
  await send(page, 'say hello');
  await expect(page.locator('.message.streaming')).toContainText('Hello from reply.');
  await expectUntouched(page, composer);
  await expect(page.locator('.message.assistant').last()).toContainText('Hello from reply.');
  await expect(page.locator('.message.streaming')).toHaveCount(0);
  await expectUntouched(page, composer);

  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  if (!(await workspace.isVisible())) await page.getByRole('button', { name: 'Files' }).click();
  await workspace.getByLabel('Add files to work/').setInputFiles({
    name: 'trap.md',
    mimeType: 'text/markdown',
    buffer: Buffer.from(hostile('file')),
  });
  await workspace.getByRole('button', { name: /trap\.md/ }).click();
  await expect(page.getByText('Hello from file.')).toBeVisible();
  await expectUntouched(page, composer);

  await page.locator('a.run-link').last().click();
  await expect(page).toHaveURL(/#\/runs\//);
  await page.getByText('Model response').click();
  await expect(page.getByText(/Hello from reply\./).first()).toBeVisible();
  await expectUntouched(page, 'h1');

  // Requests the page or its workers started are seen as they start; the listener sees what arrived.
  expect(started).toEqual([]);
  expect(listener.hits()).toEqual([]);
});
