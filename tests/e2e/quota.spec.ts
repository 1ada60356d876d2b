import { randomBytes } from 'node:crypto';
import type { Page } from '@playwright/test';
import { addScriptedConnection, expect, expectReply, send, startSession, test } from './fixtures';

const MB = 1024 * 1024;

/** What the origin stores now, as the browser counts it. */
const usage = (page: Page) => page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);

/**
 * Makes Chromium's real quota for the app's origin `quotaSize` bytes, before the app opens its
 * storage (IndexedDB takes the quota in force when its database opens). Writes beyond it fail
 * with the browser's own QuotaExceededError, in IndexedDB and in OPFS.
 */
async function limitQuota(page: Page, baseURL: string | undefined, quotaSize: number): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(baseURL!).origin, quotaSize });
}

// No service worker: its precache of the app (about 20 MB) would take most of a small quota.
test.use({ serviceWorkers: 'block' });

/** A SillyTavern world info file of about `bytes`: entries of random text (IndexedDB compresses repeats). */
function worldInfo(bytes: number): Buffer {
  const entries: Record<string, unknown> = {};
  const size = 64 * 1024;
  for (let uid = 0; uid * size < bytes; uid++) {
    entries[uid] = { uid, key: [`key${uid}`], content: randomBytes((size * 3) / 4).toString('base64') };
  }
  return Buffer.from(JSON.stringify({ name: 'Huge atlas', entries }));
}

const writeCall = (path: string, bytes: number) => ({
  toolCalls: [
    {
      name: 'workspace_write_file',
      arguments: [JSON.stringify({ path, content: 'z'.repeat(bytes) })],
    },
  ],
});

/** How long the run may take to fill the quota. */
const FILLING_MS = 60_000;

test('a Session run whose writes fill the quota fails with storage.quota_exceeded; what was saved before stays', async ({
  page,
  baseURL,
  llm,
}) => {
  test.setTimeout(FILLING_MS + 60_000);
  await limitQuota(page, baseURL, 4 * MB);
  const big = Array.from({ length: 10 }, (_, i) => writeCall(`work/big-${i}.md`, 400 * 1024));
  // Each big write is journaled (the call), stored (the file) and checkpointed: 4 MB is soon full.
  llm.script(writeCall('work/kept.md', 20), { text: ['Saved kept.md.'] }, ...big, { text: ['All written.'] });
  await addScriptedConnection(page, llm);
  await startSession(page, 'save a small file');
  await expectReply(page, 'Saved kept.md.');

  const sessionUrl = page.url();
  await send(page, 'now fill the disk');
  const failure = page.getByRole('alert').filter({ hasText: 'The reply failed' });
  // Rounds of 400 KB writes, each journaled and checkpointed, until the quota is full: on a loaded
  // machine that took 14 s to reach the sixth write.
  await expect(failure).toContainText('storage.quota_exceeded', { timeout: FILLING_MS });
  await expect(failure).toContainText("this browser's storage for Hearth is full");
  await expect(failure).toContainText('Settings → Storage');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  await expect(page.locator('.message.assistant').filter({ hasText: 'All written.' })).toHaveCount(0);

  // The run view says the same, also after a reload (storage still full).
  await page.locator('a.run-link').last().click();
  const failed = page.getByRole('alert').filter({ hasText: 'Failed' });
  await expect(failed).toContainText('storage.quota_exceeded');
  await page.reload();
  await expect(failed).toContainText('storage.quota_exceeded');

  // The earlier conversation and file are intact.
  await page.goto(sessionUrl);
  await expect(page.getByRole('alert').filter({ hasText: 'The reply failed' })).toContainText(
    'storage.quota_exceeded',
  );
  // The conversation opens at its end and renders only what is on screen; print renders all of it.
  await page.emulateMedia({ media: 'print' });
  await expect(page.locator('.message.user').first()).toContainText('save a small file');
  await expect(page.locator('.message.assistant').filter({ hasText: 'Saved kept.md.' })).toBeVisible();
  await page.emulateMedia({ media: 'screen' });
  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  await workspace.getByRole('button', { name: /kept\.md/ }).click();
  await expect(workspace.getByRole('region', { name: 'File work/kept.md' })).toContainText('z'.repeat(20));
});

test('an import that does not fit says so and leaves nothing half-written', async ({ page, baseURL }) => {
  await limitQuota(page, baseURL, 2 * MB);
  await page.goto('./');
  await page.getByRole('button', { name: 'Start your first session' }).click();
  await send(page, 'write a haiku about the sea');
  await expectReply(page, 'Here is your haiku');
  const sessionUrl = page.url();

  // A workspace upload: the small file fits, the big one does not; neither is kept.
  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  await workspace.getByLabel('Add files to work/').setInputFiles([
    { name: 'small.md', mimeType: 'text/markdown', buffer: Buffer.from('small\n') },
    { name: 'big.bin', mimeType: 'application/octet-stream', buffer: randomBytes(3 * MB) },
  ]);
  await expect(
    workspace.getByText("Could not save the file work/big.bin: this browser's storage for Hearth is full"),
  ).toBeVisible();
  await workspace.getByRole('button', { name: 'Refresh workspace' }).click();
  await expect(workspace.getByRole('button', { name: /haiku\.md/ })).toBeVisible();
  await expect(workspace.getByRole('button', { name: /small\.md|big\.bin/ })).toHaveCount(0);

  // A lorebook far larger than what is left.
  await page.goto('./#/lorebooks');
  await page.getByLabel('World info file to import').setInputFiles({
    name: 'atlas.json',
    mimeType: 'application/json',
    buffer: worldInfo(3 * MB),
  });
  const failed = page.getByRole('alert', { name: 'Import failed' });
  await expect(failed).toContainText('Could not import “atlas.json”.');
  await expect(failed).toContainText(
    "Could not save the lorebook: this browser's storage for Hearth is full",
  );
  await expect(failed).toContainText('export what you want to keep');

  await page.reload();
  await expect(page.getByRole('list', { name: 'Lorebooks' })).toBeVisible();
  await expect(page.getByRole('link', { name: /atlas/i })).toHaveCount(0);
  await page.goto(sessionUrl);
  await expect(page.locator('.message.assistant').last()).toContainText('Here is your haiku');
  await expect(workspace.getByRole('button', { name: /haiku\.md/ })).toBeVisible();
  await expect(workspace.getByRole('button', { name: /small\.md|big\.bin/ })).toHaveCount(0);
});

test('at 90% of the quota a banner warns on every page and links to Settings → Storage; persistence was asked after the first message', async ({
  page,
  baseURL,
}) => {
  const quota = 4 * MB;
  await limitQuota(page, baseURL, quota);
  // This Chromium enforces Storage.overrideQuotaForOrigin on writes, but navigator.storage.estimate()
  // still reports the default quota. So the page's estimate is stubbed at that boundary to report
  // the overridden quota (the usage stays the browser's own).
  await page.addInitScript((q) => {
    const real = StorageManager.prototype.estimate;
    StorageManager.prototype.estimate = async function (this: StorageManager) {
      return { ...(await real.call(this)), quota: q };
    };
  }, quota);
  // Nothing is asked on first load.
  await page.goto('./#/settings');
  await expect(page.getByTestId('persisted')).toBeVisible();
  await expect(page.getByTestId('persist-asked')).toHaveCount(0);
  await page.goto('./');
  await page.getByRole('button', { name: 'Start your first session' }).click();
  await send(page, 'write a haiku about the sea');
  await expectReply(page, 'Here is your haiku');
  await page.reload();
  await expectReply(page, 'Here is your haiku');
  const banner = page.getByTestId('storage-banner');
  await expect(banner).toBeHidden();

  // An upload that takes usage past 90% (but fits) brings the warning up, without a reload.
  const fill = Math.ceil(quota * 0.93) - (await usage(page));
  const workspace = page.getByRole('complementary', { name: 'Workspace' });
  await workspace.getByLabel('Add files to work/').setInputFiles({
    name: 'photos.bin',
    mimeType: 'application/octet-stream',
    buffer: randomBytes(fill),
  });
  await expect(workspace.getByRole('button', { name: /photos\.bin/ })).toBeVisible();
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('Storage is nearly full');

  await page.goto('./#/characters');
  await expect(banner).toBeVisible();
  await banner.getByRole('link', { name: 'Free space in Settings → Storage' }).click();
  await expect(page).toHaveURL(/#\/settings$/);
  await expect(page.getByRole('heading', { name: 'Storage', exact: true })).toBeInViewport();
  // The first message was the moment to ask the browser to keep the data; the answer is shown.
  await expect(page.getByTestId('persist-asked')).toContainText(
    /Hearth asked the browser on [\s\S]*it (granted|declined)/,
  );
});
