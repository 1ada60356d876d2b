// First-page cost of the built app in headless Chromium: JS+CSS bytes (gzip) and the time from
// navigation to a usable composer, beside a baseline page that is only a textarea.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright';
import { serveStatic } from '../scripts/serve.mjs';
import { chromiumLaunchOptions } from '../tests/support/chromium.mjs';

const RUNS = 5;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** ms from navigation start until `selector` is visible and enabled, measured in the page. */
const timeUntil = (page, selector) =>
  page
    .waitForFunction(
      (sel) => {
        const el = document.querySelector(sel);
        return el && !el.disabled && el.getClientRects().length > 0 ? performance.now() : null;
      },
      selector,
      { polling: 'raf', timeout: 30_000 },
    )
    .then((h) => h.jsonValue());

const app = await serveStatic({ root: 'build', host: '127.0.0.1', port: 0 });
const baselineRoot = await mkdtemp(join(tmpdir(), 'hearth-baseline-'));
await writeFile(
  join(baselineRoot, 'index.html'),
  '<!doctype html><meta charset="utf-8"><textarea id="composer-input"></textarea>',
);
const baseline = await serveStatic({ root: baselineRoot, host: '127.0.0.1', port: 0 });
const browser = await chromium.launch(chromiumLaunchOptions);

try {
  // Bytes: every JS and CSS response of a first visit in an empty profile, gzipped.
  const context = await browser.newContext();
  const page = await context.newPage();
  const bodies = [];
  page.on('response', async (r) => {
    if (/\.(js|mjs|css)(\?|$)/.test(r.url())) bodies.push(r.body().then((b) => ({ url: r.url(), b })));
  });
  await page.goto(app.url);
  await timeUntil(page, 'main button');
  await page.waitForLoadState('networkidle');
  const files = await Promise.all(bodies);
  const jsCss = files.filter((f) => !f.url.endsWith('/sw.js') && !/workbox-/.test(f.url));
  const gz = jsCss.reduce((n, f) => n + gzipSync(f.b).length, 0);
  const raw = jsCss.reduce((n, f) => n + f.b.length, 0);
  console.log(
    `RESULT first-page-js-css files=${jsCss.length} raw_kb=${(raw / 1024).toFixed(1)} gzip_kb=${(gz / 1024).toFixed(1)}`,
  );

  // Session page with an existing session: navigation -> composer usable.
  await page.getByRole('button', { name: /start your first session/i }).click();
  await page.locator('#composer-input').waitFor();
  const sessionUrl = page.url();
  const cold = [];
  const warm = [];
  for (let i = 0; i < RUNS; i++) {
    const fresh = await browser.newContext();
    const p = await fresh.newPage();
    await p.goto(app.url);
    cold.push(await timeUntil(p, 'main button'));
    await fresh.close();
    const again = await context.newPage();
    await again.goto(sessionUrl);
    warm.push(await timeUntil(again, '#composer-input'));
    await again.close();
  }
  const base = [];
  for (let i = 0; i < RUNS; i++) {
    const fresh = await browser.newContext();
    const p = await fresh.newPage();
    await p.goto(baseline.url);
    base.push(await timeUntil(p, '#composer-input'));
    await fresh.close();
  }
  console.log(
    `RESULT time-to-usable runs=${RUNS} cold_first_visit_median_ms=${median(cold).toFixed(0)} ` +
      `session_composer_median_ms=${median(warm).toFixed(0)} baseline_textarea_page_median_ms=${median(base).toFixed(0)}`,
  );
  await context.close();
} finally {
  await browser.close();
  await app.close();
  await baseline.close();
  await rm(baselineRoot, { recursive: true, force: true });
}
