import AxeBuilder from '@axe-core/playwright';
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

test('a preset edited: prompts moved, switched off and added at a depth, budget changed, kept, shown in the prompt and exported', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  const file = JSON.parse(await readFile(DEFAULT_PRESET, 'utf8'));
  await page.goto('./#/presets');
  await page.getByLabel('SillyTavern preset to import').setInputFiles({
    name: 'Harbor.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(file)),
  });
  await expect(page.getByRole('status')).toContainText('Imported “Harbor”.');

  // The built-in Default is shown read-only; its copy is editable.
  await page.getByRole('link', { name: 'View Default' }).click();
  await expect(page.getByRole('heading', { name: 'Default', level: 1 })).toBeVisible();
  await expect(page.getByRole('switch', { name: 'Send Main Prompt' })).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Save' })).toHaveCount(0);
  await page.getByRole('button', { name: 'View Main Prompt' }).click();
  await expect(page.getByRole('textbox', { name: 'Content' })).toHaveValue(/Write \{\{char\}\}'s next reply/);
  await page.getByRole('button', { name: 'Duplicate' }).click();
  await expect(page.getByRole('heading', { name: 'Default (copy)', level: 1 })).toBeVisible();
  await expect(page.getByRole('switch', { name: 'Send Main Prompt' })).toBeEnabled();

  await page.goto('./#/presets');
  await page.getByRole('link', { name: 'Edit Harbor' }).click();
  await expect(page.getByRole('heading', { name: 'Harbor', level: 1 })).toBeVisible();
  const order = page.getByRole('list', { name: 'Prompt order' });
  const names = () => order.locator(':scope > li strong').allTextContents();
  expect((await names()).slice(0, 3)).toEqual(['Main Prompt', 'World Info (before)', 'Persona Description']);

  // Moved down twice: once by a click, once by the keyboard, the focus staying on the button.
  await page.getByRole('button', { name: 'Move Main Prompt down' }).click();
  await expect(page.getByRole('button', { name: 'Move Main Prompt down' })).toBeFocused();
  await page.keyboard.press('Enter');
  expect((await names()).slice(0, 3)).toEqual(['World Info (before)', 'Persona Description', 'Main Prompt']);
  await page.getByRole('switch', { name: 'Send Char Description' }).uncheck();

  await page.getByRole('button', { name: 'Add custom prompt' }).click();
  await page.getByRole('group', { name: 'Edit New prompt' }).getByLabel('Name').fill('Tone');
  const tone = page.getByRole('group', { name: 'Edit Tone' });
  await tone.getByLabel('Role').selectOption({ label: 'User' });
  await tone.getByLabel('Position').selectOption({ label: 'In the chat, at a depth' });
  await tone.getByLabel('Depth').fill('1');
  await tone.getByLabel('Content').fill('Keep {{char}} to fifty words.');
  await expect(order.getByRole('listitem', { name: 'Tone' })).toContainText(
    'custom · user · in the chat at depth 1',
  );

  const context = page.getByRole('spinbutton', { name: 'Max context tokens' });
  await context.fill('200');
  await page.getByRole('spinbutton', { name: 'Max reply tokens' }).fill('300');
  await expect(page.getByRole('alert')).toContainText('fewer than max context tokens');
  await context.fill('8000');
  await expect(page.getByRole('alert')).toHaveCount(0);
  await page.getByRole('spinbutton', { name: 'Temperature' }).fill('0.7');

  const { violations } = await new AxeBuilder({ page }).analyze();
  expect(
    violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
  ).toEqual([]);

  await expect(page.getByText('Unsaved changes')).toBeVisible();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toContainText('Saved “Harbor”.');

  await page.reload();
  await expect(page.getByRole('heading', { name: 'Harbor', level: 1 })).toBeVisible();
  expect((await names()).slice(0, 3)).toEqual(['World Info (before)', 'Persona Description', 'Main Prompt']);
  expect((await names()).at(-1)).toBe('Tone');
  await expect(page.getByRole('switch', { name: 'Send Char Description' })).not.toBeChecked();
  await expect(page.getByRole('spinbutton', { name: 'Max context tokens' })).toHaveValue('8000');
  await expect(page.getByRole('spinbutton', { name: 'Temperature' })).toHaveValue('0.7');

  // Leaving with unsaved changes asks first; declining stays, accepting drops them.
  let accept = false;
  page.on('dialog', (d) => void (accept ? d.accept() : d.dismiss()));
  await page.getByRole('textbox', { name: 'Preset name' }).fill('Harbor, renamed');
  await page.getByRole('link', { name: '← Presets' }).click();
  await expect(page.getByRole('heading', { name: 'Harbor', level: 1 })).toBeVisible();
  accept = true;
  await page.getByRole('link', { name: '← Presets' }).click();
  await expect(page.getByRole('heading', { name: 'Presets', level: 1 })).toBeVisible();
  await expect(page.getByRole('listitem', { name: 'Harbor', exact: true })).toBeVisible();

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export Harbor' }).click(),
  ]);
  const exported = JSON.parse(await readFile((await download.path())!, 'utf8'));
  const global = exported.prompt_order.find((o: { character_id: number }) => o.character_id === 100001);
  expect(global.order.slice(0, 3).map((e: { identifier: string }) => e.identifier)).toEqual([
    'worldInfoBefore',
    'personaDescription',
    'main',
  ]);
  expect(global.order.find((e: { identifier: string }) => e.identifier === 'charDescription').enabled).toBe(
    false,
  );
  const custom = exported.prompts.find((p: { name: string }) => p.name === 'Tone');
  expect(custom).toMatchObject({
    role: 'user',
    content: 'Keep {{char}} to fifty words.',
    injection_position: 1,
    injection_depth: 1,
  });
  expect(global.order.at(-1)).toEqual({ identifier: custom.identifier, enabled: true });
  expect([exported.openai_max_context, exported.temperature, exported.openai_model]).toEqual([
    8000,
    0.7,
    file.openai_model,
  ]);

  // A chat using it: the custom prompt is in the prompt, the switched-off description is not.
  const chatId = await page.evaluate(async () => {
    const c = await window.hearth.characters.create('Orrin');
    await window.hearth.characters.update(c.id, { card: { description: 'A lamplighter.' } });
    return (await window.hearth.chats.create(c.id)).id;
  });
  await page.goto(`./#/chats/${chatId}`);
  await page.getByRole('combobox', { name: 'Preset' }).selectOption({ label: 'Harbor' });
  await page.getByRole('button', { name: 'Show the prompt' }).click();
  const dialog = page.getByRole('dialog', { name: 'The next reply’s prompt' });
  await expect(dialog.getByRole('status')).toContainText('8,000 context');
  const shown = await dialog
    .getByRole('list', { name: 'Prompt messages' })
    .getByRole('listitem')
    .evaluateAll((items) =>
      items.map((li) => ({
        role: li.querySelector('.role')!.textContent!.trim(),
        text: li.querySelector('pre')!.textContent!,
      })),
    );
  expect(shown).toContainEqual({ role: 'user', text: 'Keep Orrin to fifty words.' });
  expect(shown.some((m) => m.text.includes("Write Orrin's next reply"))).toBe(true);
  expect(shown.some((m) => m.text.includes('A lamplighter.'))).toBe(false);
});
