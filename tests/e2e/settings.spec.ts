import { expect, expectReply, send, startSession, test } from './fixtures';

test('retention previews and removes old runs’ details while the conversation stays', async ({ page }) => {
  await startSession(page, 'write a haiku about moss');
  await expectReply(page, 'Here is your haiku');
  await send(page, 'note: buy candles');
  await expectReply(page, 'Noted in');
  await send(page, 'read work/notes.md');
  await expectReply(page, 'buy candles');

  const runLinks = page.locator('a.run-link');
  await expect(runLinks).toHaveCount(3);
  const [oldest, middle, newest] = (await runLinks.evaluateAll((links) =>
    links.map((a) => a.getAttribute('href')!),
  )) as [string, string, string];

  await page.getByRole('navigation').getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();

  // Storage: usage and quota, and whether the data is persistent.
  await expect(page.getByRole('meter', { name: 'Storage used' })).toBeVisible();
  await expect(page.getByTestId('persisted')).toContainText(/persistent/i);
  const ask = page.getByRole('button', { name: 'Request persistent storage' });
  if (await ask.isVisible()) {
    await ask.click();
    // The page asks (persist() is window-only); the browser's answer is shown either way.
    await expect(page.getByText(/The browser (granted|declined)/)).toBeVisible();
  }

  // What takes the space: the session, with its messages and files, linked to its page.
  await page.getByRole('button', { name: 'Measure' }).click();
  const use = page.getByRole('table', { name: 'What takes the space' });
  const row = use.getByRole('row', { name: /Session write a haiku about moss/ });
  await expect(row).toContainText(/\d+(\.\d)? (B|KB|MB).*\(\d+ files\)/);
  await expect(row.getByRole('link')).toHaveAttribute('href', /#\/sessions\//);

  // Retention: validated as typed.
  const full = page.getByLabel('Runs that keep everything');
  const journal = page.getByLabel('Runs that keep their journal');
  await expect(full).toHaveValue('20');
  await expect(journal).toHaveValue('100');
  await full.fill('101');
  await expect(full).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByText('Cannot be more than the runs that keep their journal.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Preview' })).toBeDisabled();
  await full.fill('1');
  await expect(full).not.toHaveAttribute('aria-invalid', 'true');

  // The dry run: the two older runs, with the bytes they hold; nothing deleted yet.
  await page.getByRole('button', { name: 'Preview' }).click();
  const affected = page.getByRole('list', { name: 'Runs that would lose details' });
  await expect(affected.getByRole('listitem')).toHaveCount(2);
  await expect(affected.locator(`a[href="${oldest}"]`)).toBeVisible();
  await expect(affected.locator(`a[href="${middle}"]`)).toBeVisible();
  await expect(affected.locator(`a[href="${newest}"]`)).toHaveCount(0);
  const summary = page.getByTestId('preview-summary');
  await expect(summary).toContainText('2 runs of 3 finished runs would lose details');
  await expect(summary).toContainText(/freeing \d+(\.\d)? (B|KB|MB)/);
  await expect(summary).not.toContainText('freeing 0 B');

  page.once('dialog', (dialog) => {
    expect(dialog.message()).toContain('the stored files of 2 runs');
    void dialog.accept();
  });
  await page.getByRole('button', { name: 'Delete now' }).click();
  await expect(page.getByTestId('retention-result')).toContainText('Removed the details of 2 runs');

  // Previewing again finds nothing left to remove.
  await page.getByRole('button', { name: 'Preview' }).click();
  await expect(page.getByText(/Nothing to delete/)).toBeVisible();

  // The older run's view says what was removed; the newest is whole.
  await page.goto(`./${oldest}`);
  await expect(page.getByTestId('pruned-notice')).toContainText(
    "This run's details were removed by retention",
  );
  await page.goto(`./${newest}`);
  await expect(page.getByRole('heading', { name: 'Run' })).toBeVisible();
  await expect(page.getByTestId('pruned-notice')).toHaveCount(0);

  // The conversation is intact (on paper every message is rendered, not only those in view).
  await page.getByRole('link', { name: 'Back to the session' }).click();
  await expect(page.locator('.message.user').last()).toContainText('read work/notes.md');
  await page.emulateMedia({ media: 'print' });
  await expect(page.locator('.message.user')).toHaveCount(3);
  await expect(page.locator('.message.assistant', { hasText: 'Here is your haiku' })).toContainText('moss');
  await expect(page.locator('.message.assistant', { hasText: 'Noted in' })).toHaveCount(1);
  await expect(page.locator('.message.assistant', { hasText: 'Here it is' })).toContainText('buy candles');
});

test('saved with "Apply automatically", retention prunes old runs by itself and says so', async ({
  page,
}) => {
  await startSession(page, 'write a haiku about moss');
  await expectReply(page, 'Here is your haiku');
  await send(page, 'note: buy candles');
  await expectReply(page, 'Noted in');
  const runLinks = page.locator('a.run-link');
  await expect(runLinks).toHaveCount(2);
  const [oldest, newest] = (await runLinks.evaluateAll((links) =>
    links.map((a) => a.getAttribute('href')!),
  )) as [string, string];

  await page.getByRole('navigation').getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByLabel('Days a run keeps more than its record')).toHaveValue('90');
  await expect(page.getByLabel('MB the runs kept in full may hold')).toHaveValue('100');
  await expect(page.getByLabel('Apply automatically')).toBeChecked();
  await page.getByLabel('Runs that keep everything').fill('1');
  await page.getByLabel('Runs that keep their journal').fill('1');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();

  // Nobody presses Delete: a few seconds after the save the older run loses its details. The tab
  // stays open (a reload would end its runtime before the pass), moving between its pages.
  const nav = page.getByRole('navigation');
  await expect(async () => {
    await nav.getByRole('link', { name: 'Sessions' }).click();
    await nav.getByRole('link', { name: 'Settings' }).click();
    await expect(page.getByTestId('retention-last-auto')).toContainText('removed the details of 1 run', {
      timeout: 1_000,
    });
  }).toPass({ timeout: 30_000 });
  await nav.getByRole('link', { name: 'Sessions' }).click();
  await page
    .getByRole('link', { name: /write a haiku about moss/ })
    .first()
    .click();
  await page.locator(`a.run-link[href="${oldest}"]`).click();
  await expect(page.getByTestId('pruned-notice')).toContainText(
    "This run's details were removed by retention",
  );
  await page.getByRole('link', { name: 'Back to the session' }).click();
  await page.locator(`a.run-link[href="${newest}"]`).click();
  await expect(page.getByRole('heading', { name: 'Run' })).toBeVisible();
  await expect(page.getByTestId('pruned-notice')).toHaveCount(0);
});
