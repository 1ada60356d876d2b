import { readFile } from 'node:fs/promises';
import { unzipSync } from 'fflate';
import { expect, expectReply, send, startSession, test } from './fixtures';

test('upload files, let the agent read them, and download the workspace as a zip', async ({ page }) => {
  await startSession(page, 'write a haiku about moss');
  await expectReply(page, 'Here is your haiku');
  const workspace = page.getByRole('complementary', { name: 'Workspace' });

  await workspace.getByLabel('Add files to work/').setInputFiles([
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('remember the moss\n') },
    { name: 'haiku.md', mimeType: 'text/markdown', buffer: Buffer.from('an upload, not the haiku\n') },
  ]);
  await expect(workspace.getByRole('button', { name: /notes\.txt/ })).toBeVisible();
  // A taken name is never overwritten.
  await expect(workspace.getByRole('button', { name: /haiku \(2\)\.md/ })).toBeVisible();

  await send(page, 'read work/notes.txt');
  await expectReply(page, 'remember the moss');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    workspace.getByRole('button', { name: 'Download zip' }).click(),
  ]);
  const entries = unzipSync(new Uint8Array(await readFile(await download.path())));
  const names = Object.keys(entries).sort();
  expect(names).toContain('work/haiku.md');
  expect(names).toContain('work/haiku (2).md');
  expect(names).toContain('work/notes.txt');
  // Runtime storage stays out of the person's archive.
  expect(names.some((n) => n.startsWith('runs/'))).toBe(false);
  expect(new TextDecoder().decode(entries['work/notes.txt'])).toBe('remember the moss\n');
});
