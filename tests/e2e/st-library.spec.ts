import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { zipSync } from 'fflate';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';

/** SillyTavern's own files: the 1.9.0 release's Konosuba cards with their chats and Toaru world, and
 * the staging branch's default content (Seraphina, her Eldoria world, the default user avatar). */
const ST = resolve('../shared/content/sillytavern');
const OLD = join(ST, 'SillyTavern@1.9.0/public');
const DEFAULT_CONTENT = join(ST, 'SillyTavern@staging-1ac6780/default/content');

const line = (value: unknown) => JSON.stringify(value);

/** A chat with swipes in SillyTavern's JSONL (header, then one message a line), linking the Axel world. */
const SWIPED_CHAT = [
  line({
    user_name: 'Kazuma',
    character_name: 'Seraphina',
    create_date: '2024-05-01@10h00m00s',
    chat_metadata: { world_info: 'Axel', note_prompt: '' },
  }),
  line({
    name: 'Seraphina',
    is_user: false,
    is_system: false,
    send_date: 'May 1, 2024 10:00am',
    mes: 'Welcome to the glade.',
    extra: {},
    swipe_id: 0,
    swipes: [
      'Welcome to the glade.',
      'You are safe here, traveller.',
      'Rest now; the forest watches over you.',
    ],
    swipe_info: [
      { send_date: 'May 1, 2024 10:00am', extra: {} },
      { send_date: 'May 1, 2024 10:01am', extra: {} },
      { send_date: 'May 1, 2024 10:02am', extra: {} },
    ],
  }),
  line({
    name: 'Kazuma',
    is_user: true,
    is_system: false,
    send_date: 'May 1, 2024 10:03am',
    mes: 'Where am I?',
    extra: {},
  }),
  line({
    name: 'Seraphina',
    is_user: false,
    is_system: false,
    send_date: 'May 1, 2024 10:04am',
    mes: 'In the heart of the Eldoria forest.',
    extra: {},
    swipe_id: 1,
    swipes: ['In Eldoria.', 'In the heart of the Eldoria forest.'],
    swipe_info: [
      { send_date: 'May 1, 2024 10:04am', extra: {} },
      { send_date: 'May 1, 2024 10:05am', extra: {} },
    ],
  }),
].join('\n');

const SETTINGS = {
  firstRun: false,
  username: 'Kazuma',
  user_avatar: 'user-default.png',
  power_user: {
    personas: { 'user-default.png': 'Kazuma', 'wanderer.png': 'Wanderer' },
    persona_descriptions: {
      'user-default.png': { description: 'An adventurer of Axel.', position: 0, depth: 2, role: 0 },
      'wanderer.png': { description: 'A traveller without a name.', position: 0, depth: 2, role: 0 },
    },
    default_persona: 'wanderer.png',
  },
  world_info_settings: {
    world_info: {
      globalSelect: ['Toaru'],
      charLore: [{ name: 'Aqua', extraBooks: ['Eldoria'] }],
    },
    world_info_depth: 2,
  },
};

const AXEL_WORLD = {
  entries: {
    0: { uid: 0, key: ['Axel'], keysecondary: [], comment: 'Axel', content: 'A town for beginners.' },
  },
};

/** `data/default-user/` as SillyTavern lays it out (src/constants.js USER_DIRECTORY_TEMPLATE). */
async function buildLibrary(): Promise<string> {
  const top = await mkdtemp(join(tmpdir(), 'hearth-st-'));
  const root = join(top, 'default-user');
  const put = async (path: string, data: string | Uint8Array) => {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), data);
  };
  const copy = (from: string, to: string) => cp(from, join(root, to), { recursive: true });
  for (const name of ['Aqua', 'Darkness', 'Megumin'])
    await copy(join(OLD, `characters/${name}.png`), `characters/${name}.png`);
  await copy(join(OLD, 'chats'), 'chats');
  await copy(join(OLD, 'worlds/Toaru.json'), 'worlds/Toaru.json');
  // SillyTavern seeds its default content under these names (content-manager.js).
  await copy(join(DEFAULT_CONTENT, 'default_Seraphina.png'), 'characters/default_Seraphina.png');
  await copy(join(DEFAULT_CONTENT, 'Seraphina'), 'characters/Seraphina');
  await copy(join(DEFAULT_CONTENT, 'Eldoria.json'), 'worlds/Eldoria.json');
  await copy(join(DEFAULT_CONTENT, 'user-default.png'), 'User Avatars/user-default.png');
  await copy(join(DEFAULT_CONTENT, 'Seraphina/neutral.png'), 'User Avatars/wanderer.png');
  await put('worlds/Axel.json', line(AXEL_WORLD));
  await put('chats/default_Seraphina/Seraphina - 2024-05-01@10h00m00s.jsonl', SWIPED_CHAT);
  await put('settings.json', JSON.stringify(SETTINGS, null, 4));
  // What is not imported.
  await put('secrets.json', line({ api_key_openai: 'sk-never-imported' }));
  await put('content.log', 'default_Seraphina.png\nEldoria.json\n');
  await put('themes/Dark Lite.json', line({ name: 'Dark Lite' }));
  await put('backgrounds/tavern day.jpg', new Uint8Array([0xff, 0xd8, 0xff, 0xe0]));
  await put('groups/1714557600000.json', line({ name: 'Party', members: ['Aqua.png', 'Megumin.png'] }));
  await put('thumbnails/avatar/Aqua.png', await readFile(join(OLD, 'characters/Aqua.png')));
  return root;
}

/** Every file under `dir`, by its path inside it. */
async function filesOf(dir: string): Promise<Record<string, Uint8Array>> {
  const out: Record<string, Uint8Array> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path).split('\\').join('/')] = new Uint8Array(await readFile(path));
  }
  return out;
}

const COUNTS =
  '4 characters, 4 chats (6 messages), 3 lorebooks, 2 personas and 4 lorebook attachments; 7 items skipped.';

async function expectImported(page: Page, from: string) {
  const summary = page.getByRole('status', { name: 'Import summary' });
  await expect(summary).toContainText(`Imported from ${from}: ${COUNTS}`);
  const section = page.getByRole('region', { name: 'Bring over a SillyTavern library' });
  const list = (name: string) => section.getByRole('list', { name, exact: true });
  await expect(list('Characters').getByRole('listitem')).toHaveText([
    'Aqua',
    'Darkness',
    'Megumin',
    'Seraphina',
  ]);
  await expect(list('Chats')).toContainText('Seraphina - 2024-05-01@10h00m00s with Seraphina: 3 messages');
  // SillyTavern 1.9 named chats by the epoch milliseconds they began (1673181146000.jsonl).
  await expect(list('Chats')).toContainText('2023-01-08 12:32 UTC with Aqua: 1 message');
  await expect(list('Lorebooks').getByRole('listitem')).toHaveText([
    'Axel · imported from Axel.json',
    'Eldoria · imported from Eldoria.json',
    'Toaru · imported from Toaru.json',
  ]);
  await expect(list('Personas').getByRole('listitem')).toHaveText([
    'Kazuma',
    'Wanderer (the default persona)',
  ]);
  await expect(list('Lorebooks attached').getByRole('listitem')).toHaveText([
    'Eldoria → Aqua',
    'Eldoria → Seraphina',
    'Axel → the chat “Seraphina - 2024-05-01@10h00m00s”',
    'Toaru → every chat',
  ]);
  const skipped = list('Skipped');
  await expect(skipped).toContainText('secrets.json: not imported: API keys never leave SillyTavern');
  await expect(skipped).toContainText('neutral.png: not imported: character expression images');
  await expect(skipped).toContainText('Dark Lite.json: not imported: themes');
  await expect(skipped).toContainText('tavern day.jpg: not imported: chat backgrounds');
  await expect(skipped).toContainText('1714557600000.json: not imported: group definitions');
  await expect(skipped).toContainText('Aqua.png: not imported: thumbnails');
  await expect(skipped).toContainText('content.log: not imported');
}

test('a SillyTavern data folder: cards, chats with swipes, lorebooks attached, personas', async ({
  page,
}) => {
  const root = await buildLibrary();
  try {
    await page.goto('./#/settings');
    const section = page.getByRole('region', { name: 'Bring over a SillyTavern library' });
    await expect(section.getByRole('button', { name: 'Choose a folder…' })).toBeEnabled();
    await page.getByLabel('SillyTavern folder to import').setInputFiles(root);
    await expectImported(page, 'default-user');

    // The chat opens with its swipes.
    await section.getByRole('link', { name: 'Seraphina - 2024-05-01@10h00m00s' }).click();
    await expect(page).toHaveURL(/#\/chats\/[^/]+$/);
    const messages = page.locator('.chat-message');
    await expect(messages).toHaveCount(3);
    const greeting = messages.first();
    await expect(greeting).toContainText('Welcome to the glade.');
    await expect(greeting.locator('.swipe-count')).toHaveText('1/3');
    await greeting.getByRole('button', { name: 'Next swipe' }).click();
    await expect(greeting.locator('.swipe-count')).toHaveText('2/3');
    await expect(greeting).toContainText('You are safe here, traveller.');
    const last = messages.last();
    await expect(last.locator('.swipe-count')).toHaveText('2/2');
    await expect(last).toContainText('In the heart of the Eldoria forest.');

    // The lorebooks as they were: Axel on this chat, Eldoria from Seraphina, Toaru global.
    const picker = page.locator('.lore-picker');
    await picker.locator('summary').click();
    const axel = picker.getByRole('checkbox', { name: 'Axel' });
    await expect(axel).toBeChecked();
    await expect(axel).toBeEnabled();
    const eldoria = picker.getByRole('checkbox', { name: 'Eldoria' });
    await expect(eldoria).toBeChecked();
    await expect(eldoria).toBeDisabled();
    await expect(picker.getByRole('listitem').filter({ hasText: 'Eldoria' })).toContainText('from Seraphina');
    await expect(picker.getByRole('checkbox', { name: 'Toaru' })).toBeChecked();
    await expect(picker.getByRole('listitem').filter({ hasText: 'Toaru' })).toContainText('global');

    // Aqua's extra book from settings.json; one Eldoria (the world, not a second copy from the card).
    await page.goto('./#/characters');
    await page.getByRole('listitem', { name: 'Aqua' }).getByRole('link', { name: /Aqua/ }).click();
    await expect(page.getByRole('list', { name: 'Attached lorebooks' })).toContainText('Eldoria');
    await page.goto('./#/lorebooks');
    const books = page.getByRole('list', { name: 'Lorebooks' });
    await expect(books.getByRole('listitem', { name: 'Eldoria' })).toHaveCount(1);
    await expect(page.getByRole('checkbox', { name: 'Use Toaru in every chat' })).toBeChecked();
    await expect(page.getByRole('checkbox', { name: 'Use Eldoria in every chat' })).not.toBeChecked();

    // The personas with their descriptions; SillyTavern's default is the default here.
    await page.goto('./#/personas');
    await expect(page.getByRole('listitem', { name: 'Kazuma' })).toContainText('An adventurer of Axel.');
    await expect(page.getByRole('listitem', { name: 'Wanderer' })).toContainText(
      'A traveller without a name.',
    );
    await expect(page.getByRole('radio', { name: 'Use Wanderer by default' })).toBeChecked();
    await expect(page.getByRole('radio', { name: 'Use Kazuma by default' })).not.toBeChecked();
  } finally {
    await rm(join(root, '..'), { recursive: true, force: true });
  }
});

test('the same library as SillyTavern’s backup zip imports identically; again, nothing is duplicated', async ({
  page,
}) => {
  const root = await buildLibrary();
  try {
    // SillyTavern's backup puts the user folder's contents at the top of the zip (users.js).
    const zip = zipSync(await filesOf(root));
    await page.goto('./#/settings');
    await page.getByLabel('SillyTavern backup zip to import').setInputFiles({
      name: 'default-user-20240501-100000.zip',
      mimeType: 'application/zip',
      buffer: Buffer.from(zip),
    });
    await expectImported(page, 'default-user-20240501-100000.zip');

    // The folder after the zip: everything is already here.
    await page.getByLabel('SillyTavern folder to import').setInputFiles(root);
    const summary = page.getByRole('status', { name: 'Import summary' });
    await expect(summary).toContainText(
      'Imported from default-user: 0 characters, 0 chats (0 messages), 0 lorebooks, 0 personas and 0 lorebook attachments',
    );
    const section = page.getByRole('region', { name: 'Bring over a SillyTavern library' });
    await expect(section.getByRole('list', { name: 'Skipped' })).toContainText(
      'already in Hearth, unchanged: 11 files',
    );
    await page.goto('./#/characters');
    // The example character and the four imported ones, once each.
    await expect(page.getByRole('list', { name: 'Characters' }).getByRole('listitem')).toHaveCount(5);
  } finally {
    await rm(join(root, '..'), { recursive: true, force: true });
  }
});

test('a card’s own lorebook counts in the summary as the Lorebooks page lists it', async ({ page }) => {
  // Seraphina's card carries Eldoria; without worlds/Eldoria.json, the card's copy is the lorebook.
  const zip = zipSync({
    'characters/default_Seraphina.png': new Uint8Array(
      await readFile(join(DEFAULT_CONTENT, 'default_Seraphina.png')),
    ),
  });
  await page.goto('./#/settings');
  await page.getByLabel('SillyTavern backup zip to import').setInputFiles({
    name: 'cards.zip',
    mimeType: 'application/zip',
    buffer: Buffer.from(zip),
  });
  const section = page.getByRole('region', { name: 'Bring over a SillyTavern library' });
  await expect(section.getByRole('status', { name: 'Import summary' })).toContainText(
    'Imported from cards.zip: 1 character, 0 chats (0 messages), 1 lorebook,',
  );
  await expect(section.getByRole('list', { name: 'Lorebooks', exact: true })).toHaveText(
    'Eldoria · from the card default_Seraphina.png',
  );
  await page.goto('./#/lorebooks');
  const eldoria = page.getByRole('list', { name: 'Lorebooks' }).getByRole('listitem', { name: 'Eldoria' });
  await expect(eldoria).toHaveCount(1);
  await expect(eldoria).toContainText('from the card default_Seraphina.png');
});
