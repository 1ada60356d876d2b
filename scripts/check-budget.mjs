// Page weight (issue 21): the gzip size of what a first visit loads and of each worker bundle, from the
// build output, against the budgets in budgets.json. Run by `npm test` after the build step.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { init, parse } from 'es-module-lexer';

/** @typedef {{ file: string, gzip: number }} Sized */
/** @typedef {{ firstPage: { gzip: number, files: Sized[] }, workers: Record<string, number> }} BuildSizes */
/** @typedef {{ firstPageKB: number, workersKB: Record<string, number> }} Budgets */

const KB = 1024;
/** `runtime.worker-CjwgX38k.js` → `runtime.worker`; `sandbox-dd56d76c6f.js` → `sandbox`. */
const bundleName = (/** @type {string} */ file) => file.replace(/-[A-Za-z0-9_-]{8,}\.js$/, '');

/**
 * The files the page's document names: module preloads, stylesheets and the inline boot script's
 * `import("…")`s, as paths relative to the build folder.
 * @param {string} html
 */
export function documentAssets(html) {
  const urls = [];
  for (const [tag] of html.matchAll(/<link\b[^>]*>/g)) {
    const rel = /\brel=["']?([^"' >]+)/.exec(tag)?.[1];
    const href = /\bhref=["']?([^"' >]+)/.exec(tag)?.[1];
    if (href && (rel === 'modulepreload' || rel === 'stylesheet')) urls.push(href);
  }
  for (const [, , url] of html.matchAll(/\bimport\((["'`])([^"'`]+)\1\)/g)) urls.push(url ?? '');
  return [...new Set(urls.map((url) => path.posix.normalize(url.replace(/^\.?\//, ''))))];
}

/**
 * The route nodes SvelteKit's client loads on a visit to `/` and everything Vite preloads with each
 * (its static imports and CSS), read from the app entry: the root error node (1) always, with the
 * root layout (0, named by the document), and the node its `dictionary` gives `/`. Its `nodes` import
 * each with a `__vite__mapDeps([...])` list of indices into the chunk's dependency table.
 * @param {string} source the app entry chunk
 * @param {string} file its path relative to the build folder
 */
export function homeRouteAssets(source, file) {
  const leaf = /[{,]\s*["'`]\/["'`]\s*:\s*\[\s*(\d+)/.exec(source)?.[1];
  if (leaf === undefined) throw new Error(`${file}: no route "/" in the app's dictionary.`);
  const dir = path.posix.dirname(file);
  return ['1', leaf]
    .flatMap((node) => nodeAssets(source, file, node))
    .map((url) => path.posix.join(dir, url));
}

/** @param {string} source @param {string} file @param {string} node */
function nodeAssets(source, file, node) {
  const load = new RegExp(
    String.raw`import\((["'\`])([^"'\`]*nodes/${node}\.[^"'\`]+\.js)\1\)(?:\s*,\s*__vite__mapDeps\(\[([\d,\s]*)\]\))?`,
  ).exec(source);
  if (!load) throw new Error(`${file}: no import of route node ${node}.`);
  const urls = [load[2] ?? ''];
  if (!load[3]?.trim()) return urls;
  const table = /m\.f\s*=\s*(\[[^\]]*\])/.exec(source)?.[1];
  if (!table) throw new Error(`${file}: route node ${node} has preloads but no __vite__mapDeps table.`);
  /** @type {string[]} */
  const deps = JSON.parse(table);
  for (const index of load[3].split(',')) {
    const dep = deps[Number(index)];
    if (dep === undefined) throw new Error(`${file}: __vite__mapDeps index ${index} is out of range.`);
    urls.push(dep);
  }
  return urls;
}

/**
 * `entries` and every JS file they import statically, transitively (dynamic imports load on use).
 * @param {string} root the build folder
 * @param {string[]} entries paths relative to `root`
 * @returns {Promise<Map<string, Buffer>>} path → contents
 */
export async function staticClosure(root, entries) {
  await init;
  /** @type {Map<string, Buffer>} */
  const files = new Map();
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (files.has(file)) continue;
    const full = path.join(root, file);
    if (!existsSync(full)) throw new Error(`${file} is loaded by the first page but not in ${root}.`);
    const contents = await readFile(full);
    files.set(file, contents);
    if (!file.endsWith('.js') && !file.endsWith('.mjs')) continue;
    const [imports] = parse(contents.toString('utf8'), file);
    for (const { type, specifier } of imports) {
      // Dynamic imports load on use; bare and absolute URLs are not files of the build.
      if ((type !== 'static' && type !== 'reexport-star') || !specifier?.startsWith('.')) continue;
      pending.push(path.posix.join(path.posix.dirname(file), specifier));
    }
  }
  return files;
}

/** @param {Buffer} contents */
const gzipSize = (contents) => gzipSync(contents).length;

/**
 * @param {string} root the build folder
 * @returns {Promise<BuildSizes>}
 */
export async function measureBuild(root) {
  const html = await readFile(path.join(root, 'index.html'), 'utf8');
  const entries = documentAssets(html);
  const app = entries.find((file) => /(^|\/)entry\/app\.[^/]+\.js$/.test(file));
  if (!app) throw new Error(`${root}/index.html names no app entry (entry/app.*.js).`);
  entries.push(...homeRouteAssets(await readFile(path.join(root, app), 'utf8'), app));
  const page = await staticClosure(root, entries);
  const files = [...page].map(([file, contents]) => ({ file, gzip: gzipSize(contents) }));
  files.sort((a, b) => b.gzip - a.gzip);

  /** @type {Record<string, number>} */
  const workers = {};
  for (const dir of ['_app/immutable/workers', 'engines']) {
    const names = existsSync(path.join(root, dir))
      ? await readdir(path.join(root, dir), { withFileTypes: true })
      : [];
    for (const entry of names.filter((e) => e.isFile() && e.name.endsWith('.js'))) {
      const bundle = await staticClosure(root, [path.posix.join(dir, entry.name)]);
      workers[bundleName(entry.name)] = [...bundle.values()].reduce((n, c) => n + gzipSize(c), 0);
    }
  }
  return { firstPage: { gzip: files.reduce((n, f) => n + f.gzip, 0), files }, workers };
}

const kb = (/** @type {number} */ bytes) => `${(bytes / KB).toFixed(1)} KB`;

/**
 * Every way the build is over its budgets, or does not match them, as messages; none when it fits.
 * @param {BuildSizes} sizes
 * @param {Budgets} budgets
 */
export function overBudget(sizes, budgets) {
  const problems = [];
  const page = budgets.firstPageKB * KB;
  if (sizes.firstPage.gzip > page) {
    const largest = sizes.firstPage.files
      .slice(0, 5)
      .map((f) => `${f.file} ${kb(f.gzip)}`)
      .join(', ');
    problems.push(
      `first page: ${kb(sizes.firstPage.gzip)} gzip, over its budget of ${budgets.firstPageKB} KB by ` +
        `${kb(sizes.firstPage.gzip - page)} (largest: ${largest}).`,
    );
  }
  for (const [name, gzip] of Object.entries(sizes.workers)) {
    const budget = budgets.workersKB[name];
    if (budget === undefined)
      problems.push(`worker ${name}: ${kb(gzip)} gzip and no budget in budgets.json.`);
    else if (gzip > budget * KB)
      problems.push(
        `worker ${name}: ${kb(gzip)} gzip, over its budget of ${budget} KB by ${kb(gzip - budget * KB)}.`,
      );
  }
  for (const name of Object.keys(budgets.workersKB))
    if (!(name in sizes.workers)) problems.push(`worker ${name}: has a budget but is not in the build.`);
  return problems;
}

/** @param {BuildSizes} sizes @param {Budgets} budgets */
export function report(sizes, budgets) {
  const lines = [`first page     ${kb(sizes.firstPage.gzip).padStart(9)} of ${budgets.firstPageKB} KB gzip`];
  for (const [name, gzip] of Object.entries(sizes.workers))
    lines.push(`${name.padEnd(14)} ${kb(gzip).padStart(9)} of ${budgets.workersKB[name] ?? '?'} KB gzip`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const root = path.resolve(repo, process.argv[2] ?? 'build');
  /** @type {Budgets} */
  const budgets = JSON.parse(await readFile(path.join(repo, 'budgets.json'), 'utf8'));
  const sizes = await measureBuild(root);
  console.log(report(sizes, budgets));
  const problems = overBudget(sizes, budgets);
  if (problems.length > 0) {
    console.error(`\nOver the page-weight budget (budgets.json):\n- ${problems.join('\n- ')}`);
    console.error('If the growth is wanted, raise the budget in budgets.json and say why in the change.');
    process.exit(1);
  }
}
