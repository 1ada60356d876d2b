import { test } from 'vitest';

test('skills: importing a 200-file, 10 MB zip, and mounting 50 skills (Chromium, in a worker)', async () => {
  const worker = new Worker(new URL('./skills.worker.ts', import.meta.url), { type: 'module' });
  const out = await new Promise<{ lines: string[] }>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<{ lines: string[] }>) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage(null);
  });
  worker.terminate();
  for (const line of out.lines) console.log(line);
}, 300_000);
