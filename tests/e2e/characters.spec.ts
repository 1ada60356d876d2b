import { readFile } from 'node:fs/promises';
import { deflateSync } from 'node:zlib';
import { expect, test } from './fixtures';

// A tiny PNG card written here, byte by byte: SillyTavern stores a V2 card as base64 JSON in a
// `chara` tEXt chunk.

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Buffer) => {
  let c = 0xffffffff;
  for (const x of bytes) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const chunk = (type: string, data: Buffer) => {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32(data.length), body, u32(crc32(body))]);
};

/** A 2x2 RGBA PNG with `texts` as tEXt chunks. */
function png(texts: [string, string][]): Buffer {
  const ihdr = Buffer.concat([u32(2), u32(2), Buffer.from([8, 6, 0, 0, 0])]);
  const rows = Buffer.from([0, 200, 80, 40, 255, 40, 80, 200, 255, 0, 40, 200, 80, 255, 250, 250, 250, 255]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    ...texts.map(([k, t]) => chunk('tEXt', Buffer.from(`${k}\0${t}`, 'latin1'))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The tEXt chunks of a PNG, keyword -> text. */
function textChunks(bytes: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  for (let at = 8; at < bytes.length;) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'tEXt') {
      const nul = data.indexOf(0);
      out.set(data.toString('latin1', 0, nul), data.toString('latin1', nul + 1));
    }
    at += 12 + length;
  }
  return out;
}

const card = {
  spec: 'chara_card_v2',
  spec_version: '2.0',
  data: {
    name: 'Orrin',
    description: '{{char}} lights the lamps of Brindle Street.',
    personality: 'gentle',
    scenario: 'Dusk in Brindle.',
    first_mes: 'Evening. Walk with me?',
    mes_example: '',
    creator_notes: '<script>window.__pwned = true</script>Be kind.',
    system_prompt: '',
    post_history_instructions: '',
    alternate_greetings: ['You came back.'],
    tags: ['fantasy'],
    creator: 'e2e',
    character_version: '1',
    extensions: {},
    character_book: {
      name: 'Brindle lore',
      entries: [
        {
          id: 0,
          keys: ['lamp'],
          secondary_keys: [],
          content: 'The lamps of Brindle never go out.',
          enabled: true,
          insertion_order: 100,
          extensions: {},
        },
      ],
    },
  },
};
const cardPng = () => png([['chara', Buffer.from(JSON.stringify(card)).toString('base64')]]);

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
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “Harbor”' })).toBeVisible();

  await page.reload();
  await page.getByRole('button', { name: 'The docks', exact: true }).click();
  await expect(page.getByLabel('Keys', { exact: true })).toHaveValue('harbor\n/docks?/i');
  await expect(page.getByLabel('Secondary keys', { exact: true })).toHaveValue('night\nfog');
  await expect(page.getByLabel('Secondary key logic')).toHaveValue('not_any');

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
    }),
  ]);

  await page.getByRole('link', { name: 'Lorebooks', exact: true }).click();
  const harbor = page.getByRole('listitem', { name: 'Harbor' });
  await expect(harbor).toContainText('1 entry');
  await harbor.getByRole('checkbox', { name: 'Use Harbor in every chat' }).check();
  await page.reload();
  await expect(page.getByRole('checkbox', { name: 'Use Harbor in every chat' })).toBeChecked();
});
