/// <reference lib="webworker" />
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';

/**
 * The normalizer as the runtime worker will run it: in a dedicated worker, the codecs fetching their
 * wasm as the bundler serves it. The images are drawn with OffscreenCanvas, the output read back
 * with createImageBitmap: the browser's own codecs check the WASM ones.
 */
export type WorkerReport = {
  wasmBefore: string[];
  wasmAfter: string[];
  converted: {
    mimeType: string;
    width: number;
    height: number;
    kept: boolean;
    decoded: number[];
    white: number[];
  };
  kept: { mimeType: string; kept: boolean; same: boolean };
};

const scope = self as unknown as DedicatedWorkerGlobalScope;
const wasmFetched = () =>
  performance
    .getEntriesByType('resource')
    .map((e) => e.name.split('?')[0]!.split('/').pop()!)
    .filter((name) => name.endsWith('.wasm'));

async function drawn(
  width: number,
  height: number,
  type: string,
  draw: (c: OffscreenCanvasRenderingContext2D) => void,
) {
  const canvas = new OffscreenCanvas(width, height);
  draw(canvas.getContext('2d')!);
  const blob = await canvas.convertToBlob({ type });
  if (blob.type !== type) throw new Error(`${type} is not encoded here`);
  return new Uint8Array(await blob.arrayBuffer());
}

async function readBack(bytes: Uint8Array, x: number, y: number) {
  const bitmap = await createImageBitmap(new Blob([bytes as Uint8Array<ArrayBuffer>]));
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const context = canvas.getContext('2d')!;
  context.drawImage(bitmap, 0, 0);
  return { size: [bitmap.width, bitmap.height], pixel: [...context.getImageData(x, y, 1, 1).data] };
}

scope.onmessage = async () => {
  try {
    const wasmBefore = wasmFetched();
    const normalizer = new JsquashImageNormalizer();
    // Left half left transparent, right half red.
    const png = await drawn(2000, 1000, 'image/png', (c) => {
      c.fillStyle = '#ff0000';
      c.fillRect(1000, 0, 1000, 1000);
    });
    const converted = await normalizer.normalize(png);
    const webp = await drawn(64, 48, 'image/webp', (c) => {
      c.fillStyle = '#2060a0';
      c.fillRect(0, 0, 64, 48);
    });
    const kept = await normalizer.normalize(webp);
    if (!converted.ok || !kept.ok) throw new Error('refused');
    const back = await readBack(converted.value.bytes, 320, 320);
    const { bytes: _, ...value } = converted.value;
    scope.postMessage({
      wasmBefore,
      wasmAfter: wasmFetched(),
      converted: { ...value, decoded: back.size, white: back.pixel },
      kept: { mimeType: kept.value.mimeType, kept: kept.value.kept, same: kept.value.bytes === webp },
    } satisfies WorkerReport);
  } catch (e) {
    scope.postMessage({ error: e instanceof Error ? `${e.message}\n${e.stack}` : String(e) });
  }
};
