import type { BrowserCommand } from 'vitest/node';
import type { CDPSession } from 'playwright';

/**
 * The peak memory of the page's JavaScript while a benchmark works: vitest's Node process polls
 * Chromium's `Runtime.getHeapUsage` (the V8 heap plus ArrayBuffer backing stores) every 25 ms.
 */
let sampling:
  { cdp: CDPSession; timer: ReturnType<typeof setInterval>; base: number; peak: number } | undefined;

const usage = async (cdp: CDPSession) => {
  const u = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; backingStorageSize?: number };
  return u.usedSize + (u.backingStorageSize ?? 0);
};

const start: BrowserCommand = async (ctx) => {
  const page = (ctx as unknown as { page: import('playwright').Page }).page;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  const base = await usage(cdp);
  const s = { cdp, base, peak: base, timer: undefined as unknown as ReturnType<typeof setInterval> };
  s.timer = setInterval(() => {
    void usage(cdp).then(
      (u) => (s.peak = Math.max(s.peak, u)),
      () => {},
    );
  }, 25);
  sampling = s;
};

/** Bytes above the level when sampling started, at the highest point seen. */
const stop: BrowserCommand<[], number> = async () => {
  const s = sampling!;
  clearInterval(s.timer);
  s.peak = Math.max(s.peak, await usage(s.cdp));
  await s.cdp.detach();
  sampling = undefined;
  return s.peak - s.base;
};

export const heapCommands = { startHeapSampling: start, stopHeapSampling: stop };

declare module 'vitest/browser' {
  interface BrowserCommands {
    startHeapSampling(): Promise<void>;
    stopHeapSampling(): Promise<number>;
  }
}
