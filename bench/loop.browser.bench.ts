import { test } from 'vitest';
import { loopResult, splitResult, type RoundTimes } from './loop';

const ROUNDS = 200;

test('runtime overhead per loop round (Chromium, in a worker, IndexedDB, OPFS)', async () => {
  // Where the runtime runs in the app: a dedicated worker (bench/loop.worker.ts).
  const worker = new Worker(new URL('./loop.worker.ts', import.meta.url), { type: 'module' });
  type Out = { times: RoundTimes; writes: number[]; bare: number[]; storageMs: number };
  const out = await new Promise<Out>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<Out>) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ rounds: ROUNDS });
  });
  worker.terminate();
  console.log(loopResult('loop-chromium-worker', ROUNDS, out.times, out.writes, out.bare));
  console.log(splitResult('loop-chromium-worker', out.times, out.storageMs));
}, 120_000);
