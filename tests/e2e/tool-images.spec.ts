import { deflateSync } from 'node:zlib';
import type { ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { addScriptedConnection, expect, expectReply, send, startSession, test } from './fixtures';
import { PYTHON_COLD_TIMEOUT } from './shell-panel';

/** A real RGB PNG of `width` x `height`: a red-to-blue gradient (CRCs and all, so codecs accept it). */
function gradientPng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * (width * 3 + 1) + 1 + x * 3;
      rows[at] = Math.round((255 * x) / (width - 1));
      rows[at + 2] = Math.round((255 * y) / (height - 1));
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const PNG = gradientPng(40, 30);
const PNG_BASE64 = PNG.toString('base64');

const call = (id: string, name: string, args: object) => ({
  text: [],
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

/** The agent writes the PNG with the shell (`base64 -d`), then reads it back. */
const scriptPlot = (llm: ScriptedLlmServer, reply: string) =>
  llm.script(
    call('s1', 'workspace_shell', { command: `echo ${PNG_BASE64} | base64 -d > /work/plot.png` }),
    call('r1', 'workspace_read_file', { path: 'work/plot.png' }),
    { text: [reply] },
  );

interface WireMessage {
  role: string;
  tool_call_id?: string;
  content: string | { type: string; text?: string; image_url?: { url: string } }[] | null;
}

/** The messages of the chat completion request the scripted server got last. */
const lastMessages = (llm: ScriptedLlmServer) =>
  (
    llm.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as {
      messages: WireMessage[];
    }
  ).messages;

const imageUrls = (messages: WireMessage[]) =>
  messages.flatMap((m) =>
    Array.isArray(m.content) ? m.content.flatMap((p) => (p.image_url ? [p.image_url.url] : [])) : [],
  );

const naturalWidth = (img: import('@playwright/test').Locator) =>
  img.evaluate((el) => (el as HTMLImageElement).naturalWidth);

test('an agent reads a PNG it made: the model gets it, the workspace, the conversation and the run show it', async ({
  page,
  llm,
}) => {
  test.setTimeout(PYTHON_COLD_TIMEOUT + 60_000);
  scriptPlot(llm, 'A red-to-blue gradient.');
  await addScriptedConnection(page, llm, { images: 'on' });
  await startSession(page, 'draw a plot and look at it');
  // Python starts as the session opens: on a loaded machine the shell's first command waits on it.
  await expect(page.locator('.message.assistant:not(.streaming)').last()).toContainText(
    'A red-to-blue gradient.',
    { timeout: PYTHON_COLD_TIMEOUT },
  );
  await expectReply(page, 'A red-to-blue gradient.');

  // The model's next request carries the image, kept byte for byte (small PNG, within the limits).
  const messages = lastMessages(llm);
  expect(imageUrls(messages)).toEqual([`data:image/png;base64,${PNG_BASE64}`]);
  const readResult = messages.find((m) => m.role === 'tool' && m.tool_call_id === 'r1')!;
  expect(JSON.stringify(readResult.content)).toContain('the image is attached');

  // The workspace panel shows the file as an image, with its pixel and byte size.
  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  if (!(await workspace.isVisible())) await page.getByRole('button', { name: 'Files' }).click();
  await workspace.getByRole('button', { name: /plot\.png/ }).click();
  const viewer = workspace.getByRole('region', { name: 'File work/plot.png' });
  const shown = viewer.getByRole('img', { name: 'plot.png' });
  await expect(shown).toBeVisible();
  await expect.poll(() => naturalWidth(shown)).toBe(40);
  expect(await shown.getAttribute('src')).toMatch(/^blob:/);
  await expect(viewer).toContainText(/40 × 30 px · \d+(\.\d)? KB/);
  // A click shows it at full size; Escape closes it.
  await shown.click();
  const large = page.getByRole('dialog', { name: 'plot.png' });
  await expect(large.getByRole('img', { name: 'plot.png' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(large).toBeHidden();

  // The conversation's tool call row: a thumbnail once opened.
  const row = page.locator('details.tool-call', { hasText: 'workspace_read_file' });
  await expect(row.locator('summary')).toContainText('1 image');
  await row.locator('summary').click();
  const thumb = row.getByRole('img', { name: /^round-002-call_[0-9a-f]{16}\.image-1\.png$/ });
  await expect(thumb).toBeVisible();
  await expect.poll(() => naturalWidth(thumb)).toBe(40);

  // The run viewer shows the tool result's image, and a larger view on a click.
  await page.locator('a.run-link').last().click();
  await expect(page.getByRole('heading', { name: 'Run', level: 1 })).toBeVisible();
  const runThumb = page.locator('.run-call', { hasText: 'workspace_read_file' }).getByRole('img');
  await expect(runThumb).toHaveCount(1);
  await expect.poll(() => naturalWidth(runThumb)).toBe(40);
  expect(await runThumb.getAttribute('src')).toMatch(/^blob:/);
  await runThumb.click();
  await expect(page.getByRole('dialog').getByRole('img')).toBeVisible();
  await expect(page.getByRole('dialog')).toContainText('40 × 30 px');
  await page.getByRole('button', { name: 'Close image' }).click();
  await expect(page.getByRole('dialog')).toBeHidden();

  // Once retention has removed the run's tool results, the conversation says the image is gone.
  await page.getByRole('link', { name: 'Back to the session' }).click();
  await expect(page).toHaveURL(/#\/sessions\//);
  const sessionUrl = page.url();
  llm.script({ text: ['Another reply.'] });
  await send(page, 'one more');
  await expectReply(page, 'Another reply.');
  await page.getByRole('navigation').getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Runs that keep everything').fill('1');
  await page.getByRole('button', { name: 'Preview' }).click();
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Delete now' }).click();
  await expect(page.getByTestId('retention-result')).toContainText('Removed the details of 1 run');
  await page.goto(sessionUrl);
  const prunedRow = page.locator('details.tool-call', { hasText: 'workspace_read_file' });
  await prunedRow.locator('summary').click();
  await expect(prunedRow).toContainText('image no longer stored');
  await expect(prunedRow.getByRole('img')).toHaveCount(0);
});

test('a model set to take no images gets the explanation instead of the image', async ({ page, llm }) => {
  scriptPlot(llm, 'I was told about an image.');
  await addScriptedConnection(page, llm, { images: 'off' });
  await startSession(page, 'draw a plot and look at it');
  await expectReply(page, 'I was told about an image.');

  const messages = lastMessages(llm);
  expect(imageUrls(messages)).toEqual([]);
  expect(JSON.stringify(messages)).not.toContain('data:image/png;base64,');
  const readResult = messages.find((m) => m.role === 'tool' && m.tool_call_id === 'r1')!;
  expect(JSON.stringify(readResult.content)).toContain('this model does not take images');

  // The image is still the person's to see.
  const row = page.locator('details.tool-call', { hasText: 'workspace_read_file' });
  await row.locator('summary').click();
  await expect.poll(() => naturalWidth(row.getByRole('img'))).toBe(40);
});

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test('a large image in the workspace fits the screen, and its full view too', async ({ page }) => {
    await startSession(page, 'write a haiku about moss');
    await expectReply(page, 'Here is your haiku');
    const workspace = page.getByRole('complementary', { name: 'Workspace' });
    if (!(await workspace.isVisible())) await page.getByRole('button', { name: 'Files' }).click();
    await workspace
      .getByLabel('Add files to work/')
      .setInputFiles([{ name: 'wide.png', mimeType: 'image/png', buffer: gradientPng(1200, 400) }]);
    await workspace.getByRole('button', { name: /wide\.png/ }).click();
    const shown = workspace.getByRole('img', { name: 'wide.png' });
    await expect.poll(() => naturalWidth(shown)).toBe(1200);
    await expect(workspace).toContainText('1200 × 400 px');

    const screen = await page.evaluate(() => document.documentElement.clientWidth);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(screen);
    const box = (await shown.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(screen);
    // Scaled down whole, not cropped: the aspect stays 3:1.
    expect(box.width / box.height).toBeCloseTo(3, 1);

    await shown.click();
    const large = page.getByRole('dialog', { name: 'wide.png' }).getByRole('img');
    await expect(large).toBeVisible();
    const full = (await large.boundingBox())!;
    expect(full.x).toBeGreaterThanOrEqual(0);
    expect(full.x + full.width).toBeLessThanOrEqual(screen);
    expect(full.width).toBeGreaterThan(box.width - 1);
  });
});
