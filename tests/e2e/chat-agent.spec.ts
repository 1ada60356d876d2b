import { readFile } from 'node:fs/promises';
import { cardPng, textChunks } from '../support/png-card.ts';
import { expect, test, addScriptedConnection } from './fixtures';

const call = (id: string, name: string, args: object) => ({
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

test('an imported card answered by an agent: search, lore, draft, commit; regenerate, swipe back, continue; export and re-import', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  await page.goto('./#/characters');
  await page.getByLabel('Character card to import').setInputFiles({
    name: 'orrin.png',
    mimeType: 'image/png',
    buffer: cardPng(),
  });
  const orrin = page.getByRole('listitem', { name: 'Orrin' });
  await expect(orrin).toContainText('Lorebook: Brindle lore');
  await orrin.getByRole('link', { name: /Orrin/ }).click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page).toHaveURL(/#\/chats\//);
  const chatUrl = page.url();

  llm.script(
    call('s1', 'chat_search', { query: 'walk' }),
    call('l1', 'worldinfo_read_activated', {}),
    call('w1', 'workspace_write_file', {
      path: 'output/main.md',
      content: '*Orrin raises his pole.* Every lamp is lit.',
    }),
    call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
  );
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Is every lamp lit tonight?');
  await box.press('Enter');
  const reply = page.locator('.chat-message').last();
  await expect(reply).toContainText('Every lamp is lit.');

  const requests = llm.requests.filter((r) => r.path.endsWith('/chat/completions'));
  const tool = (id: string) =>
    (
      requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] }
    ).messages.find((m) => m.role === 'tool' && m.tool_call_id === id)!.content;
  // The greeting is message 0: the search finds it in the run's frozen history.
  expect(tool('s1')).toContain('Walk with me?');
  // "lamp" in the person's message activated the card's embedded lorebook entry.
  expect(tool('l1')).toContain('world=Brindle lore');
  // A card entry without a position goes after the character, as SillyTavern converts card books:
  // its own system message after the scenario.
  const sent = (requests[0]!.body as { messages: { role: string; content: unknown }[] }).messages;
  const at = sent.findIndex((m) => JSON.stringify(m.content).includes('The lamps of Brindle never go out.'));
  expect(at).toBeGreaterThan(0);
  expect(sent[at]!.role).toBe('system');
  expect(JSON.stringify(sent[at - 1]!.content)).toContain('Dusk in Brindle.');

  // Regenerate: a second swipe; swiping back shows the first again.
  llm.script(
    call('w2', 'workspace_write_file', { path: 'output/main.md', content: 'Of course they are.' }),
    call('c2', 'workspace_commit', { path: 'output/main.md', finish: true }),
  );
  await reply.getByRole('button', { name: /Next swipe|Regenerate/ }).click();
  await expect(reply).toContainText('Of course they are.');
  await expect(reply.locator('.swipe-count')).toHaveText('2/2');
  await reply.getByRole('button', { name: 'Previous swipe' }).click();
  await expect(reply).toContainText('Every lamp is lit.');

  // Continue: the agent's text is appended to the shown swipe in place.
  llm.script(
    call('w3', 'workspace_write_file', { path: 'output/main.md', content: ' Not one has gone out.' }),
    call('c3', 'workspace_commit', { path: 'output/main.md', finish: true }),
  );
  await reply.hover();
  await reply.getByRole('button', { name: 'Continue' }).click();
  await expect(reply).toContainText('Every lamp is lit. Not one has gone out.');
  await expect(reply.locator('.swipe-count')).toHaveText('1/2');

  // Export the chat as JSONL and the card as PNG, then bring both back.
  const [chatDownload] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export JSONL' }).click(),
  ]);
  const jsonl = await readFile(await chatDownload.path());
  const lines = jsonl.toString('utf8').trim().split('\n');
  const continued = '*Orrin raises his pole.* Every lamp is lit. Not one has gone out.';
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({
    mes: continued,
    swipes: [continued, 'Of course they are.'],
  });

  await page.goto('./#/characters');
  await page.getByRole('listitem', { name: 'Orrin' }).getByRole('link', { name: /Orrin/ }).click();
  await page.getByRole('button', { name: 'Export PNG' }).waitFor();
  const [cardDownload] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export PNG' }).click(),
  ]);
  const exported = await readFile(await cardDownload.path());
  expect([...textChunks(exported).keys()].sort()).toEqual(['ccv3', 'chara']);

  await page.goto('./#/characters');
  await page.getByLabel('Character card to import').setInputFiles({
    name: 'Orrin.png',
    mimeType: 'image/png',
    buffer: exported,
  });
  const orrins = page.getByRole('listitem', { name: 'Orrin' });
  await expect(orrins).toHaveCount(2);
  await expect(orrins.nth(1)).toContainText('Lorebook: Brindle lore');

  await page.goto(chatUrl);
  await page.getByRole('link', { name: 'Back to Orrin' }).click();
  await page.getByLabel('SillyTavern chat to import').setInputFiles({
    name: 'orrin-chat.jsonl',
    mimeType: 'application/jsonl',
    buffer: jsonl,
  });
  const status = page.getByRole('status', { name: 'Chat imported' });
  await expect(status).toContainText('Imported “orrin-chat.jsonl”');
  await status.getByRole('link').click();
  await expect(page).toHaveURL(/#\/chats\//);
  expect(page.url()).not.toBe(chatUrl);
  const imported = page.locator('.chat-message').last();
  await expect(imported).toContainText('Every lamp is lit. Not one has gone out.');
  await expect(imported.locator('.swipe-count')).toHaveText('1/2');
});
