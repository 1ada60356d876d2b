import { test } from 'vitest';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { broadcastWorkspaceWrites, CachedWorkspaceStore } from '$lib/adapters/cached-workspace';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { Workspace } from '$lib/ports/workspace';
import type { ToolContext } from '$lib/tools/tool';
import { ReadState } from '$lib/tools/workspace/read-state';
import { readFileTool } from '$lib/tools/workspace/read-file';
import { searchFilesTool } from '$lib/tools/workspace/search-files';
import { writeFileTool } from '$lib/tools/workspace/write-file';
import { loadWorkspaceCopy } from '$lib/tools/shell/workspace-copy';
import { shellMounts } from '$lib/domain/shell-mounts';
import { median } from './loop';

/**
 * Workspace tools on real OPFS (Chromium), side by side with the plainest code doing the same
 * I/O: numbers, not assertions. Search: 2,000 files / 20 MB (a search visits at most 1,000 files,
 * so the corpus is split in two halves searched one after the other). Read/write: a 100 KB file.
 */

const FILES = 2_000;
const FILE_CHARS = 10_000;
const RUNS = 5;
const IO_RUNS = 21;
const NEEDLE = 'zephyrquartz';
const COMMON = 'lantern harbor';

type Dir = FileSystemDirectoryHandle;
type IterableDir = Dir & { values(): AsyncIterableIterator<FileSystemHandle> };

const wp = (raw: string): WorkspacePath => {
  const r = parseWorkspacePath(raw);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

/** Deterministic pseudo-random prose: 80-character lines from a small vocabulary. */
function corpusFile(index: number): string {
  const words = ['lantern', 'harbor', 'quiet', 'river', 'stone', 'amber', 'north', 'window', 'cedar', 'mill'];
  let seed = index * 2_654_435_761;
  const next = () => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0), seed);
  const lines: string[] = [];
  let size = 0;
  while (size < FILE_CHARS) {
    let line = '';
    while (line.length < 72) line += `${words[next() % words.length]}${next() % 97} `;
    if (index % 100 === 7 && lines.length === 40) line += NEEDLE;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n').slice(0, FILE_CHARS);
}

const filePath = (i: number) =>
  `work/${i < FILES / 2 ? 'a' : 'b'}/d${String(i % 40).padStart(2, '0')}/f${String(i).padStart(4, '0')}.md`;

async function opfsDir(segments: readonly string[]): Promise<Dir> {
  let dir = await navigator.storage.getDirectory();
  for (const s of segments) dir = await dir.getDirectoryHandle(s);
  return dir;
}

/** The plainest scan: read every file under `dir` and run `String.prototype.includes`. */
async function plainScan(dir: Dir, needle: string): Promise<{ bytes: number; matches: number }> {
  let bytes = 0;
  let matches = 0;
  for await (const handle of (dir as IterableDir).values()) {
    if (handle.kind === 'directory') {
      const inner = await plainScan(handle as Dir, needle);
      bytes += inner.bytes;
      matches += inner.matches;
    } else {
      const file = await (handle as FileSystemFileHandle).getFile();
      bytes += file.size;
      if ((await file.text()).includes(needle)) matches++;
    }
  }
  return { bytes, matches };
}

async function time<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

const mbps = (bytes: number, ms: number) => (bytes / 1e6 / (ms / 1000)).toFixed(1);

test('workspace tools on OPFS', async () => {
  const store = new OpfsWorkspaceStore();
  const key = `sessions/bench-${Date.now()}`;
  const opened = await store.open(key);
  if (!opened.ok) throw new Error(opened.error.message);
  const ws: Workspace = opened.value;
  const ctx: ToolContext = {
    workspace: ws,
    roots: sessionRoots(),
    readState: new ReadState(),
    signal: new AbortController().signal,
  };
  const enc = new TextEncoder();

  try {
    let totalBytes = 0;
    for (let i = 0; i < FILES; i++) {
      const data = enc.encode(corpusFile(i));
      totalBytes += data.byteLength;
      const w = await ws.write(wp(filePath(i)), data);
      if (!w.ok) throw new Error(w.error.message);
    }
    const halfBytes = totalBytes / 2;

    const searchRuns = async (query: string, paths: (string | undefined)[], on: ToolContext = ctx) => {
      const ms: number[] = [];
      let hits = 0;
      for (let r = 0; r < RUNS; r++) {
        const t = await time(async () => {
          let n = 0;
          for (const path of paths) {
            const out = await searchFilesTool.execute({ query, path, limit: 50 }, on);
            if (out.isError) throw new Error(out.content);
            n += (out.structured as { hits: unknown[] }).hits.length;
          }
          return n;
        });
        ms.push(t.ms);
        hits = t.value;
      }
      return { ms: median(ms), hits };
    };

    const rare = await searchRuns(NEEDLE, ['work/a', 'work/b']);
    // The same search through the runtime's workspace cache: the first search reads OPFS and fills it.
    const cachedStore = new CachedWorkspaceStore(store, broadcastWorkspaceWrites(`bench-${key}`));
    const cachedOpened = await cachedStore.open(key);
    if (!cachedOpened.ok) throw new Error(cachedOpened.error.message);
    const cachedCtx: ToolContext = { ...ctx, workspace: cachedOpened.value, readState: new ReadState() };
    const firstCached = await time(async () => {
      for (const path of ['work/a', 'work/b'])
        await searchFilesTool.execute({ query: NEEDLE, path, limit: 50 }, cachedCtx);
    });
    const warm = await searchRuns(NEEDLE, ['work/a', 'work/b'], cachedCtx);
    // What a run does as it starts, in a tab that has read nothing: the files read ahead, while
    // the first model request is on its way, then the agent's first search.
    const aheadStore = new CachedWorkspaceStore(store, broadcastWorkspaceWrites(`bench-ahead-${key}`));
    const aheadOpened = await aheadStore.open(key);
    if (!aheadOpened.ok) throw new Error(aheadOpened.error.message);
    const ahead = await time(() => aheadOpened.value.prefetch!([wp('work')]));
    const afterAhead = await time(async () => {
      for (const path of ['work/a', 'work/b'])
        await searchFilesTool.execute(
          { query: NEEDLE, path, limit: 50 },
          { ...ctx, workspace: aheadOpened.value, readState: new ReadState() },
        );
    });
    const common = await searchRuns(COMMON, ['work/a', 'work/b']);
    const capped = await searchRuns(NEEDLE, [undefined]);
    const workDir = await opfsDir(['workspaces', ...key.split('/'), 'work']);
    const scanMs: number[] = [];
    let scanned = { bytes: 0, matches: 0 };
    for (let r = 0; r < RUNS; r++) {
      const t = await time(() => plainScan(workDir, NEEDLE));
      scanMs.push(t.ms);
      scanned = t.value;
    }
    const scan = median(scanMs);

    console.log(
      `RESULT workspace-search-chromium files=${FILES} mb=${(totalBytes / 1e6).toFixed(1)} query=rare ` +
        `median_ms=${rare.ms.toFixed(1)} mb_per_s=${mbps(totalBytes, rare.ms)} hits=${rare.hits} ` +
        `baseline_plain_scan_median_ms=${scan.toFixed(1)} baseline_mb_per_s=${mbps(scanned.bytes, scan)} ` +
        `baseline_matches=${scanned.matches}`,
    );
    console.log(
      `RESULT workspace-search-chromium cached files=${FILES} mb=${(totalBytes / 1e6).toFixed(1)} query=rare ` +
        `warm_median_ms=${warm.ms.toFixed(1)} mb_per_s=${mbps(totalBytes, warm.ms)} hits=${warm.hits} ` +
        `(uncached median_ms=${rare.ms.toFixed(1)}, plain scan ${scan.toFixed(1)})`,
    );
    console.log(
      `RESULT workspace-search-chromium cached files=${FILES} mb=${(totalBytes / 1e6).toFixed(1)} query=rare ` +
        `first_search_ms=${firstCached.ms.toFixed(1)} mb_per_s=${mbps(totalBytes, firstCached.ms)} (reads OPFS, fills the cache)`,
    );
    console.log(
      `RESULT workspace-prefetch-chromium files=${FILES} mb=${(totalBytes / 1e6).toFixed(1)} ` +
        `prefetch_ms=${ahead.ms.toFixed(1)} then_first_search_ms=${afterAhead.ms.toFixed(1)}`,
    );
    console.log(
      `RESULT workspace-search-chromium files=${FILES} mb=${(totalBytes / 1e6).toFixed(1)} query=common ` +
        `median_ms=${common.ms.toFixed(1)} mb_per_s=${mbps(totalBytes, common.ms)} hits=${common.hits}`,
    );
    console.log(
      `RESULT workspace-search-chromium default_scope files=1000_of_${FILES} mb=${(halfBytes / 1e6).toFixed(1)} ` +
        `query=rare median_ms=${capped.ms.toFixed(1)} mb_per_s=${mbps(halfBytes, capped.ms)} hits=${capped.hits}`,
    );

    // A shell call's copy of the visible workspace: `work/a` alone holds 1,000 of the files.
    const copyRoots = { ...sessionRoots() };
    const mounts = shellMounts(copyRoots);
    const copyOf = async (on: Workspace) => {
      const t = await time(() => loadWorkspaceCopy(on, copyRoots, mounts));
      if (!t.value.ok) throw new Error(t.value.error.message);
      return { ms: t.ms, files: t.value.value.length };
    };
    const copyMs: number[] = [];
    const warmCopyMs: number[] = [];
    let copied = 0;
    for (let r = 0; r < RUNS; r++) {
      const bare = await copyOf(ws);
      copyMs.push(bare.ms);
      copied = bare.files;
      warmCopyMs.push((await copyOf(cachedOpened.value)).ms);
    }
    console.log(
      `RESULT workspace-shell-copy-chromium files=${copied} mb=${(totalBytes / 1e6).toFixed(1)} ` +
        `bare_opfs_median_ms=${median(copyMs).toFixed(1)} cached_warm_median_ms=${median(warmCopyMs).toFixed(1)} ` +
        `(plain scan of all ${FILES} files ${scan.toFixed(1)} ms)`,
    );

    // A 100 KB file: 1,000 lines of 99 characters + newline.
    const line = (c: string) => `${c.repeat(99)}\n`;
    const big = (c: string) => line(c).repeat(1_000);
    const bigPath = 'work/big.md';
    await ws.write(wp(bigPath), enc.encode(big('x')));
    const bigDir = ['workspaces', ...key.split('/'), 'work'];

    // The cached store gets a file of its own: writes behind a cache's back are not supported.
    const cachedBigPath = 'work/big-cached.md';
    await ws.write(wp(cachedBigPath), enc.encode(big('x')));
    const pathFor = (on: ToolContext) => (on === ctx ? bigPath : cachedBigPath);
    const readTool = async (on: ToolContext) => {
      const out = await readFileTool.execute({ path: pathFor(on) }, on);
      if (out.isError) throw new Error(out.content);
    };
    const writeTool = async (on: ToolContext, content: string) => {
      const out = await writeFileTool.execute({ path: pathFor(on), content }, on);
      if (out.isError) throw new Error(out.content);
    };
    await readTool(cachedCtx);
    const readMs: number[] = [];
    const cachedReadMs: number[] = [];
    const rawReadMs: number[] = [];
    for (let r = 0; r < IO_RUNS; r++) {
      readMs.push((await time(() => readTool(ctx))).ms);
      cachedReadMs.push((await time(() => readTool(cachedCtx))).ms);
      rawReadMs.push(
        (
          await time(async () => {
            const handle = await (await opfsDir(bigDir)).getFileHandle('big.md');
            await (await handle.getFile()).arrayBuffer();
          })
        ).ms,
      );
    }

    const writeMs: number[] = [];
    const cachedWriteMs: number[] = [];
    const rawWriteMs: number[] = [];
    for (let r = 0; r < IO_RUNS; r++) {
      const content = big(r % 2 ? 'y' : 'z');
      writeMs.push((await time(() => writeTool(ctx, content))).ms);
      cachedWriteMs.push((await time(() => writeTool(cachedCtx, content))).ms);
      const data = enc.encode(content);
      rawWriteMs.push(
        (
          await time(async () => {
            const handle = await (await opfsDir(bigDir)).getFileHandle('raw.md', { create: true });
            const stream = await handle.createWritable();
            await stream.write(data);
            await stream.close();
          })
        ).ms,
      );
    }

    console.log(
      `RESULT workspace-read-file-chromium bytes=${big('x').length} runs=${IO_RUNS} ` +
        `median_ms=${median(readMs).toFixed(2)} cached_median_ms=${median(cachedReadMs).toFixed(2)} ` +
        `baseline_raw_opfs_read_median_ms=${median(rawReadMs).toFixed(2)}`,
    );
    console.log(
      `RESULT workspace-write-file-chromium mode=replace bytes=${big('x').length} runs=${IO_RUNS} ` +
        `median_ms=${median(writeMs).toFixed(2)} cached_median_ms=${median(cachedWriteMs).toFixed(2)} ` +
        `baseline_raw_opfs_write_median_ms=${median(rawWriteMs).toFixed(2)}`,
    );
  } finally {
    await store.delete(key);
  }
}, 600_000);
