import { readFile } from 'node:fs/promises';
import { addScriptedConnection, expect, test } from './fixtures';

const DEFAULT_PRESET =
  '../shared/content/sillytavern/SillyTavern@staging-1ac6780/default/content/presets/openai/Default.json';

const call = (id: string, name: string, args: object) => ({
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

test('a SillyTavern preset imported, picked for a chat, shown as the prompt, and sent as shown', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  // SillyTavern's own Default, with its main prompt changed and a secret that must not come over.
  const file = JSON.parse(await readFile(DEFAULT_PRESET, 'utf8'));
  const main = file.prompts.find((p: { identifier: string }) => p.identifier === 'main');
  main.content = 'Stay in the lighthouse scene as {{char}}.';
  file.proxy_password = 'hunter2';

  await page.goto('./#/presets');
  await expect(page.getByRole('listitem', { name: 'Default' })).toContainText('Built in');
  await page.getByLabel('SillyTavern preset to import').setInputFiles({
    name: 'Lighthouse.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(file)),
  });
  await expect(page.getByRole('status')).toContainText('Imported “Lighthouse”.');
  await expect(page.getByRole('listitem', { name: 'Lighthouse' })).toBeVisible();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export Lighthouse' }).click(),
  ]);
  const exported = JSON.parse(await readFile((await download.path())!, 'utf8'));
  expect(exported.proxy_password).toBeUndefined();
  expect(exported.prompts.find((p: { identifier: string }) => p.identifier === 'main').content).toBe(
    main.content,
  );

  const chatId = await page.evaluate(async () => {
    const c = await window.hearth.characters.create('Orrin');
    await window.hearth.characters.update(c.id, { card: { description: 'A lamplighter.' } });
    return (await window.hearth.chats.create(c.id)).id;
  });
  await page.goto(`./#/chats/${chatId}`);
  const picker = page.getByRole('combobox', { name: 'Preset' });
  await expect(picker).toHaveValue(/^preset_default$/);
  await picker.selectOption({ label: 'Lighthouse' });

  // What the prompt would be, once the person's message is in the chat.
  llm.script(
    call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'The lamp is lit.' }),
    call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
  );
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Is the lamp lit?');
  await box.press('Enter');
  await expect(page.locator('.chat-message').last()).toContainText('The lamp is lit.');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  // Without the reply, the chat is again what the request answered.
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Delete message 2' }).click();
  await expect(page.locator('.chat-message')).toHaveCount(1);

  await page.getByRole('button', { name: 'Show the prompt' }).click();
  const dialog = page.getByRole('dialog', { name: 'The next reply’s prompt' });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole('status')).toContainText('tokens');
  const shown = await dialog
    .getByRole('list', { name: 'Prompt messages' })
    .getByRole('listitem')
    .evaluateAll((items) =>
      items.map((li) => ({
        role: li.querySelector('.role')!.textContent!.trim(),
        text: li.querySelector('pre')!.textContent!,
      })),
    );
  expect(shown.some((m) => m.text === 'Stay in the lighthouse scene as Orrin.')).toBe(true);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  // The request that wrote the reply carried the messages the preview lists, in the same order.
  const request = llm.requests.filter((r) => r.path.endsWith('/chat/completions'))[0]!;
  const sent = (request.body as { messages: { role: string; content: unknown }[] }).messages.map((m) => ({
    role: m.role,
    text: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
  }));
  expect(sent).toEqual(shown);
});
