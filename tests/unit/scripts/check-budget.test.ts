import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measureBuild, overBudget } from '../../../scripts/check-budget.mjs';

/** A build folder shaped like SvelteKit's static output, small enough to read. */
const FILES: Record<string, string> = {
  'index.html': `<!doctype html><head>
    <link href="./_app/immutable/entry/start.AAAAAAAA.js" rel="modulepreload">
    <link href="./_app/immutable/entry/app.BBBBBBBB.js" rel="modulepreload">
    <link href="./_app/immutable/nodes/0.CCCCCCCC.js" rel="modulepreload">
    <link href="./_app/immutable/assets/0.DDDDDDDD.css" rel="stylesheet">
    <link rel="icon" href="./icons/favicon.svg">
  </head><body><script>Promise.all([import("./_app/immutable/entry/start.AAAAAAAA.js")]);</script></body>`,
  '_app/immutable/entry/start.AAAAAAAA.js': 'import{a}from"../chunks/kit.js";export{a as start};',
  '_app/immutable/entry/app.BBBBBBBB.js':
    'const __vite__mapDeps=(i,m=__vite__mapDeps,d=(m.f||(m.f=["../nodes/0.CCCCCCCC.js","../nodes/1.EEEEEEEE.js","../nodes/2.FFFFFFFF.js","../chunks/home.js","../assets/2.GGGGGGGG.css","../nodes/3.HHHHHHHH.js","../chunks/heavy.js"])))=>i.map(i=>d[i]);' +
    'const I=[()=>F(()=>import(`../nodes/0.CCCCCCCC.js`),__vite__mapDeps([0]),import.meta.url),' +
    '()=>F(()=>import(`../nodes/1.EEEEEEEE.js`),[],import.meta.url),' +
    '()=>F(()=>import(`../nodes/2.FFFFFFFF.js`),__vite__mapDeps([2,3,4]),import.meta.url),' +
    '()=>F(()=>import(`../nodes/3.HHHHHHHH.js`),__vite__mapDeps([5,6]),import.meta.url)],' +
    'R={"/":[2],"/runs/[id]":[3]};export{R as dictionary,I as nodes};',
  '_app/immutable/chunks/kit.js': 'export const a = 1;',
  '_app/immutable/nodes/0.CCCCCCCC.js':
    'import"../chunks/kit.js";const m=()=>import("../chunks/lazy.js");export{m};',
  '_app/immutable/nodes/1.EEEEEEEE.js': 'export const error = 1;',
  '_app/immutable/nodes/2.FFFFFFFF.js': 'import{h}from"../chunks/home.js";export{h};',
  '_app/immutable/nodes/3.HHHHHHHH.js': 'import"../chunks/heavy.js";',
  '_app/immutable/chunks/home.js': 'export const h = "home";',
  '_app/immutable/chunks/lazy.js': `export const lazy = "${'x'.repeat(5000)}";`,
  '_app/immutable/chunks/heavy.js': `export const heavy = "${'y'.repeat(5000)}";`,
  '_app/immutable/assets/0.DDDDDDDD.css': 'body{color:red}',
  '_app/immutable/assets/2.GGGGGGGG.css': 'main{color:blue}',
  '_app/immutable/workers/runtime.worker-CjwgX38k.js':
    'import"./chunks/w.js";const l=()=>import("./chunks/wlazy.js");',
  '_app/immutable/workers/chunks/w.js': 'export const w = 1;',
  '_app/immutable/workers/chunks/wlazy.js': `export const z = "${'z'.repeat(5000)}";`,
  'engines/sandbox-dd56d76c6f.js': 'export const sandbox = 1;',
};
const FIRST_PAGE = [
  '_app/immutable/entry/start.AAAAAAAA.js',
  '_app/immutable/entry/app.BBBBBBBB.js',
  '_app/immutable/chunks/kit.js',
  '_app/immutable/nodes/0.CCCCCCCC.js',
  '_app/immutable/assets/0.DDDDDDDD.css',
  '_app/immutable/nodes/1.EEEEEEEE.js',
  '_app/immutable/nodes/2.FFFFFFFF.js',
  '_app/immutable/chunks/home.js',
  '_app/immutable/assets/2.GGGGGGGG.css',
];
const gz = (file: string) => gzipSync(FILES[file]!).length;

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-budget-'));
  for (const [file, text] of Object.entries(FILES)) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), text);
  }
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('measureBuild', () => {
  it('counts the document, the static imports, the layout, error and / route nodes with their CSS, not lazy chunks', async () => {
    const sizes = await measureBuild(root);
    expect(sizes.firstPage.files.map((f) => f.file).sort()).toEqual([...FIRST_PAGE].sort());
    expect(sizes.firstPage.gzip).toBe(FIRST_PAGE.reduce((n, f) => n + gz(f), 0));
  });

  it('sizes each worker bundle with its static imports, named without the hash', async () => {
    const sizes = await measureBuild(root);
    expect(sizes.workers).toEqual({
      'runtime.worker':
        gz('_app/immutable/workers/runtime.worker-CjwgX38k.js') + gz('_app/immutable/workers/chunks/w.js'),
      sandbox: gz('engines/sandbox-dd56d76c6f.js'),
    });
  });

  it('fails clearly when the page names a file the build does not have', async () => {
    await rm(join(root, '_app/immutable/chunks/home.js'));
    await expect(measureBuild(root)).rejects.toThrow(
      '_app/immutable/chunks/home.js is loaded by the first page',
    );
  });
});

describe('overBudget', () => {
  const sizes = {
    firstPage: { gzip: 260 * 1024, files: [{ file: 'chunks/zod.js', gzip: 30 * 1024 }] },
    workers: { 'runtime.worker': 100 * 1024, sandbox: 10 * 1024, extension: 1024 },
  };

  it('passes a build within its budgets', () => {
    expect(
      overBudget(sizes, {
        firstPageKB: 260,
        workersKB: { 'runtime.worker': 100, sandbox: 11, extension: 1 },
      }),
    ).toEqual([]);
  });

  it('names what grew, by how much, and budgets that match nothing', () => {
    expect(
      overBudget(sizes, { firstPageKB: 250, workersKB: { 'runtime.worker': 90, sandbox: 11, shell: 5 } }),
    ).toEqual([
      'first page: 260.0 KB gzip, over its budget of 250 KB by 10.0 KB (largest: chunks/zod.js 30.0 KB).',
      'worker runtime.worker: 100.0 KB gzip, over its budget of 90 KB by 10.0 KB.',
      'worker extension: 1.0 KB gzip and no budget in budgets.json.',
      'worker shell: has a budget but is not in the build.',
    ]);
  });
});
