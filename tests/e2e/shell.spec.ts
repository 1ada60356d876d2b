import type { Page } from '@playwright/test';
import { addScriptedConnection, expect, expectReply, test, waitForServiceWorker } from './fixtures';
import {
  openShell,
  outputOf,
  PYTHON_COLD_TIMEOUT,
  runInShell,
  shellInput,
  shellLog,
  submitInShell,
  workspaceOf,
} from './shell-panel';

/**
 * Records whether a "Loading Python" progress bar was ever shown inside `selector`: the
 * download from a local server is quick, so the bar may come and go between two polls.
 */
async function watchPythonProgress(page: Page, selector: string): Promise<() => Promise<string[]>> {
  await page.evaluate((within) => {
    const seen: string[] = [];
    (window as unknown as { __progress: string[] }).__progress = seen;
    new MutationObserver(() => {
      for (const bar of document.querySelectorAll(`${within} [role=status]`)) {
        const text = bar.textContent?.trim() ?? '';
        if (/(Loading|Starting) Python/.test(text) && seen.at(-1) !== text) seen.push(text);
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  }, selector);
  return () => page.evaluate(() => (window as unknown as { __progress: string[] }).__progress);
}

test('the person runs commands in the shell panel: output, exit codes, saved files, history', async ({
  page,
}) => {
  await openShell(page);

  const sorted = await runInShell(page, "printf 'b\\na\\n' > /work/x.txt && sort /work/x.txt");
  expect(sorted).toBe('Exit code: 0\na\nb');
  const entries = shellLog(page).locator('.entry');
  await expect(entries.last()).toHaveClass(/\bok\b/);
  // The file the shell wrote is saved in the workspace and shows up in its tree.
  const workspace = workspaceOf(page);
  await workspace.getByRole('button', { name: /x\.txt/ }).click();
  await expect(workspace.getByRole('region', { name: 'File work/x.txt' })).toContainText('b\na');

  const missing = await runInShell(page, 'cat /skills/nope');
  expect(missing).toMatch(/^Exit code: 1\n/);
  expect(missing).toContain('/skills/nope');
  await expect(entries.last()).toHaveClass(/\berror\b/);

  // Arrow-up recalls the previous commands, newest first; arrow-down goes back to an empty line.
  const input = shellInput(page);
  await input.press('ArrowUp');
  await expect(input).toHaveValue('cat /skills/nope');
  await input.press('ArrowUp');
  await expect(input).toHaveValue("printf 'b\\na\\n' > /work/x.txt && sort /work/x.txt");
  await input.press('ArrowDown');
  await input.press('ArrowDown');
  await expect(input).toHaveValue('');
});

test('Python loads as the session opens, a bar shows while it is not ready, then Python, JavaScript and jq run', async ({
  page,
}) => {
  test.setTimeout(PYTHON_COLD_TIMEOUT + 60_000);
  await openShell(page);
  expect(await runInShell(page, "printf 'hello' > /work/x.txt")).toBe('Exit code: 0');

  const progress = await watchPythonProgress(page, '.shell-panel');
  expect(await runInShell(page, 'python3 -c "print(sum(range(10)))"')).toBe('Exit code: 0\n45');
  // The open session started Python (tests/e2e/python-start.spec.ts): a call that comes before it
  // is ready shows the download or the start; tests/integration/sandbox/warm.browser.test.ts makes
  // that call on purpose.
  for (const bar of await progress()) {
    expect(bar).toMatch(/^(Loading Python for the shell: .+ of .+|Starting Python for the shell…)$/);
  }
  // The bar is gone once the command has finished.
  await expect(workspaceOf(page).getByRole('status')).toHaveCount(0);

  expect(await runInShell(page, `js -e "console.log(workspace.readFile('/work/x.txt').length)"`)).toBe(
    'Exit code: 0\n5',
  );
  expect(await runInShell(page, `echo '{"a":[1,2]}' | jq -c .a`)).toBe('Exit code: 0\n[1,2]');
});

test('an agent writes a CSV and sums it with Python through workspace_shell in the real loop', async ({
  page,
  llm,
}) => {
  test.setTimeout(PYTHON_COLD_TIMEOUT + 60_000);
  const command =
    "python3 -c \"import csv; rows=list(csv.DictReader(open('/work/data.csv'))); open('/work/total.txt','w').write(str(sum(int(r['score']) for r in rows)))\" && cat /work/total.txt";
  const call = (id: string, name: string, args: object) => ({
    text: [],
    toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
  });
  llm.script(
    call('w1', 'workspace_write_file', { path: 'work/data.csv', content: 'name,score\nada,3\nbob,5\n' }),
    call('s1', 'workspace_shell', { command }),
    { text: ['The total score is 8.'] },
  );
  await addScriptedConnection(page, llm);
  await page.goto('./');
  await page
    .getByRole('button', { name: /new session|start your first session/i })
    .first()
    .click();
  const progress = await watchPythonProgress(page, '[aria-label="Conversation"]');
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('add up the scores');
  await box.press('Enter');
  // The shell call waits for Python's first load, longer than an ordinary reply takes.
  await expect(page.locator('.message.assistant:not(.streaming)').last()).toContainText(
    'The total score is 8.',
    { timeout: PYTHON_COLD_TIMEOUT },
  );
  await expectReply(page, 'The total score is 8.');

  const chats = llm.requests.filter((r) => r.path.endsWith('/chat/completions'));
  expect(chats).toHaveLength(3);
  const first = chats[0]!.body as { tools: { function: { name: string } }[] };
  expect(first.tools.map((t) => t.function.name)).toContain('workspace_shell');
  const last = chats[2]!.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
  const result = last.messages.find((m) => m.role === 'tool' && m.tool_call_id === 's1')!.content;
  expect(result).toBe('Exit code: 0\n8');
  // Whatever of Python's load the agent waited for, the conversation showed it.
  for (const bar of await progress()) expect(bar).toMatch(/^(Loading|Starting) Python for the shell/);
  await expect(page.getByRole('region', { name: 'Conversation' }).getByRole('status')).toHaveCount(0);

  const workspace = workspaceOf(page);
  await workspace.getByRole('button', { name: /total\.txt/ }).click();
  await expect(workspace.getByRole('region', { name: 'File work/total.txt' })).toContainText('8');
  await workspace.locator('summary', { hasText: 'Shell' }).click();
  expect(await runInShell(page, 'cat /work/total.txt')).toBe('Exit code: 0\n8');
});

test('Stop ends a runaway Python loop, and the next command runs in a fresh sandbox', async ({ page }) => {
  test.setTimeout(PYTHON_COLD_TIMEOUT + 60_000);
  await openShell(page);
  expect(await runInShell(page, 'python3 -c "print(1)"')).toBe('Exit code: 0\n1');

  const entry = await submitInShell(page, 'python3 -c "while True: pass"');
  await expect(entry).toContainText('Running…');
  await workspaceOf(page).getByRole('button', { name: 'Stop' }).click();
  expect(await outputOf(page, entry)).toBe('Command cancelled.');
  await expect(entry).toHaveClass(/\berror\b/);

  expect(await runInShell(page, 'echo after')).toBe('Exit code: 0\nafter');
});

test('Python runs offline once the service worker has cached the engines', async ({ page, context }) => {
  test.setTimeout(2 * PYTHON_COLD_TIMEOUT);
  await openShell(page);
  await waitForServiceWorker(page);
  expect(await runInShell(page, 'python3 -c "print(1+1)"')).toBe('Exit code: 0\n2');

  await context.setOffline(true);
  await page.reload();
  await expectReply(page, 'Here is your haiku');
  await workspaceOf(page).locator('summary', { hasText: 'Shell' }).click();
  expect(await runInShell(page, 'python3 -c "print(6*7)"')).toBe('Exit code: 0\n42');
});
