import { expect, test, addScriptedConnection } from './fixtures';

const call = (id: string, name: string, args: object) => ({
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

test('a chat reply: the agent searches the chat, reads activated lore, drafts, commits; regenerate, swipe back and continue', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  // The example character of a fresh install: Brindle, with the Marrow Point lorebook.
  await page.goto('./#/characters');
  await page
    .getByRole('link', { name: /Brindle/ })
    .first()
    .click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page).toHaveURL(/#\/chats\//);

  llm.script(
    call('s1', 'chat_search', { query: 'lighthouse' }),
    call('l1', 'worldinfo_read_activated', {}),
    call('w1', 'workspace_write_file', {
      path: 'output/main.md',
      content: '*Brindle nods.* The lamp is lit.',
    }),
    call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
  );
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Is the lighthouse lamp lit tonight?');
  await box.press('Enter');
  const reply = page.locator('.chat-message').last();
  await expect(reply).toContainText('The lamp is lit.');

  const requests = llm.requests.filter((r) => r.path.endsWith('/chat/completions'));
  const tool = (id: string) =>
    (
      requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] }
    ).messages.find((m) => m.role === 'tool' && m.tool_call_id === id)!.content;
  expect(tool('s1')).toContain('message 1 user');
  expect(tool('l1')).toContain('The lighthouse');
  const system = JSON.stringify((requests[0]!.body as { messages: unknown[] }).messages[0]);
  expect(system).toContain('brass Fresnel lens');

  // Regenerate: a second swipe; swiping back shows the first again.
  llm.script(
    call('w2', 'workspace_write_file', { path: 'output/main.md', content: 'Of course it is.' }),
    call('c2', 'workspace_commit', { path: 'output/main.md', finish: true }),
  );
  await reply.getByRole('button', { name: /Next swipe|Regenerate/ }).click();
  await expect(reply).toContainText('Of course it is.');
  await expect(reply.locator('.swipe-count')).toHaveText('2/2');
  await reply.getByRole('button', { name: 'Previous swipe' }).click();
  await expect(reply).toContainText('The lamp is lit.');

  // Continue: the agent's text is appended to the shown swipe in place.
  llm.script(
    call('w3', 'workspace_write_file', { path: 'output/main.md', content: ' It burns till dawn.' }),
    call('c3', 'workspace_commit', { path: 'output/main.md', finish: true }),
  );
  await reply.hover();
  await reply.getByRole('button', { name: 'Continue' }).click();
  await expect(reply).toContainText('The lamp is lit. It burns till dawn.');
  await expect(reply.locator('.swipe-count')).toHaveText('1/2');
});
