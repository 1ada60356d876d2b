import type { Locator, Page } from '@playwright/test';
import { expect, expectReply, startSession } from './fixtures';

/** Python's first load in a fresh profile (13 MB from the local server, then Pyodide's start-up). */
export const PYTHON_COLD_TIMEOUT = 120_000;

export const workspaceOf = (page: Page) => page.getByRole('complementary', { name: 'Workspace' });
export const shellLog = (page: Page) => workspaceOf(page).getByRole('log', { name: 'Shell output' });
export const shellInput = (page: Page) => workspaceOf(page).getByRole('textbox', { name: 'Shell command' });

/** Starts a Demo session (one haiku reply) and expands the workspace's Shell panel. */
export async function openShell(page: Page): Promise<void> {
  await startSession(page, 'write a haiku about moss');
  await expectReply(page, 'Here is your haiku');
  const workspace = workspaceOf(page);
  if (!(await workspace.isVisible())) await page.getByRole('button', { name: 'Files' }).click();
  await workspace.locator('summary', { hasText: 'Shell' }).click();
  await expect(shellInput(page)).toBeVisible();
}

/** Types `command` into the panel and submits it; returns the new entry, still running or not. */
export async function submitInShell(page: Page, command: string): Promise<Locator> {
  const entries = shellLog(page).locator('.entry');
  const before = await entries.count();
  await shellInput(page).fill(command);
  await shellInput(page).press('Enter');
  await expect(entries).toHaveCount(before + 1);
  const entry = entries.nth(before);
  await expect(entry.locator('.prompt-line')).toContainText(command);
  return entry;
}

/** The finished entry's output (its `<pre>`), once the panel is ready for the next command. */
export async function outputOf(page: Page, entry: Locator): Promise<string> {
  await expect(entry.locator('pre')).toHaveCount(1, { timeout: PYTHON_COLD_TIMEOUT });
  await expect(workspaceOf(page).getByRole('button', { name: 'Run' })).toBeVisible();
  return (await entry.locator('pre').textContent()) ?? '';
}

/** Runs `command` in the person's shell panel and returns the output shown for it. */
export async function runInShell(page: Page, command: string): Promise<string> {
  return outputOf(page, await submitInShell(page, command));
}
