import { readFile } from 'node:fs/promises';
import { unzipSync } from 'fflate';
import {
  addScriptedConnection,
  expect,
  expectReply,
  recordStreamedText,
  send,
  startSession,
  test,
} from './fixtures';

/** The Session profile's tools, in its allow order. */
const SESSION_TOOLS = [
  'workspace_list_files',
  'workspace_search_files',
  'workspace_read_file',
  'workspace_write_file',
  'workspace_apply_patch',
  'workspace_shell',
];

test('a first conversation with the Demo provider writes work/haiku.md', async ({ page }) => {
  await page.goto('./');
  const streamed = await recordStreamedText(page);
  await page.getByRole('button', { name: 'Start your first session' }).click();
  await send(page, 'write a haiku about the sea');
  await expect(
    page.getByRole('note').filter({ hasText: 'Demo: scripted responses, not an AI' }),
  ).toBeVisible();
  await expectReply(page, 'Here is your haiku');
  // The reply streamed: partial texts were shown before each message was complete.
  const texts = await streamed();
  expect(texts.some((t) => t.startsWith("I'll write") && !t.includes('work/haiku.md.'))).toBe(true);
  expect(texts.some((t) => t.startsWith('Here is your haiku'))).toBe(true);
  await expect(page.getByText('workspace_write_file')).toBeVisible();
  await expect(page.getByText('workspace_read_file')).toBeVisible();

  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  await workspace.getByRole('button', { name: /haiku\.md/ }).click();
  await expect(workspace.getByRole('region', { name: 'File work/haiku.md' })).toContainText('the sea');
});

test('a real two-round tool loop against an OpenAI-compatible server', async ({ page, llm }) => {
  llm.script(
    {
      text: ['Let me ', 'save that.'],
      toolCalls: [
        {
          id: 'call_Xy9',
          name: 'workspace_write_file',
          arguments: ['{"path": "work/', 'plan.md", "content"', ': "step one\\n"}'],
        },
      ],
      usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
    },
    { text: ['Saved your plan ', 'in work/plan.md.'], usage: { prompt_tokens: 200, completion_tokens: 10 } },
  );
  await addScriptedConnection(page, llm);
  await startSession(page, 'make a plan');

  await expectReply(page, 'Saved your plan in work/plan.md.');
  const chats = llm.requests.filter((r) => r.path.endsWith('/chat/completions'));
  expect(chats).toHaveLength(2);
  expect(chats[0]!.headers.authorization).toBe('Bearer sk-test-key');
  const first = chats[0]!.body as { model: string; stream: boolean; tools: { function: { name: string } }[] };
  expect(first).toMatchObject({ model: 'scripted-model', stream: true });
  expect(first.tools.map((t) => t.function.name)).toEqual(SESSION_TOOLS);
  const second = chats[1]!.body as { messages: Record<string, unknown>[] };
  const [assistant, tool] = second.messages.slice(-2);
  expect(assistant).toMatchObject({
    role: 'assistant',
    tool_calls: [{ id: 'call_Xy9', type: 'function', function: { name: 'workspace_write_file' } }],
  });
  expect(
    JSON.parse((assistant!.tool_calls as { function: { arguments: string } }[])[0]!.function.arguments),
  ).toEqual({ path: 'work/plan.md', content: 'step one\n' });
  expect(tool).toMatchObject({ role: 'tool', tool_call_id: 'call_Xy9' });
  expect(String(tool!.content)).toContain('work/plan.md');

  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  await workspace.getByRole('button', { name: /plan\.md/ }).click();
  await expect(workspace.getByRole('region', { name: 'File work/plan.md' })).toContainText('step one');
});

test('history and workspace files survive a reload', async ({ page }) => {
  await startSession(page, 'write a haiku about lanterns');
  await expectReply(page, 'Here is your haiku');
  await page.reload();
  await expect(page.locator('.message.user')).toContainText('write a haiku about lanterns');
  await expectReply(page, 'Here is your haiku');
  await page.goto('./');
  await page.getByRole('link', { name: /write a haiku about lanterns/ }).click();
  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  await workspace.getByRole('button', { name: /haiku\.md/ }).click();
  await expect(workspace.getByRole('region', { name: 'File work/haiku.md' })).toContainText('lanterns');
});

test('a reply cut off by closing the tab is marked interrupted, and Resume finishes it', async ({
  page,
  llm,
}) => {
  llm.script({ text: Array.from({ length: 80 }, (_, i) => `w${i} `), delayMs: 100 });
  await addScriptedConnection(page, llm);
  await startSession(page, 'go on');
  await expect(page.locator('.message.streaming')).toContainText('w2');
  await page.reload();
  await expect(page.getByText('Interrupted: the tab running this reply was closed')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  await expect(page.locator('.message.user')).toContainText('go on');

  llm.script({ text: ['Resumed ', 'and done.'] });
  await page.getByRole('button', { name: 'Resume' }).click();
  await expectReply(page, 'Resumed and done.');
  // The same run: one "details" link, for a run of 2 rounds (the cut-off one and the resumed one).
  await expect(page.locator('.run-link')).toHaveCount(1);
});

test('two tabs on one session: the second follows the first live and can stop it', async ({ page, llm }) => {
  // Long enough (100 s) that the reply still streams however slowly the second tab opens.
  llm.script({ text: Array.from({ length: 1000 }, (_, i) => `t${i} `), delayMs: 100 });
  await addScriptedConnection(page, llm);
  await startSession(page, 'long one');
  await expect(page.locator('.message.streaming')).toContainText('t1');
  const second = await page.context().newPage();
  await second.goto(page.url());
  await expect(second.locator('.message.streaming')).toContainText(/t\d+/);
  await expect(second.getByRole('button', { name: 'Stop' })).toBeVisible();
  await second.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByText('Stopped here; the text above is what arrived.')).toBeVisible();
  await expect(second.getByRole('button', { name: 'Send' })).toBeVisible();
});

test('an instruction added while the agent works reaches its next request', async ({ page, llm }) => {
  // The first reply waits until the instruction is in: however slow the page, the run is still working.
  let instructionSent!: () => void;
  const sent = new Promise<void>((resolve) => (instructionSent = resolve));
  llm.script(
    {
      text: ['Writing a draft.'],
      waitFor: sent,
      toolCalls: [
        { id: 'g1', name: 'workspace_write_file', arguments: ['{"path":"work/d.md","content":"draft"}'] },
      ],
    },
    { text: ['Done with your note in mind.'] },
  );
  await addScriptedConnection(page, llm);
  await startSession(page, 'draft something');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible();
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Keep it short.');
  await box.press('Enter');
  await expect(box).toHaveValue('');
  instructionSent();
  await expectReply(page, 'Done with your note in mind.');
  await expect(page.locator('.message.user.guidance')).toContainText('Keep it short.');
  const chats = llm.requests.filter((r) => r.path.endsWith('/chat/completions'));
  expect(JSON.stringify(chats.at(-1)!.body)).toContain('Keep it short.');
});

test('the app loads offline from the service worker and shows stored data', async ({ page, context }) => {
  await page.goto('./');
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve));
    }
  });
  await startSession(page, 'write a haiku about snow');
  await expectReply(page, 'Here is your haiku');

  await context.setOffline(true);
  await page.reload();
  await expect(page.locator('.message.user')).toContainText('write a haiku about snow');
  await page.goto('./');
  await expect(page.getByRole('link', { name: /write a haiku about snow/ })).toBeVisible();
  // New work still runs offline with the Demo provider.
  await page.getByRole('link', { name: /write a haiku about snow/ }).click();
  await send(page, 'note: it snowed');
  await expectReply(page, 'Noted');
});

test('Stop cancels a streaming reply and keeps what arrived', async ({ page, llm }) => {
  const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
  llm.script({ text: words, delayMs: 150 });
  await addScriptedConnection(page, llm);
  await startSession(page, 'tell me a long story');

  await expect(page.locator('.message.streaming')).toContainText('word3');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByText('Stopped here; the text above is what arrived.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  const kept = await page.locator('.message.assistant').last().innerText();
  expect(kept).toContain('word0 word1 word2 word3');
  expect(kept).not.toContain('word59');

  await page.reload();
  await expect(page.locator('.message.assistant').last()).toContainText('word3');
  await expect(page.getByText('Stopped here; the text above is what arrived.')).toBeVisible();
});

test('a provider that answers with a web page fails the reply with a readable message', async ({
  page,
  llm,
}) => {
  llm.script({ fault: 'html' });
  await addScriptedConnection(page, llm);
  await startSession(page, 'hello?');
  const error = page.getByRole('alert').filter({ hasText: 'The reply failed' });
  await expect(error).toContainText('model.upstream_invalid_response');
  await expect(error).toContainText(/web page/i);
  await expect(page.locator('.message.user')).toContainText('hello?');
  await page.reload();
  await expect(page.getByRole('alert').filter({ hasText: 'The reply failed' })).toBeVisible();
});

test('Test connection reports success, and explains a refused key', async ({ page, llm }) => {
  llm.script({ text: ['ok'] });
  await page.goto('./#/connections');
  await page.getByRole('button', { name: 'Add connection' }).click();
  await page.getByLabel('Name').fill('Scripted');
  await page.getByLabel('Base URL').fill(llm.url);
  await page.getByLabel('Model').fill('scripted-model');
  await page.getByLabel('API key').fill('sk-wrong');
  await page.getByRole('button', { name: 'Test connection' }).click();
  const failed = page.getByRole('alert').filter({ hasText: 'Connection failed' });
  await expect(failed).toContainText('model.provider_denied');
  await expect(failed).not.toContainText('sk-wrong');

  await page.getByLabel('API key').fill('sk-test-key');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toContainText('ok');
});

test('the run view shows every round, tool call, arguments, result and changed file', async ({ page }) => {
  await startSession(page, 'write a haiku about embers');
  await expectReply(page, 'Here is your haiku');
  await page.getByRole('link', { name: /3 rounds · .* · details/ }).click();
  await expect(page.getByRole('heading', { name: 'Round 3' })).toBeVisible();
  const round1 = page.locator('.round').filter({ has: page.getByRole('heading', { name: 'Round 1' }) });
  await expect(round1.getByText('workspace_write_file')).toBeVisible();
  await expect(round1.getByText('work/haiku.md')).toBeVisible();
  await round1.getByText('Arguments').click();
  await expect(round1.locator('details', { hasText: 'Arguments' }).locator('pre')).toContainText('"content"');
  await round1.getByText('Result').click();
  await expect(round1.locator('details', { hasText: 'Result' }).locator('pre')).toContainText('Wrote');
  await page.getByLabel('Show').selectOption('files');
  await expect(page.getByText('workspace_read_file')).toBeHidden();
  await page.getByRole('button', { name: 'View this version' }).click();
  await expect(page.getByRole('region', { name: 'File work/haiku.md (cp_000001)' })).toContainText('embers');
});

test('a run exports as a zip with its record, journal and files, and no API key', async ({ page, llm }) => {
  llm.script(
    {
      toolCalls: [
        { id: 'x1', name: 'workspace_write_file', arguments: ['{"path":"work/r.md","content":"r"}'] },
      ],
    },
    { text: ['ok'] },
  );
  await addScriptedConnection(page, llm);
  await startSession(page, 'report me');
  await expectReply(page, 'ok');
  await page.getByRole('link', { name: /details/ }).click();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export run (zip)' }).click(),
  ]);
  const entries = unzipSync(new Uint8Array(await readFile(await download.path())));
  const names = Object.keys(entries);
  expect(names).toContain('hearth-run/run.json');
  expect(names).toContain('hearth-run/journal.json');
  expect(names).toContain('work/r.md');
  expect(names.some((n) => /^runs\/run_[0-9a-f]+\/model-responses\/round-001\.json$/.test(n))).toBe(true);
  const everything = Object.values(entries)
    .map((b) => new TextDecoder().decode(b))
    .join('\n');
  expect(everything).not.toContain('sk-test-key');
});

test('a long Session is compacted: older turns are summarised to fit the model', async ({ page, llm }) => {
  llm.script(
    { text: [`EARLY ${'long answer '.repeat(200)}`] },
    { text: ['SUMMARY: we talked about a long answer.'] },
    { text: ['Short reply after compaction.'] },
  );
  await addScriptedConnection(page, llm);
  await page.goto('./#/connections');
  await page.getByRole('button', { name: 'Edit' }).click();
  const windowField = page.getByLabel('Context window (tokens, optional)');
  // The field's note says what an empty field means for this model, and for a well-known one.
  await expect(windowField).toHaveAccessibleDescription(
    /scripted-model is not a model Hearth knows the window of, so long sessions are not summarised/,
  );
  const model = page.getByLabel('Model', { exact: true });
  await model.fill('gpt-4o-mini');
  await expect(windowField).toHaveAccessibleDescription(
    /the known window of gpt-4o-mini, 128,000 tokens, is used/,
  );
  await model.fill('scripted-model');
  await windowField.fill('1000');
  await expect(windowField).toHaveAccessibleDescription(/summarised to fit 1,000 tokens/);
  await page.getByRole('button', { name: 'Save' }).click();
  // The session must start after the context window is stored, or it runs without compaction.
  await expect(page.getByRole('status').filter({ hasText: /^Saved/ })).toBeVisible();
  await startSession(page, 'tell me everything');
  await expectReply(page, 'EARLY');
  await send(page, 'and now briefly');
  await expectReply(page, 'Short reply after compaction.');

  const chats = llm.requests.filter((r) => r.path.endsWith('/chat/completions'));
  expect(chats).toHaveLength(3);
  expect(JSON.stringify(chats[1]!.body)).toContain('Summarise this conversation');
  const last = JSON.stringify(chats[2]!.body);
  expect(last).toContain('SUMMARY: we talked about a long answer.');
  expect(last).not.toContain('EARLY');
  // The originals stay in the conversation on screen; the summary is marked as such.
  await expect(page.locator('.message.assistant').first()).toContainText('EARLY');
  await expect(page.locator('.message.summary')).toContainText('Summary of messages 1–2');
});
