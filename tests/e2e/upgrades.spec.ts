import { expect, test } from './fixtures';

test('a newer Hearth upgrading the database in another tab: this tab lets go and asks to reload', async ({
  page,
  context,
}) => {
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Sessions' })).toBeVisible();
  // The runtime has the database open once it has answered from it.
  await page.waitForFunction(() => 'hearth' in window);
  expect(await page.evaluate(async () => (await window.hearth.characters.list()).issues)).toEqual([]);
  await expect(page.getByTestId('database-notice')).toHaveCount(0);

  // Another tab of the same origin opens the database at a higher version, as a newer Hearth would.
  const other = await context.newPage();
  await other.goto('/manifest.webmanifest');
  const opened = await other.evaluate(
    () =>
      new Promise<{ version: number; stores: string[] }>((resolve, reject) => {
        const request = indexedDB.open('hearth', 9999);
        request.onblocked = () => reject(new Error('blocked by the older tab'));
        request.onerror = () => reject(request.error);
        request.onsuccess = () => {
          const db = request.result;
          resolve({ version: db.version, stores: [...db.objectStoreNames] });
          db.close();
        };
      }),
  );
  expect(opened.version).toBe(9999);
  expect(opened.stores).toContain('characters');

  const notice = page.getByTestId('database-notice');
  await expect(notice).toHaveText(/Hearth was updated in another tab — reload to continue\./);
  await expect(notice.getByRole('button', { name: 'Reload' })).toBeVisible();

  // Reloaded, this (older) version finds the newer database and says so instead of failing obscurely.
  await notice.getByRole('button', { name: 'Reload' }).click();
  await expect(page.getByTestId('database-notice')).toHaveText(
    /A newer version of Hearth .* reload to use the newer one\./,
  );
});
