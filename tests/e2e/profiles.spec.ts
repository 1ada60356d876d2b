import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';

const problems = (page: Page) => page.getByRole('region', { name: 'Validation problems' });

/** Opens Default Writer from the list and copies it; returns on the copy's page. */
async function copyDefaultWriter(page: Page): Promise<void> {
  await page.goto('./#/profiles');
  await page.getByRole('link', { name: /Default Writer/ }).click();
  await expect(page.getByRole('note')).toContainText('read-only');
  await expect(page.getByLabel('Display name')).toBeDisabled();
  await page.getByRole('button', { name: 'Copy to edit' }).click();
  await expect(page).toHaveURL(/#\/profiles\/default-writer-copy$/);
  await expect(page.getByLabel('Display name')).toHaveValue('Default Writer (copy)');
}

test('copy Default Writer, rename it, untick a tool, save, and find it after a reload', async ({ page }) => {
  await copyDefaultWriter(page);
  await page.getByLabel('Display name').fill('My writer');
  const shell = page.getByRole('checkbox', { name: 'Allow workspace_shell' });
  await expect(shell).toBeChecked();
  await shell.uncheck();
  await expect(problems(page)).toContainText('No problems');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “My writer”' })).toBeVisible();

  await page.reload();
  await expect(page.getByLabel('Display name')).toHaveValue('My writer');
  await expect(page.getByRole('checkbox', { name: 'Allow workspace_shell' })).not.toBeChecked();
  await expect(page.getByRole('checkbox', { name: 'Allow workspace_read_file' })).toBeChecked();

  await page.getByRole('link', { name: 'Profiles', exact: true }).click();
  await expect(page.getByRole('link', { name: /My writer/ })).toBeVisible();
  await expect(page.getByRole('link', { name: /Default Writer/ })).toContainText('Built in · read-only');
});

test('the JSON editor shows each problem with its path and code, and blocks saving', async ({ page }) => {
  await copyDefaultWriter(page);
  await page.getByRole('tab', { name: 'JSON' }).click();
  const editor = page.getByRole('textbox', { name: 'Profile JSON' });
  const valid = JSON.parse(await editor.inputValue()) as Record<string, unknown>;
  const save = page.getByRole('button', { name: 'Save' });

  await editor.fill('{"schemaVersion": 5, "id": ');
  await expect(problems(page)).toContainText('agent.profile_invalid_json');
  await expect(problems(page)).toContainText('not valid JSON');
  await expect(save).toBeDisabled();

  await editor.fill(JSON.stringify({ ...valid, displayName: ' ', colour: 'red' }, null, 2));
  await expect(problems(page)).toContainText('agent.profile_unknown_field');
  await expect(problems(page)).toContainText('colour');
  await expect(save).toBeDisabled();

  await editor.fill(JSON.stringify({ ...valid, displayName: ' ' }, null, 2));
  await expect(problems(page)).toContainText('agent.profile_display_name_required');
  await expect(problems(page).getByText('displayName', { exact: true })).toBeVisible();
  await expect(save).toBeDisabled();

  await editor.fill('[');
  await page.getByRole('tab', { name: 'Form' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Fix the JSON problems' })).toBeVisible();

  await editor.fill(JSON.stringify({ ...valid, displayName: 'Edited as JSON' }, null, 2));
  await expect(problems(page)).toContainText('No problems');
  await save.click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “Edited as JSON”' })).toBeVisible();
  await page.getByRole('tab', { name: 'Form' }).click();
  await expect(page.getByLabel('Display name')).toHaveValue('Edited as JSON');
});

test('export strips the model binding, and the file imports back under a free id', async ({ page }) => {
  await copyDefaultWriter(page);
  await page.getByLabel('Model binding').selectOption({ label: 'A chosen connection and model' });
  // A select's accessible name ends with its selected option's text.
  await expect(page.getByRole('combobox', { name: /^Connection/ })).toHaveValue('demo');
  await expect(page.getByLabel('Model id')).toHaveValue('demo-script');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible();

  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export' }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe('default-writer-copy.json');
  const path = await download.path();
  const text = await readFile(path, 'utf8');
  expect(JSON.parse(text)).toMatchObject({
    id: 'default-writer-copy',
    model: { mode: 'requiresConfiguration' },
  });
  expect(text).not.toContain('demo-script');

  await page.getByRole('link', { name: '← Profiles' }).click();
  await page.getByLabel('Profile file to import').setInputFiles(path);
  const results = page.getByRole('status', { name: 'Import results' });
  await expect(results).toContainText('Imported 1 of 1');
  await expect(results).toContainText('default-writer-copy-2');
  await expect(results).toContainText('was taken');

  await results.getByRole('link', { name: 'Default Writer (copy)' }).click();
  await expect(page).toHaveURL(/#\/profiles\/default-writer-copy-2$/);
  await expect(page.getByLabel('Model binding')).toHaveValue('requiresConfiguration');
  await expect(problems(page)).toContainText('No problems');
});
