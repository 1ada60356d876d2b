import type { Page } from '@playwright/test';
import { test } from '../../tests/e2e/fixtures';

/**
 * Issue 30: the Characters page with 1,000 cards in the built app (Chromium), beside a library
 * of 20 opened the same way in the same run. Every card has tags and a description; every third
 * has a 200 x 300 avatar of noise (about 175 KB of PNG, as incompressible as a photo). Per round:
 * a new tab on the page until the count of characters is shown with the first card; then a search
 * typed into the page, from the input event to the next frame, against the same filter run over
 * the same summaries alone. Numbers only.
 */

const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function library(page: Page, size: number, prefix: string): Promise<void> {
  await page.evaluate(
    async ({ size, prefix }) => {
      const canvas = new OffscreenCanvas(200, 300);
      const ctx = canvas.getContext('2d')!;
      const pixels = ctx.createImageData(200, 300);
      for (let i = 0; i < size; i++) {
        const c = await window.hearth.characters.create(`${prefix} ${String(i).padStart(4, '0')}`);
        let avatar: Uint8Array | undefined;
        if (i % 3 === 0) {
          for (let p = 0; p < pixels.data.length; p++)
            pixels.data[p] = p % 4 === 3 ? 255 : (p * 7919 + i) % 251;
          ctx.putImageData(pixels, 0, 0);
          avatar = new Uint8Array(await (await canvas.convertToBlob({ type: 'image/png' })).arrayBuffer());
        }
        await window.hearth.characters.update(c.id, {
          card: {
            tags: [`tag${i % 17}`, `genre${i % 5}`],
            description: `${prefix} number ${i} keeps the lighthouse of cove ${i}. `.repeat(20),
          },
          ...(avatar ? { avatar } : {}),
        });
      }
    },
    { size, prefix },
  );
}

/** New tabs on the Characters page until `count` characters are listed and the first is shown. */
async function openTimes(page: Page, count: number): Promise<{ times: number[]; tab: Page }> {
  const times: number[] = [];
  let tab = page;
  for (let i = 0; i < ROUNDS; i++) {
    tab = await page.context().newPage();
    const start = Date.now();
    await tab.goto('./#/characters');
    await tab
      .getByRole('status')
      .filter({ hasText: `${count.toLocaleString('en')} characters` })
      .waitFor();
    await tab.getByRole('list', { name: 'Characters' }).getByRole('listitem').first().waitFor();
    times.push(Date.now() - start);
    if (i < ROUNDS - 1) await tab.close();
  }
  return { times, tab };
}

/** In the page: the search typed, to the frame after the list changed. */
const searchTime = (tab: Page, text: string) =>
  tab.evaluate(async (text) => {
    const input = document.querySelector<HTMLInputElement>('input[type="search"]')!;
    const start = performance.now();
    input.value = text;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r)));
    return performance.now() - start;
  }, text);

test('Characters page: 1,000 cards open and search', async ({ page }) => {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  // The example character is there too.
  await page.evaluate(() => window.hearth.characters.list());
  await library(page, 20, 'Small');
  const small = await openTimes(page, 21);
  await small.tab.close();
  await library(page, 980, 'Big');
  const big = await openTimes(page, 1_001);
  const elements = await big.tab.getByRole('list', { name: 'Characters' }).getByRole('listitem').count();
  const heap = await big.tab.evaluate(
    () => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0,
  );

  const search: number[] = [];
  const clear: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    search.push(await searchTime(big.tab, `cove ${700 + i}.`));
    clear.push(await searchTime(big.tab, ''));
  }
  // The baseline: the same words looked for in the same summaries' texts, in the page, alone.
  const baseline = await big.tab.evaluate(async () => {
    const { characters } = await window.hearth.characters.list();
    const texts = characters.map((c) =>
      [c.name, c.creator, ...c.tags, c.searchText].join('\n').toLowerCase(),
    );
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      texts.filter((t) => t.includes(`cove ${700 + i}.`));
      times.push(performance.now() - start);
    }
    return times.sort((a, b) => a - b)[2]!;
  });

  console.log(
    `RESULT characters open, 1,001 cards: median ${median(big.times)} ms (${big.times.join(', ')}); ` +
      `21 cards: median ${median(small.times)} ms (${small.times.join(', ')})`,
  );
  console.log(`RESULT characters list items in the page: ${elements}; JS heap ${(heap / 1e6).toFixed(1)} MB`);
  console.log(
    `RESULT characters search typed to next frame: median ${median(search).toFixed(1)} ms ` +
      `(${search.map((t) => t.toFixed(1)).join(', ')}); cleared: median ${median(clear).toFixed(1)} ms; ` +
      `the same filter alone: ${baseline.toFixed(2)} ms`,
  );
});
