import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveStatic } from '../../scripts/serve.mjs';
import { expect, expectReply, send, test, waitForServiceWorker } from './fixtures';

test('a new deployment shows "update available" and reloads into it', async ({ page }) => {
  // A private copy of the build, so the test can "deploy" a new version under the same URL.
  const root = await mkdtemp(join(tmpdir(), 'hearth-deploy-'));
  await cp('build', root, { recursive: true });
  const server = await serveStatic({ root, host: '127.0.0.1', port: 0 });
  try {
    await page.goto(server.url);
    await waitForServiceWorker(page);
    const manifest = await page.evaluate(() =>
      document.querySelector('link[rel=manifest]')?.getAttribute('href'),
    );
    expect(manifest).toBe('./manifest.webmanifest');

    // Deploy: a changed service worker is a new version of the app.
    const sw = join(root, 'sw.js');
    await writeFile(sw, `${await readFile(sw, 'utf8')}\n// deployment 2\n`);
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.update());

    const banner = page.getByRole('alert').filter({ hasText: 'A new version of Hearth is available.' });
    await expect(banner).toBeVisible();
    await Promise.all([
      page.waitForEvent('load'),
      banner.getByRole('button', { name: 'Reload to update' }).click(),
    ]);
    await expect(page.getByRole('heading', { name: 'Sessions' })).toBeVisible();
    const scriptURL = await page.evaluate(async () => {
      const reg = await navigator.serviceWorker.getRegistration();
      return { waiting: !!reg?.waiting, active: reg?.active?.state };
    });
    expect(scriptURL).toEqual({ waiting: false, active: 'activated' });
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('the web manifest names the app and ships real icons', async ({ page, request }) => {
  await page.goto('./');
  const manifest = await (await request.get('./manifest.webmanifest')).json();
  expect(manifest).toMatchObject({ name: 'Hearth', display: 'standalone', start_url: './' });
  for (const icon of manifest.icons as { src: string; sizes: string; type: string }[]) {
    const res = await request.get(icon.src);
    expect(res.status(), icon.src).toBe(200);
    const body = await res.body();
    expect(body.subarray(1, 4).toString(), icon.src).toBe('PNG');
    const [w, h] = [body.readUInt32BE(16), body.readUInt32BE(20)];
    expect(`${w}x${h}`).toBe(icon.sizes);
  }
});

test('the same build works from a sub-path, offline too', async ({ page, context }) => {
  const root = await mkdtemp(join(tmpdir(), 'hearth-subpath-'));
  await cp('build', join(root, 'apps', 'hearth'), { recursive: true });
  const server = await serveStatic({ root, host: '127.0.0.1', port: 0 });
  try {
    const url = new URL('apps/hearth/', server.url).href;
    await page.goto(url);
    await page.evaluate(async () => {
      const reg = await navigator.serviceWorker.ready;
      if (!navigator.serviceWorker.controller) {
        await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r));
      }
      if (!reg.scope.endsWith('/apps/hearth/')) throw new Error(`service worker scope ${reg.scope}`);
    });
    await page.getByRole('button', { name: 'Start your first session' }).click();
    await expect(page).toHaveURL(/\/apps\/hearth\/#\/sessions\//);
    await send(page, 'write a haiku about rivers');
    await expectReply(page, 'Here is your haiku');

    await context.setOffline(true);
    await page.reload();
    await expectReply(page, 'Here is your haiku');
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
});
