import { test } from 'vitest';

test('delegation: a delegate + await round trip, and children at once (Chromium, in a worker)', async () => {
  const worker = new Worker(new URL('./delegation.worker.ts', import.meta.url), { type: 'module' });
  const out = await new Promise<{ lines: string[] }>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<{ lines: string[] }>) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ repeats: 15, rounds: 50 });
  });
  worker.terminate();
  for (const line of out.lines) console.log(line);
}, 600_000);
