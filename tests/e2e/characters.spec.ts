import { readFile } from 'node:fs/promises';
import { cardPng, png, textChunks } from '../support/png-card.ts';
import { expect, test } from './fixtures';

test('import a V2 PNG card, edit it, export it as PNG; a broken card is refused', async ({ page }) => {
  await page.goto('./#/characters');
  // A fresh install holds only the example character.
  await expect(page.getByRole('list', { name: 'Characters' }).getByRole('listitem')).toHaveCount(1);
  await page.getByLabel('Character card to import').setInputFiles({
    name: 'orrin.png',
    mimeType: 'image/png',
    buffer: cardPng(),
  });
  await expect(page.getByRole('status').filter({ hasText: 'Imported Orrin' })).toContainText('Brindle lore');
  const orrin = page.getByRole('listitem', { name: 'Orrin' });
  await expect(orrin).toContainText('Lorebook: Brindle lore');
  const avatar = orrin.getByRole('img', { name: 'Avatar of Orrin' });
  await expect(avatar).toBeVisible();
  await expect.poll(() => avatar.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(2);

  // The editor: text fields as plain text, the embedded lorebook attached.
  await orrin.getByRole('link', { name: /Orrin/ }).click();
  await expect(page).toHaveURL(/#\/characters\/chr_[0-9a-f]+$/);
  await expect(page.getByLabel('Description')).toHaveValue('{{char}} lights the lamps of Brindle Street.');
  await expect(page.getByRole('textbox', { name: 'Alternate greeting 1' })).toHaveValue('You came back.');
  await expect(page.getByLabel('Creator notes')).toHaveValue(/<script>/);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned)).toBeUndefined();
  await expect(page.getByRole('list', { name: 'Attached lorebooks' })).toContainText('Brindle lore');

  await page.getByLabel('Description').fill('Orrin keeps the lamps lit and the secrets kept.');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “Orrin”' })).toBeVisible();

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export PNG' }).click(),
  ]);
  expect(download.suggestedFilename()).toBe('Orrin.png');
  const exported = await readFile(await download.path());
  const texts = textChunks(exported);
  expect([...texts.keys()].sort()).toEqual(['ccv3', 'chara']);
  const v3 = JSON.parse(Buffer.from(texts.get('ccv3')!, 'base64').toString('utf8'));
  expect(v3).toMatchObject({
    spec: 'chara_card_v3',
    data: {
      name: 'Orrin',
      description: 'Orrin keeps the lamps lit and the secrets kept.',
      alternate_greetings: ['You came back.'],
      character_book: { name: 'Brindle lore', entries: [{ keys: ['lamp'] }] },
    },
  });
  const v2 = JSON.parse(Buffer.from(texts.get('chara')!, 'base64').toString('utf8'));
  expect(v2).toMatchObject({ spec: 'chara_card_v2', data: { description: v3.data.description } });

  // A broken card: named problem, nothing changed.
  await page.getByRole('link', { name: '← Characters' }).click();
  const listed = page.getByRole('list', { name: 'Characters' }).getByRole('listitem');
  // The example character of a fresh install, and Orrin.
  await expect(listed).toHaveCount(2);
  await page.getByLabel('Character card to import').setInputFiles({
    name: 'broken.png',
    mimeType: 'image/png',
    buffer: png([['chara', '%%%not-base64%%%']]),
  });
  const failure = page.getByRole('alert', { name: 'Import failed' });
  await expect(failure).toContainText('Could not import “broken.png”');
  await expect(failure).toContainText('not valid base64');
  await expect(listed).toHaveCount(2);
});

test('create a lorebook entry with secondary keys, save it and export it as world info', async ({ page }) => {
  await page.goto('./#/lorebooks');
  await page.getByRole('button', { name: 'New lorebook' }).click();
  await expect(page).toHaveURL(/#\/lorebooks\/lb_[0-9a-f]+$/);
  await page.getByLabel('Lorebook name').fill('Harbor');
  await page.getByRole('button', { name: 'Add entry' }).click();
  await page.getByLabel('Title / memo').fill('The docks');
  await page.getByLabel('Keys', { exact: true }).fill('harbor\n/docks?/i');
  await page.getByLabel('Secondary keys', { exact: true }).fill('night\nfog');
  await page.getByLabel('Secondary key logic').selectOption('not_any');
  await page.getByLabel('Content', { exact: true }).fill('At night the docks belong to the smugglers.');
  await expect(page.getByText('1 regex key.')).toBeVisible();
  await page.getByText('More options').click();
  await page.getByLabel('Sticky').fill('3');
  await page.getByLabel('Also scan the scenario').check();
  await page.getByLabel('Constant (always active)').check();
  await page.getByLabel('Match whole words').selectOption('no');
  await page.getByLabel('Group scoring').selectOption('yes');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “Harbor”' })).toBeVisible();

  await page.reload();
  await page.getByRole('button', { name: 'The docks', exact: true }).click();
  await expect(page.getByLabel('Keys', { exact: true })).toHaveValue('harbor\n/docks?/i');
  await expect(page.getByLabel('Secondary keys', { exact: true })).toHaveValue('night\nfog');
  await expect(page.getByLabel('Secondary key logic')).toHaveValue('not_any');
  await expect(page.getByLabel('Match whole words')).toHaveValue('no');
  await expect(page.getByLabel('Case-sensitive')).toHaveValue('global');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export world info' }).click(),
  ]);
  expect(download.suggestedFilename()).toBe('Harbor.json');
  const exported = JSON.parse(await readFile(await download.path(), 'utf8'));
  expect(Object.values(exported.entries)).toEqual([
    expect.objectContaining({
      key: ['harbor', '/docks?/i'],
      keysecondary: ['night', 'fog'],
      selectiveLogic: 2,
      comment: 'The docks',
      sticky: 3,
      matchScenario: true,
      matchCreatorNotes: false,
      constant: true,
      matchWholeWords: false,
      useGroupScoring: true,
      caseSensitive: null,
    }),
  ]);

  await page.getByRole('link', { name: 'Lorebooks', exact: true }).click();
  const harbor = page.getByRole('listitem', { name: 'Harbor' });
  await expect(harbor).toContainText('1 entry');
  await harbor.getByRole('checkbox', { name: 'Use Harbor in every chat' }).check();
  await expect(page.getByRole('status').filter({ hasText: '“Harbor” is used in every chat.' })).toBeVisible();
  await page.reload();
  await expect(page.getByRole('checkbox', { name: 'Use Harbor in every chat' })).toBeChecked();
});

test('a stored character that cannot be read is listed apart, and Delete removes it', async ({ page }) => {
  await page.goto('./#/characters');
  await expect(page.getByRole('list', { name: 'Characters' }).getByRole('listitem')).toHaveCount(1);
  // A row as an older or damaged store may leave it: no card at all.
  await page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('hearth');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction('characters', 'readwrite');
          tx.objectStore('characters').put({
            id: 'chr_broken',
            name: 'Broken',
            updatedAt: 1,
            lorebookIds: [],
          });
          tx.oncomplete = () => (open.result.close(), resolve());
          tx.onerror = () => reject(tx.error);
        };
      }),
  );
  await page.reload();
  const unreadable = page.getByRole('region', { name: 'Unreadable characters' });
  await expect(unreadable).toContainText('chr_broken');
  await expect(page.getByRole('list', { name: 'Characters' }).getByRole('listitem')).toHaveCount(1);
  page.once('dialog', (dialog) => {
    expect(dialog.message()).toBe('Delete the unreadable character “chr_broken”?');
    void dialog.accept();
  });
  await unreadable.getByRole('button', { name: 'Delete' }).click();
  await expect(unreadable).toBeHidden();
  expect(await page.evaluate(async () => (await window.hearth.characters.list()).issues)).toEqual([]);
});
