import { expect, expectReply, startSession, test, waitForServiceWorker } from './fixtures';
import { PYTHON_COLD_TIMEOUT, runInShell, shellInput, workspaceOf } from './shell-panel';

/**
 * Python's start in the built app, with the service worker in control: opening a session starts
 * loading Python before any shell call, and a tab reads each of Pyodide's files once (the runtime
 * worker reads them and hands the bytes to the sandbox, whose loader fetches nothing).
 */

const PYODIDE_FILES = ['pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'];

test('a session that opens starts Python, and its tab fetches each engine file once', async ({
  page,
  context,
}) => {
  test.setTimeout(PYTHON_COLD_TIMEOUT + 60_000);
  await startSession(page, 'write a haiku about moss');
  await expectReply(page, 'Here is your haiku');
  await waitForServiceWorker(page);
  const sessionUrl = page.url();
  await page.close();

  const tab = await context.newPage();
  const requested = new Map<string, number>();
  context.on('request', (request) => {
    const url = new URL(request.url());
    if (!url.pathname.includes('/engines/pyodide/')) return;
    const name = url.pathname.split('/').pop()!;
    requested.set(name, (requested.get(name) ?? 0) + 1);
  });
  await tab.goto(sessionUrl);
  await expectReply(tab, 'Here is your haiku');
  // No shell call yet: the open session alone has the engine's files read.
  await expect
    .poll(() => PYODIDE_FILES.filter((f) => requested.has(f)), { timeout: 60_000 })
    .toEqual(PYODIDE_FILES);

  const workspace = workspaceOf(tab);
  if (!(await workspace.isVisible())) await tab.getByRole('button', { name: 'Files' }).click();
  await workspace.locator('summary', { hasText: 'Shell' }).click();
  await expect(shellInput(tab)).toBeVisible();
  expect(await runInShell(tab, "python3 -c 'print(6 * 7)'")).toContain('42');
  expect(await runInShell(tab, "python3 -c 'print(7 * 8)'")).toContain('56');

  expect(PYODIDE_FILES.map((f) => [f, requested.get(f)])).toEqual(PYODIDE_FILES.map((f) => [f, 1]));
});
