// Regenerates the PWA icons in static/icons/ from the flame mark below: `node scripts/make-icons.mjs`.
// The outputs are committed; the build does not run this. Needs Chromium (CHROMIUM_PATH or /usr/bin/chromium).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright';
import { chromiumPath, repoRoot } from './setup.mjs';

const FLAME = '#b4532a';
const EMBER = '#eda25f';
const BACKGROUND = '#1b1614';

// Drawn on a 512 grid around the centre (256, 256); the whole mark lies within 200 px of it.
const MARK = `
  <path fill="${FLAME}" d="M256 92c36 66 104 102 104 188 0 60-46 104-104 104s-104-44-104-104c0-48 26-82 48-102 2 36 16 60 38 68-8-58-2-110 18-154z"/>
  <path fill="${EMBER}" d="M256 226c22 38 52 56 52 98 0 30-23 52-52 52s-52-22-52-52c0-34 30-56 52-98z"/>
  <rect fill="${FLAME}" x="160" y="404" width="192" height="20" rx="10" opacity="0.7"/>`;

/** An icon as SVG: a rounded tile for favicons and "any" icons, full bleed with a smaller mark for maskable. */
function iconSvg({ maskable = false } = {}) {
  const background = maskable
    ? `<rect width="512" height="512" fill="${BACKGROUND}"/>`
    : `<rect width="512" height="512" rx="115" fill="${BACKGROUND}"/>`;
  // Maskable icons may be cropped to a circle of 80% diameter (radius 205): shrink the mark to fit well inside.
  const scale = maskable ? 0.88 : 1;
  const transform = `translate(256 256) scale(${scale}) translate(-256 -258)`;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">${background}<g transform="${transform}">${MARK}</g></svg>\n`;
}

/**
 * @param {import('playwright').Browser} browser
 * @param {string} svg
 * @param {number} size
 * @param {string} file
 */
async function renderPng(browser, svg, size, file) {
  const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
  await page.setContent(
    `<!doctype html><html><body style="margin:0;overflow:hidden;background:transparent">` +
      svg.replace('<svg ', `<svg width="${size}" height="${size}" style="display:block" `) +
      `</body></html>`,
  );
  await page.screenshot({
    path: file,
    omitBackground: true,
    clip: { x: 0, y: 0, width: size, height: size },
  });
  await page.close();
}

const outDir = path.join(repoRoot, 'static', 'icons');
await mkdir(outDir, { recursive: true });
await writeFile(path.join(outDir, 'favicon.svg'), iconSvg());

const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--no-sandbox', '--disable-gpu'],
});
try {
  await renderPng(browser, iconSvg(), 192, path.join(outDir, 'icon-192.png'));
  await renderPng(browser, iconSvg(), 512, path.join(outDir, 'icon-512.png'));
  await renderPng(browser, iconSvg({ maskable: true }), 512, path.join(outDir, 'icon-maskable-512.png'));
} finally {
  await browser.close();
}
console.log(`Icons written to ${path.relative(process.cwd(), outDir) || '.'}`);
