import { expect, it } from 'vitest';
import type { WorkerReport } from './normalize.worker';

it('normalizes in a real worker, the codecs loading their wasm on first use', async () => {
  const worker = new Worker(new URL('./normalize.worker.ts', import.meta.url), { type: 'module' });
  try {
    const report = await new Promise<WorkerReport>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<WorkerReport & { error?: string }>) =>
        e.data.error ? reject(new Error(e.data.error)) : resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
      worker.postMessage(null);
    });
    expect(report.wasmBefore).toEqual([]);
    expect(report.wasmAfter.sort()).toEqual([
      'mozjpeg_enc.wasm',
      'squoosh_png_bg.wasm',
      'squoosh_resize_bg.wasm',
      'webp_dec.wasm',
    ]);
    expect(report.converted).toMatchObject({ mimeType: 'image/jpeg', width: 1280, height: 640, kept: false });
    expect(report.converted.decoded).toEqual([1280, 640]);
    expect(report.converted.white.every((c) => c >= 250)).toBe(true);
    expect(report.kept).toEqual({ mimeType: 'image/webp', kept: true, same: true });
  } finally {
    worker.terminate();
  }
});
