import { newLorebookEntry } from '../../src/lib/chat/lorebook.ts';
import { addScriptedConnection, expect, test } from './fixtures';

const call = (id: string, name: string, args: object) => ({
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

// As JSON: the entry's recursive JSON types are too deep for `page.evaluate`'s argument typing.
const LAMP = JSON.stringify(
  newLorebookEntry(0, {
    comment: "Brindle's lamp",
    keys: ['lighthouse'],
    content: 'The lighthouse lamp has been dark since the keeper Brindle vanished.',
  }),
);

test('which lore fired for a reply and why; a lorebook attached to one chat', async ({ page }) => {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  const characterId = await page.evaluate(async (lamp) => {
    const h = window.hearth;
    const harbour = await h.lorebooks.create('Harbour lore');
    await h.lorebooks.update(harbour.id, { ...harbour.book, entries: [JSON.parse(lamp)] });
    await h.lorebooks.create('Tide tables');
    const c = await h.characters.create('Keeper');
    await h.characters.update(c.id, { lorebookIds: [harbour.id] });
    return c.id;
  }, LAMP);

  await page.goto(`./#/characters/${characterId}`);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page).toHaveURL(/#\/chats\/[^/]+$/);
  const chatId = page.url().split('/').at(-1)!;
  await expect(page.getByRole('note').filter({ hasText: 'Demo: scripted responses' })).toBeVisible();

  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('the lighthouse is dark');
  await box.press('Enter');
  const reply = page.locator('.chat-message.character').last();
  await expect(reply).toContainText('You said');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  // The reply's run used one lore entry: a badge beside its details link.
  await expect(reply.locator('.lore-badge')).toHaveText('1 lore entry');
  await expect(reply.locator('.lore-badge')).toHaveAttribute('title', /Brindle's lamp/);

  // The run view lists the entry, why it fired, and its content on request.
  await reply.getByRole('link', { name: 'details' }).click();
  await expect(page).toHaveURL(/#\/runs\/.+/);
  const lore = page.getByRole('region', { name: 'Lore activated for this reply' });
  const activated = lore.getByRole('list', { name: 'Activated entries' }).getByRole('listitem');
  await expect(activated).toHaveCount(1);
  await expect(activated).toContainText("Brindle's lamp");
  await expect(activated).toContainText('Harbour lore');
  await expect(activated).toContainText('order 100');
  await expect(activated.locator('.lore-why')).toHaveText(/^key lighthouse in message \d+$/);
  await expect(activated.locator('.lore-why code')).toHaveText('lighthouse');
  await expect(activated.getByText('has been dark since')).toBeHidden();
  await activated.getByText('Content', { exact: true }).click();
  await expect(activated.getByText('has been dark since')).toBeVisible();
  await expect(lore).toContainText('Budget:');

  // The chat's lorebook picker: the character's book is locked on; another is attached here.
  await page.getByRole('link', { name: 'Back to the chat' }).click();
  await expect(page).toHaveURL(new RegExp(`#/chats/${chatId}$`));
  const picker = page.locator('.lore-picker');
  const summary = picker.locator('summary');
  await expect(summary).toHaveText(/^Lorebooks \(\d+\)$/);
  const before = Number(/\d+/.exec((await summary.textContent()) ?? '')![0]);
  await summary.click();
  const harbour = picker.getByRole('checkbox', { name: 'Harbour lore' });
  await expect(harbour).toBeChecked();
  await expect(harbour).toBeDisabled();
  await expect(picker).toContainText('from Keeper');
  const tides = picker.getByRole('checkbox', { name: 'Tide tables' });
  await expect(tides).not.toBeChecked();
  await tides.check();
  await expect(summary).toHaveText(`Lorebooks (${before + 1})`);
  await expect
    .poll(() =>
      page.evaluate(async (id) => (await window.hearth.chats.get(id)).chat.lorebookIds.length, chatId),
    )
    .toBe(1);

  await page.reload();
  await page.locator('.lore-picker summary').click();
  await expect(page.locator('.lore-picker').getByRole('checkbox', { name: 'Tide tables' })).toBeChecked();
  await expect(page.locator('.lore-picker').getByRole('checkbox', { name: 'Harbour lore' })).toBeDisabled();
});

test("an author's note in the chat at depth 1: saved, sent one message before the last, shown as the note", async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  const chatId = await page.evaluate(async () => {
    const c = await window.hearth.characters.create('Orrin');
    return (await window.hearth.chats.create(c.id)).id;
  });
  await page.goto(`./#/chats/${chatId}`);
  await page.getByRole('button', { name: 'Author’s note' }).click();
  const dialog = page.getByRole('dialog', { name: 'Author’s note' });
  await expect(dialog).toBeVisible();
  // SillyTavern's defaults: in the chat at depth 4, as system, with every message.
  await expect(dialog.getByRole('radio', { name: 'In the chat at depth' })).toBeChecked();
  await expect(dialog.getByRole('spinbutton', { name: 'Depth' })).toHaveValue('4');
  await expect(dialog.getByRole('spinbutton', { name: 'Every N of your messages' })).toHaveValue('1');
  await dialog.getByRole('textbox', { name: 'Note' }).fill('{{char}} hums an old sea song.');
  await dialog.getByRole('radio', { name: 'After the main prompt' }).check();
  await expect(dialog.getByRole('spinbutton', { name: 'Depth' })).toBeDisabled();
  await dialog.getByRole('radio', { name: 'In the chat at depth' }).check();
  await dialog.getByRole('spinbutton', { name: 'Depth' }).fill('');
  await expect(dialog.getByRole('alert')).toHaveText('The depth is a whole number from 0 to 1000.');
  await expect(dialog.getByRole('button', { name: 'Save' })).toBeDisabled();
  await dialog.getByRole('spinbutton', { name: 'Depth' }).fill('1');
  await dialog.getByRole('combobox', { name: 'Role' }).selectOption('user');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole('button', { name: 'Author’s note (on)' })).toBeVisible();

  llm.script(
    call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'The lamp is lit.' }),
    call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
  );
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Is the lamp lit?');
  await box.press('Enter');
  await expect(page.locator('.chat-message').last()).toContainText('The lamp is lit.');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();

  // The request carried the note, macros expanded, as the person's role, one message before the last.
  const request = llm.requests.filter((r) => r.path.endsWith('/chat/completions'))[0]!;
  const sent = (request.body as { messages: { role: string; content: unknown }[] }).messages.map((m) => ({
    role: m.role,
    text: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
  }));
  expect(sent.at(-2)).toEqual({ role: 'user', text: 'Orrin hums an old sea song.' });
  expect(sent.at(-1)).toEqual({ role: 'user', text: 'Is the lamp lit?' });

  // Without the reply, "Show the prompt" lists what was sent, the note labelled as such.
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Delete message 2' }).click();
  await expect(page.locator('.chat-message')).toHaveCount(1);
  await page.getByRole('button', { name: 'Show the prompt' }).click();
  const prompt = page.getByRole('dialog', { name: 'The next reply’s prompt' });
  const items = prompt.getByRole('list', { name: 'Prompt messages' }).getByRole('listitem');
  await expect(items).toHaveCount(sent.length);
  const shown = await items.evaluateAll((lis) =>
    lis.map((li) => ({
      role: li.querySelector('.role')!.textContent!.trim(),
      label: li.querySelector('.label')!.textContent!.trim(),
      text: li.querySelector('pre')!.textContent!,
    })),
  );
  expect(shown.at(-2)).toEqual({
    role: 'user',
    label: "at depth 1: author's note",
    text: 'Orrin hums an old sea song.',
  });
  expect(shown.map(({ role, text }) => ({ role, text }))).toEqual(sent);
  await page.keyboard.press('Escape');

  // Kept with the chat: the dialog opens with it after a reload.
  await page.reload();
  await page.getByRole('button', { name: 'Author’s note' }).click();
  await expect(dialog.getByRole('textbox', { name: 'Note' })).toHaveValue('{{char}} hums an old sea song.');
  await expect(dialog.getByRole('spinbutton', { name: 'Depth' })).toHaveValue('1');
  await expect(dialog.getByRole('combobox', { name: 'Role' })).toHaveValue('user');
});

test("a character's own note, set on its page, goes after the chat's note in the prompt", async ({
  page,
}) => {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  const { characterId, chatId } = await page.evaluate(async () => {
    const c = await window.hearth.characters.create('Orrin');
    const chat = await window.hearth.chats.create(c.id);
    await window.hearth.chats.setAuthorsNote(chat.id, {
      text: 'Night falls.',
      position: 'in_prompt',
      depth: 4,
      role: 'system',
      interval: 1,
    });
    return { characterId: c.id, chatId: chat.id };
  });
  await page.goto(`./#/characters/${characterId}`);
  await page.getByRole('textbox', { name: 'Character’s note' }).fill('{{char}} counts the lamps.');
  await page.getByRole('checkbox', { name: 'Use this note in this character’s chats' }).check();
  await page.getByRole('radio', { name: 'After the chat’s note' }).check();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “Orrin”.' })).toBeVisible();
  await page.reload();
  await expect(page.getByRole('radio', { name: 'After the chat’s note' })).toBeChecked();
  await expect(page.getByRole('checkbox', { name: 'Use this note in this character’s chats' })).toBeChecked();

  await page.goto(`./#/chats/${chatId}`);
  await page.getByRole('button', { name: 'Show the prompt' }).click();
  const note = page
    .getByRole('dialog', { name: 'The next reply’s prompt' })
    .getByRole('listitem')
    .filter({ hasText: "author's note" });
  await expect(note.locator('pre')).toHaveText('Night falls.\nOrrin counts the lamps.');
});
