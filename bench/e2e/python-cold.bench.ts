import { test, type BrowserContext, type Page } from '@playwright/test';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveStatic } from '../../scripts/serve.mjs';
import type { ShellPanelUpdate } from '../../src/lib/worker/protocol';

/**
 * Issues 8 and 12: Python's cold start in the built app (Chromium), from the service worker's
 * cache. A first visit installs the service worker, which precaches the app with Pyodide; then
 * each round opens fresh tabs (a new runtime worker, a new sandbox worker) and times, in the page,
 * from the `workspace.shell` request to its `done` item: `python3 -c 'print(1)'` as a tab's first
 * call, and `echo hi` as a tab's first call (the baseline: the sandbox worker's start without
 * Python); then Python as the first call of a new session in that tab (each workspace has its own
 * sandbox, so this is what every session's first Python call costs). Issue 21: Python as the first
 * call of a fresh tab opened on the session's page, which starts Python in the background, at once
 * and after a pause.
 * Bytes: what the server sent (the network), and what responses seen by Playwright say came
 * from the service worker. Numbers only.
 */

const ROUNDS = 5;
/** Between opening a session and its first Python call, in the warmed-up case. */
const SESSION_PAUSE_MS = 3_000;
const PYTHON = "python3 -c 'print(1)'";

/** Bytes the server wrote, by path; reset per measurement. */
let served = new Map<string, number>();
const proto = ServerResponse.prototype as unknown as {
  write: (...args: unknown[]) => boolean;
  end: (...args: unknown[]) => ServerResponse;
};
const originalWrite = proto.write;
const originalEnd = proto.end;
const sizeOf = (chunk: unknown) =>
  typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.byteLength : 0;

function countServedBytes(): void {
  const count = (res: ServerResponse, chunk: unknown) => {
    const path = new URL(res.req?.url ?? '/', 'http://x').pathname;
    served.set(path, (served.get(path) ?? 0) + sizeOf(chunk));
  };
  proto.write = function (this: ServerResponse, ...args: unknown[]) {
    count(this, args[0]);
    return originalWrite.apply(this, args);
  };
  proto.end = function (this: ServerResponse, ...args: unknown[]) {
    if (typeof args[0] !== 'function') count(this, args[0]);
    return originalEnd.apply(this, args);
  };
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/**
 * Responses Playwright reports as served by the service worker (pages and their workers), by
 * file, and when the last Pyodide file was read to its end (this process's clock).
 */
function watchServiceWorkerBytes(context: BrowserContext) {
  const state = {
    bytes: 0,
    responses: 0,
    byFile: new Map<string, number>(),
    lastPyodideFinished: 0,
    /** Pyodide requests: file, when asked for and when read to the end (Date.now()). */
    pyodide: [] as { file: string; start: number; end: number }[],
  };
  const started = new Map<object, number>();
  context.on('request', (request) => started.set(request, Date.now()));
  context.on('response', (response) => {
    if (!response.fromServiceWorker()) return;
    const bytes = Number(response.headers()['content-length'] ?? 0);
    const file = new URL(response.url()).pathname.split('/').pop() ?? '';
    state.responses++;
    state.bytes += bytes;
    state.byFile.set(file, (state.byFile.get(file) ?? 0) + bytes);
  });
  context.on('requestfinished', (request) => {
    if (!request.url().includes('/engines/pyodide/')) return;
    state.lastPyodideFinished = Date.now();
    const file = new URL(request.url()).pathname.split('/').pop() ?? '';
    state.pyodide.push({ file, start: started.get(request) ?? 0, end: state.lastPyodideFinished });
  });
  return state;
}

interface Timed {
  ms: number;
  firstProgressMs: number | null;
  /** The last download report: the sandbox worker has read the files once (for the progress bar). */
  lastDownloadProgressMs: number | null;
  /** The `done` report: Pyodide loaded and prepared. */
  loadedProgressMs: number | null;
  progressItems: number;
  totalBytes: number | null;
  done: Extract<ShellPanelUpdate, { type: 'done' }> | null;
}

/** Runs `command` through `window.hearth` and times it from the request to the `done` item. */
function shell(page: Page, sessionId: string, command: string): Promise<Timed> {
  return page.evaluate(
    async ({ sessionId, command }) => {
      const start = performance.now();
      const out: Timed = {
        ms: 0,
        firstProgressMs: null,
        lastDownloadProgressMs: null,
        loadedProgressMs: null,
        progressItems: 0,
        totalBytes: null,
        done: null,
      };
      for await (const item of window.hearth.workspace.shell(sessionId, command)) {
        if (item.type === 'progress') {
          const at = performance.now() - start;
          out.firstProgressMs ??= at;
          out.progressItems++;
          if (item.progress.done) out.loadedProgressMs = at;
          else {
            out.lastDownloadProgressMs = at;
            out.totalBytes = item.progress.totalBytes;
          }
        } else {
          out.done = item;
        }
      }
      out.ms = performance.now() - start;
      return out;
    },
    { sessionId, command },
  );
}

function check(what: string, timed: Timed, stdout: string): Timed {
  if (!timed.done || timed.done.exitCode !== 0 || !timed.done.content.includes(stdout)) {
    throw new Error(`${what}: ${JSON.stringify(timed.done)}`);
  }
  return timed;
}

/** A fresh tab of the app, controlled by the service worker, its runtime worker answering. */
async function freshTab(context: BrowserContext, url: string, sessionId: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(
    () => window.hearth !== undefined && navigator.serviceWorker.controller !== null,
  );
  await page.evaluate((id) => window.hearth.sessions.get(id), sessionId);
  return page;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const seconds = (ms: number) => (ms / 1000).toFixed(2);
const mb = (bytes: number) => (bytes / 1e6).toFixed(2);

test('Python cold start from the service worker cache', async ({ browser }) => {
  // A private copy of the build: others may rebuild build/ while this runs.
  const root = await mkdtemp(join(tmpdir(), 'hearth-python-cold-'));
  await cp('build', root, { recursive: true });
  const server = await serveStatic({ root, host: '127.0.0.1', port: 0 });
  countServedBytes();
  const context = await browser.newContext();
  const fromSw = watchServiceWorkerBytes(context);
  try {
    // First visit: the service worker installs (precaching everything, Pyodide included) and
    // takes control.
    served = new Map();
    const first = await context.newPage();
    const installStart = Date.now();
    await first.goto(server.url);
    await first.evaluate(async () => {
      await navigator.serviceWorker.ready;
      if (!navigator.serviceWorker.controller) {
        await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r));
      }
    });
    const installMs = Date.now() - installStart;
    const installBytes = total(served);
    const installPyodide = [...served].filter(([p]) => p.includes('/engines/pyodide/'));
    await first.waitForFunction(() => window.hearth !== undefined);
    const sessionId = await first.evaluate(async () => (await window.hearth.sessions.create()).id);
    await first.close();

    const samples = {
      pythonFirst: [] as number[],
      echoFirst: [] as number[],
      pythonAfterEcho: [] as number[],
      pythonWarm: [] as number[],
      pythonNewSession: [] as number[],
      pythonSessionOpened: [] as number[],
      pythonSessionOpenedPause: [] as number[],
      firstProgress: [] as number[],
      lastDownloadProgress: [] as number[],
      loadedProgress: [] as number[],
    };
    const network = { python: [] as number[], echo: [] as number[] };
    let pythonBytes = 0;
    const swBytesPython: number[] = [];
    const pyodideReadMs: number[] = [];
    let swFiles = new Map<string, number>();
    const pyodideSpans = new Map<string, { start: number[]; end: number[] }>();
    for (let round = 1; round <= ROUNDS; round++) {
      // Baseline: `echo hi` as a fresh tab's first call, then Python in that worker, then again.
      let page = await freshTab(context, server.url, sessionId);
      served = new Map();
      samples.echoFirst.push(check('echo first', await shell(page, sessionId, 'echo hi'), 'hi').ms);
      network.echo.push(total(served));
      samples.pythonAfterEcho.push(check('python after echo', await shell(page, sessionId, PYTHON), '1').ms);
      samples.pythonWarm.push(check('python warm', await shell(page, sessionId, PYTHON), '1').ms);
      await page.close();

      // Python as a fresh tab's first call.
      page = await freshTab(context, server.url, sessionId);
      served = new Map();
      const swBefore = fromSw.bytes;
      fromSw.byFile = new Map();
      fromSw.pyodide = [];
      const start = Date.now();
      const cold = check('python first', await shell(page, sessionId, PYTHON), '1');
      network.python.push(total(served));
      swBytesPython.push(fromSw.bytes - swBefore);
      swFiles = fromSw.byFile;
      pyodideReadMs.push(fromSw.lastPyodideFinished - start);
      // The n-th request of each file, in order: [start, end] after the shell request.
      const seen = new Map<string, number>();
      for (const r of fromSw.pyodide) {
        const key = `${r.file}#${(seen.get(r.file) ?? 0) + 1}`;
        seen.set(r.file, (seen.get(r.file) ?? 0) + 1);
        const spans = pyodideSpans.get(key) ?? { start: [], end: [] };
        spans.start.push(r.start - start);
        spans.end.push(r.end - start);
        pyodideSpans.set(key, spans);
      }
      samples.pythonFirst.push(cold.ms);
      if (cold.firstProgressMs !== null) samples.firstProgress.push(cold.firstProgressMs);
      if (cold.lastDownloadProgressMs !== null)
        samples.lastDownloadProgress.push(cold.lastDownloadProgressMs);
      if (cold.loadedProgressMs !== null) samples.loadedProgress.push(cold.loadedProgressMs);
      pythonBytes = cold.totalBytes ?? 0;
      // A new session in the same tab: its own sandbox worker, the engine files already in memory.
      const other = await page.evaluate(async () => (await window.hearth.sessions.create()).id);
      samples.pythonNewSession.push(check('python new session', await shell(page, other, PYTHON), '1').ms);
      await page.close();

      // Issue 21: a fresh tab that opens the session's page (which starts Python in the
      // background), Python called at once, and after a pause (a person typing, a model answering).
      page = await freshTab(context, `${server.url}#/sessions/${sessionId}`, sessionId);
      samples.pythonSessionOpened.push(
        check('python session opened', await shell(page, sessionId, PYTHON), '1').ms,
      );
      await page.close();
      page = await freshTab(context, `${server.url}#/sessions/${sessionId}`, sessionId);
      await page.waitForTimeout(SESSION_PAUSE_MS);
      samples.pythonSessionOpenedPause.push(
        check('python session opened, pause', await shell(page, sessionId, PYTHON), '1').ms,
      );
      await page.close();
    }

    // Compiling Pyodide's wasm alone, in new contexts (own renderer process, so no compiled
    // module left from the tabs above), from bytes already in memory.
    const compileMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const other = await browser.newContext();
      const page = await other.newPage();
      await page.goto(new URL('icons/favicon.svg', server.url).href);
      compileMs.push(
        await page.evaluate(async () => {
          const bytes = await (await fetch('../engines/pyodide/pyodide.asm.wasm')).arrayBuffer();
          const start = performance.now();
          await WebAssembly.compile(bytes);
          return performance.now() - start;
        }),
      );
      await other.close();
    }

    const list = (xs: number[]) => xs.map((x) => seconds(x)).join(',');
    const at = (xs: number[]) => (xs.length ? seconds(median(xs)) : 'n/a');
    console.log(
      `RESULT python-cold-chromium rounds=${ROUNDS} ` +
        `python_first_call_fresh_tab_median_s=${seconds(median(samples.pythonFirst))} ` +
        `baseline_echo_first_call_fresh_tab_median_s=${seconds(median(samples.echoFirst))} ` +
        `python_after_echo_same_tab_median_s=${seconds(median(samples.pythonAfterEcho))} ` +
        `python_warm_same_tab_median_s=${seconds(median(samples.pythonWarm))} ` +
        `python_first_call_new_session_same_tab_median_s=${seconds(median(samples.pythonNewSession))} ` +
        `python_new_session_samples_s=${list(samples.pythonNewSession)} ` +
        `python_first_call_session_page_opened_median_s=${seconds(median(samples.pythonSessionOpened))} ` +
        `python_session_page_opened_samples_s=${list(samples.pythonSessionOpened)} ` +
        `python_first_call_session_page_opened_pause_${SESSION_PAUSE_MS / 1000}s_median_s=${seconds(median(samples.pythonSessionOpenedPause))} ` +
        `python_session_page_opened_pause_samples_s=${list(samples.pythonSessionOpenedPause)} ` +
        `python_first_progress_median_s=${at(samples.firstProgress)} ` +
        `python_last_download_progress_median_s=${at(samples.lastDownloadProgress)} ` +
        `python_loaded_progress_median_s=${at(samples.loadedProgress)} ` +
        `python_samples_s=${list(samples.pythonFirst)} echo_samples_s=${list(samples.echoFirst)} ` +
        `python_after_echo_samples_s=${list(samples.pythonAfterEcho)} ` +
        `pyodide_wasm_compile_alone_median_s=${seconds(median(compileMs))} compile_samples_s=${list(compileMs)}`,
    );
    console.log(
      `RESULT python-cold-bytes-chromium first_visit_network_mb=${mb(installBytes)} ` +
        `first_visit_pyodide_network_mb=${mb(installPyodide.reduce((n, [, b]) => n + b, 0))} ` +
        `first_visit_until_controlled_s=${seconds(installMs)} ` +
        `python_download_total_mb=${mb(pythonBytes)} ` +
        `python_first_call_network_bytes=${network.python.join(',')} ` +
        `echo_first_call_network_bytes=${network.echo.join(',')} ` +
        `python_first_call_sw_bytes_seen=${swBytesPython.join(',')} ` +
        `sw_responses_seen=${fromSw.responses} ` +
        `python_first_call_last_pyodide_file_read_median_s=${seconds(median(pyodideReadMs))}`,
    );
    console.log(
      `RESULT python-cold-pyodide-requests-chromium median_s_after_shell_request ` +
        [...pyodideSpans]
          .sort((a, b) => median(a[1].start) - median(b[1].start))
          .map(([key, span]) => `${key}=${seconds(median(span.start))}..${seconds(median(span.end))}`)
          .join(' '),
    );
    const files = [...swFiles].sort((a, b) => b[1] - a[1]);
    console.log(
      `RESULT python-cold-sw-files-chromium last_round ` +
        files.map(([file, bytes]) => `${file}=${bytes}`).join(' '),
    );
  } finally {
    proto.write = originalWrite;
    proto.end = originalEnd;
    await context.close();
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
});
