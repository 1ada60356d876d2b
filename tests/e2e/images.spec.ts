import { readFile } from 'node:fs/promises';
import { deflateSync } from 'node:zlib';
import type { Page } from '@playwright/test';
import { chunk } from '../support/png-card.ts';
import type { ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { addScriptedConnection, expect, expectReply, test } from './fixtures';

/** A valid RGB PNG of `width` x `height` in one colour, made here with node:zlib. */
function solidPng(width: number, height: number, [r, g, b]: [number, number, number]): Buffer {
  const u32 = (n: number) => {
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(n);
    return buf;
  };
  const row = Buffer.concat([
    Buffer.from([0]),
    Buffer.from(Array.from({ length: width }, () => [r, g, b]).flat()),
  ]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', Buffer.concat([u32(width), u32(height), Buffer.from([8, 2, 0, 0, 0])])),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const red = solidPng(8, 6, [220, 30, 30]);
const blue = solidPng(6, 8, [30, 30, 220]);
const gif = Buffer.from('GIF89a\x08\x00\x08\x00\x00\x00\x00;', 'latin1');

async function newSession(page: Page) {
  await page.goto('./');
  await page
    .getByRole('button', { name: /new session|start your first session/i })
    .first()
    .click();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeVisible();
}

const attach = (page: Page, files: { name: string; mimeType: string; buffer: Buffer }[]) =>
  page.locator('form.composer input[type=file]').setInputFiles(files);

/** A paste of `bytes` as a clipboard file, the way a screenshot is pasted. */
const paste = (page: Page, bytes: Buffer, name = 'image.png') =>
  page.getByRole('textbox', { name: 'Message' }).evaluate(
    (el, { b64, name }) => {
      const data = new DataTransfer();
      data.items.add(
        new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type: 'image/png' }),
      );
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    },
    { b64: bytes.toString('base64'), name },
  );

/** A drop of `bytes` as a file onto the composer. */
const drop = (page: Page, bytes: Buffer, name: string) =>
  page.locator('form.composer').evaluate(
    (form, { b64, name }) => {
      const data = new DataTransfer();
      data.items.add(
        new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type: 'image/png' }),
      );
      const init = { dataTransfer: data, bubbles: true, cancelable: true };
      form.dispatchEvent(new DragEvent('dragover', init));
      form.dispatchEvent(new DragEvent('drop', init));
    },
    { b64: bytes.toString('base64'), name },
  );

type ChatBody = { messages: { role: string; content: unknown }[] };
const lastUserContent = (llm: ScriptedLlmServer) => {
  const body = llm.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as ChatBody;
  return body.messages.findLast((m) => m.role === 'user')!.content;
};

const toSend = (page: Page) => page.getByRole('list', { name: 'Images to send' }).getByRole('img');

test('the person attaches and pastes images in a Session; a vision model receives them', async ({
  page,
  llm,
}) => {
  llm.script({ text: ['A red one and a blue one.'] });
  await addScriptedConnection(page, llm, { model: 'gpt-4o', images: 'auto' });
  await newSession(page);

  // The attach button: labelled and reachable by keyboard, just before the message box.
  await page.getByRole('textbox', { name: 'Message' }).focus();
  await page.keyboard.press('Shift+Tab');
  await expect(page.getByRole('button', { name: 'Attach images' })).toBeFocused();

  await attach(page, [{ name: 'red.png', mimeType: 'image/png', buffer: red }]);
  await expect(page.getByRole('img', { name: 'Image 1 to send: red.png (8 × 6 px)' })).toBeVisible();
  await paste(page, blue);
  await expect(page.getByRole('img', { name: 'Image 2 to send: image.png (6 × 8 px)' })).toBeVisible();

  // A GIF is refused by the normalization, with a message, and not attached.
  await attach(page, [{ name: 'party.gif', mimeType: 'image/gif', buffer: gif }]);
  await expect(page.getByRole('alert')).toContainText('party.gif was not attached');
  await expect(page.getByRole('alert')).toContainText('GIF');
  await expect(toSend(page)).toHaveCount(2);
  // No notice: this model takes images.
  await expect(page.getByRole('note').filter({ hasText: 'does not take images' })).toHaveCount(0);

  // Removed with the keyboard; attached again.
  await page.getByRole('button', { name: 'Remove image 1 (red.png)' }).focus();
  await page.keyboard.press('Enter');
  await expect(toSend(page)).toHaveCount(1);
  await attach(page, [{ name: 'red.png', mimeType: 'image/png', buffer: red }]);
  await expect(toSend(page)).toHaveCount(2);

  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('what are these?');
  await box.press('Enter');
  await expectReply(page, 'A red one and a blue one.');
  await expect(page.getByRole('list', { name: 'Images to send' })).toHaveCount(0);

  // The request: image_url parts with the PNGs as data URLs (kept byte for byte), then the text.
  expect(lastUserContent(llm)).toEqual([
    { type: 'image_url', image_url: { url: `data:image/png;base64,${blue.toString('base64')}` } },
    { type: 'image_url', image_url: { url: `data:image/png;base64,${red.toString('base64')}` } },
    { type: 'text', text: 'what are these?' },
  ]);

  // In the conversation: thumbnails; one opens larger, Escape closes it.
  const mine = page.locator('.message.user').last();
  await expect(mine.getByRole('img')).toHaveCount(2);
  await mine.getByRole('button', { name: 'Attached image 2 (PNG)' }).click();
  const dialog = page.getByRole('dialog', { name: 'Attached image 2 (PNG)' });
  await expect(dialog.getByRole('img')).toHaveAttribute('src', /^data:image\/png;base64,/);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  // Kept with the message: still there after a reload.
  await page.reload();
  await expect(page.locator('.message.user').last().getByRole('img')).toHaveCount(2);
});

test('a model marked without vision: the composer says so and the model reads an explanation', async ({
  page,
  llm,
}) => {
  llm.script({ text: ['I cannot see images.'] });
  await addScriptedConnection(page, llm, { model: 'gpt-4o', images: 'off' });
  await newSession(page);
  await drop(page, red, 'red.png');
  await expect(page.getByRole('img', { name: 'Image 1 to send: red.png (8 × 6 px)' })).toBeVisible();
  await expect(page.getByRole('note').filter({ hasText: 'This model does not take images' })).toBeVisible();
  // Sent without text.
  await page.getByRole('button', { name: 'Send' }).click();
  await expectReply(page, 'I cannot see images.');
  expect(lastUserContent(llm)).toBe(
    '[Image (image/png): this model does not take images, so it was not sent.]',
  );
  await expect(page.locator('.message.user').last().getByRole('img')).toHaveCount(1);
});

test('on a 390 px phone the thumbnails wrap inside the composer', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await newSession(page);
  const files = Array.from({ length: 6 }, (_, i) => ({
    name: `shot-${i + 1}.png`,
    mimeType: 'image/png',
    buffer: solidPng(200, 150, [40 * i, 100, 200 - 30 * i]),
  }));
  await attach(page, files);
  await expect(toSend(page)).toHaveCount(6);
  const boxes = await toSend(page).evaluateAll((imgs) => imgs.map((i) => i.getBoundingClientRect().toJSON()));
  expect(Math.max(...boxes.map((b: DOMRect) => b.right))).toBeLessThanOrEqual(390);
  expect(new Set(boxes.map((b: DOMRect) => Math.round(b.top))).size).toBeGreaterThan(1);
  // The Demo model takes no images: the notice says so.
  await expect(page.getByRole('note').filter({ hasText: 'This model does not take images' })).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
});

test("an image in a chat is kept SillyTavern's way and exported in the JSONL", async ({ page }) => {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  const characterId = await page.evaluate(async () => (await window.hearth.characters.create('Orrin')).id);
  await page.goto(`./#/characters/${characterId}`);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page.getByRole('heading', { name: 'Orrin' })).toBeVisible();
  await attach(page, [{ name: 'red.png', mimeType: 'image/png', buffer: red }]);
  await expect(toSend(page)).toHaveCount(1);
  await expect(page.getByRole('note').filter({ hasText: 'This model does not take images' })).toBeVisible();
  await page.getByRole('textbox', { name: 'Message' }).fill('Look at this.');
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');
  const mine = page.locator('.chat-message.person').last();
  await expect(mine).toContainText('Look at this.');
  await expect(mine.getByRole('img', { name: 'Attached image 1 (PNG)' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden({ timeout: 30_000 });

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export JSONL' }).click(),
  ]);
  const lines = (await readFile(await download.path(), 'utf8')).split('\n').map((l) => JSON.parse(l));
  const exported = lines.find((l) => l.is_user && l.mes === 'Look at this.');
  expect(exported.extra).toMatchObject({
    media: [{ type: 'image', url: `data:image/png;base64,${red.toString('base64')}`, source: 'upload' }],
    inline_image: true,
  });
});
