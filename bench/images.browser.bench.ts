import { test } from 'vitest';

test('image normalization (Chromium, in a worker): jsquash beside createImageBitmap + OffscreenCanvas', async () => {
  const worker = new Worker(new URL('./images.worker.ts', import.meta.url), { type: 'module' });
  try {
    const out = await new Promise<{ lines?: string[]; error?: string }>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<{ lines?: string[]; error?: string }>) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
      worker.postMessage(null);
    });
    if (out.error) throw new Error(out.error);
    for (const line of out.lines!) console.log(line);
  } finally {
    worker.terminate();
  }
}, 600_000);
