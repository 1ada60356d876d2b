import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { serveStatic } from '../../scripts/serve.mjs';
import { addScriptedConnection, expectReply, send, startSession, test } from '../../tests/e2e/fixtures';
import type { ScriptedReply } from '../../tests/support/scripted-llm-server.ts';

/**
 * Issue 5: time from the first byte of a reply to its first rendered token, in the built app
 * (Chromium), beside a minimal page that streams the same reply with `fetch` and writes the text
 * into a <p>. The scripted server pauses DELAY_MS before each chunk, so the first chunk (role
 * only) and the first text chunk arrive on their own. Server side: the moment the chunk is handed
 * to the socket (`ServerResponse.write`, wrapped here). Page side: `performance.timeOrigin +
 * performance.now()` in a MutationObserver. Both clocks are this machine's; their offset is
 * measured and printed.
 */

const RUNS = 7;
const DELAY_MS = 150;

const now = () => performance.timeOrigin + performance.now();

interface Written {
  /** The chunk carrying the first text (it holds the marker). */
  text: number;
  /** The first body chunk of the same reply (role only). */
  firstByte: number;
}
const written = new Map<string, Written>();
let lastRoleWrite = 0;
const proto = ServerResponse.prototype as unknown as { write: (...args: unknown[]) => boolean };
const originalWrite = proto.write;

function wrapWrite(): void {
  proto.write = function (this: unknown, ...args: unknown[]) {
    const chunk = args[0];
    if (typeof chunk === 'string') {
      const t = now();
      const marker = /\b(F[AB]\d+x)\b/.exec(chunk)?.[1];
      if (marker && !written.has(marker)) written.set(marker, { text: t, firstByte: lastRoleWrite });
      else if (chunk.includes('"role":"assistant"')) lastRoleWrite = t;
    }
    return originalWrite.apply(this, args);
  };
}

const turn = (marker: string): ScriptedReply => ({
  text: [`${marker} `, 'streams ', 'in ', 'pieces.'],
  delayMs: DELAY_MS,
});

interface Seen {
  element?: number;
  text?: number;
  frame?: number;
}

/** Installs an observer that records when `selector` first exists and first shows `marker`. */
function watch(page: Page, selector: string, marker: string): Promise<void> {
  return page.evaluate(
    ({ selector, marker }) => {
      const seen: Seen = {};
      (window as unknown as { __seen: Seen }).__seen = seen;
      const observer = new MutationObserver(() => {
        const el = document.querySelector(selector);
        if (!el) return;
        const t = performance.timeOrigin + performance.now();
        seen.element ??= t;
        if (el.textContent?.includes(marker)) {
          seen.text = t;
          observer.disconnect();
          requestAnimationFrame(() => (seen.frame = performance.timeOrigin + performance.now()));
        }
      });
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    },
    { selector, marker },
  );
}

async function seen(page: Page): Promise<Required<Seen>> {
  await page.waitForFunction(() => (window as unknown as { __seen: Seen }).__seen.frame !== undefined);
  return page.evaluate(() => (window as unknown as { __seen: Required<Seen> }).__seen);
}

/** Page clock minus this process's clock, from the round trip with the smallest delay. */
async function clockOffset(page: Page): Promise<number> {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 9; i++) {
    const a = now();
    const p = await page.evaluate(() => performance.timeOrigin + performance.now());
    const b = now();
    if (b - a < best.rtt) best = { rtt: b - a, offset: p - (a + b) / 2 };
  }
  return best.offset;
}

const BASELINE_PAGE = `<!doctype html><meta charset="utf-8"><p id="out"></p>
<script>
  // The least a page can do: fetch, split events, JSON.parse, append the text.
  window.streamReply = async (url, key) => {
    const out = document.getElementById('out');
    out.textContent = '';
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ model: 'scripted-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      for (let i; (i = buf.indexOf('\\n\\n')) >= 0; ) {
        const event = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
        const text = JSON.parse(event.slice(6)).choices?.[0]?.delta?.content;
        if (text) out.textContent += text;
      }
    }
  };
</script>`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

test('first byte to first rendered token', async ({ page, llm, browser }) => {
  wrapWrite();
  const root = await mkdtemp(join(tmpdir(), 'hearth-first-token-'));
  await writeFile(join(root, 'index.html'), BASELINE_PAGE);
  const baselineServer = await serveStatic({ root, host: '127.0.0.1', port: 0 });
  const baselineContext = await browser.newContext();
  try {
    const basePage = await baselineContext.newPage();
    await basePage.goto(baselineServer.url);
    const streamBaseline = (marker: string) => {
      llm.script(turn(marker));
      return basePage.evaluate(
        ({ url }) =>
          (window as unknown as { streamReply(u: string, k: string): Promise<void> }).streamReply(
            url,
            'sk-test-key',
          ),
        { url: `${llm.url}/chat/completions` },
      );
    };

    // Warm-up, not counted: the app's first reply and the baseline's first fetch.
    await addScriptedConnection(page, llm);
    llm.script(turn('FA0x'));
    await startSession(page, 'warm up');
    await expectReply(page, 'FA0x');
    await streamBaseline('FB0x');

    const app = { text: [] as number[], frame: [] as number[], element: [] as number[] };
    const base = { text: [] as number[], frame: [] as number[] };
    for (let i = 1; i <= RUNS; i++) {
      const a = `FA${i}x`;
      llm.script(turn(a));
      await watch(page, '.message.streaming', a);
      await send(page, `message ${i}`);
      const s = await seen(page);
      await expectReply(page, a);
      const w = written.get(a)!;
      app.text.push(s.text - w.text);
      app.frame.push(s.frame - w.text);
      app.element.push(s.element - w.firstByte);

      const b = `FB${i}x`;
      await watch(basePage, '#out', b);
      await streamBaseline(b);
      const bs = await seen(basePage);
      base.text.push(bs.text - written.get(b)!.text);
      base.frame.push(bs.frame - written.get(b)!.text);
    }
    const offsetApp = await clockOffset(page);
    const offsetBase = await clockOffset(basePage);
    const f = (xs: number[]) => median(xs).toFixed(1);
    console.log(
      `RESULT first-token-chromium runs=${RUNS} chunk_delay_ms=${DELAY_MS} ` +
        `app_text_in_dom_median_ms=${f(app.text)} app_next_frame_median_ms=${f(app.frame)} ` +
        `app_first_byte_to_streaming_element_median_ms=${f(app.element)} ` +
        `baseline_fetch_page_text_in_dom_median_ms=${f(base.text)} baseline_next_frame_median_ms=${f(base.frame)} ` +
        `app_samples=${app.text.map((x) => x.toFixed(1)).join(',')} ` +
        `clock_offset_ms_app=${offsetApp.toFixed(2)} clock_offset_ms_baseline=${offsetBase.toFixed(2)}`,
    );
  } finally {
    proto.write = originalWrite;
    await baselineContext.close();
    await baselineServer.close();
    await rm(root, { recursive: true, force: true });
  }
});
