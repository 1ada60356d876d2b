import { expect, test } from 'vitest';

test('prompt assembly: a 10,000-message chat, a 251-entry lorebook, a 32k budget (Chromium, in a worker)', async () => {
  const worker = new Worker(new URL('./assembly.worker.ts', import.meta.url), { type: 'module' });
  const out = await new Promise<{ lines: string[] }>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<{ lines: string[] }>) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage(null);
  });
  worker.terminate();
  for (const line of out.lines) console.log(line);
  expect(out.lines.filter((l) => l.startsWith('ERROR'))).toEqual([]);
}, 300_000);
