import { readFile } from 'node:fs/promises';
import { unzipSync } from 'fflate';
import { addScriptedConnection, expect, expectReply, send, startSession, test } from './fixtures';

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

test('an agent writes, reads part of a file, patches it and lists files through the real loop', async ({
  page,
  llm,
}) => {
  const call = (id: string, name: string, args: object) => ({
    text: [],
    toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
  });
  llm.script(
    call('c1', 'workspace_write_file', { path: 'work/story.md', content: 'one\ntwo\nthree\nfour\nfive\n' }),
    call('c2', 'workspace_read_file', { path: 'work/story.md', start_line: 2, line_count: 2 }),
    call('c3', 'workspace_apply_patch', { path: 'work/story.md', old_string: 'two', new_string: 'TWO' }),
    call('c4', 'workspace_list_files', { path: 'work' }),
    { text: ['All done.'] },
  );
  await addScriptedConnection(page, llm);
  await startSession(page, 'edit the story');
  await expectReply(page, 'All done.');

  const last = llm.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as {
    messages: { role: string; tool_call_id?: string; content: string }[];
  };
  const result = (id: string) =>
    last.messages.find((m) => m.role === 'tool' && m.tool_call_id === id)!.content;
  expect(result('c2')).toContain('work/story.md lines 2-3 of 5');
  expect(result('c2')).toContain('2 | two');
  expect(result('c3')).toContain('Patched work/story.md with 1 replacement');
  expect(result('c4')).toContain('work/story.md');

  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  await workspace.getByRole('button', { name: /story\.md/ }).click();
  await expect(workspace.getByRole('region', { name: 'File work/story.md' })).toContainText('TWO');
});

test('a folder of 3,000 files: the panel renders the rows in view and scrolls to the last', async ({
  page,
}) => {
  await startSession(page, 'write a haiku about moss');
  await expectReply(page, 'Here is your haiku');
  const sessionId = page.url().split('/').at(-1)!;
  await page.evaluate(async (id) => {
    const files = Array.from({ length: 3_000 }, (_, i) => ({
      name: `file-${String(i).padStart(4, '0')}.txt`,
      bytes: new TextEncoder().encode(`file ${i}\n`),
    }));
    await window.hearth.workspace.upload(id, 'work', files);
  }, sessionId);
  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  await workspace.getByRole('button', { name: 'Refresh workspace' }).click();
  const rows = workspace.getByRole('list', { name: 'Files' }).getByRole('listitem');
  await expect(workspace.getByRole('button', { name: /file-0000\.txt/ })).toBeVisible();
  expect(await rows.count()).toBeLessThan(120);

  // The list scrolls on its own; the last file is there, and opens.
  await workspace.getByRole('button', { name: /file-0000\.txt/ }).hover();
  await expect(async () => {
    await page.mouse.wheel(0, 20_000);
    await expect(workspace.getByRole('button', { name: /file-2999\.txt/ })).toBeVisible({ timeout: 1_000 });
  }).toPass();
  expect(await rows.count()).toBeLessThan(120);
  await workspace.getByRole('button', { name: /file-2999\.txt/ }).click();
  await expect(workspace.getByText('file 2999')).toBeVisible();
});
