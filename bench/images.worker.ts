/// <reference lib="webworker" />
import { jsquashCodecs } from '$lib/adapters/images/codecs';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { flattenOntoWhite, orient } from '$lib/adapters/images/pixels';
import { IMAGE_LIMITS, planImage, sniffImage, soundImage } from '$lib/domain/image';

/**
 * Issue 15 in a dedicated worker: the normalizer on a 3000 × 2000 JPEG and a 2000 × 2000 PNG with
 * alpha, beside the browser's own path (createImageBitmap resizing, OffscreenCanvas encoding), and
 * the normalizer's stages one by one. The sources are drawn and encoded by the browser.
 */
const WARMUP = 3;
const ITERATIONS = 20;

const scope = self as unknown as DedicatedWorkerGlobalScope;
// The dev server serves every module as its own file: keep all their entries.
performance.setResourceTimingBufferSize(10_000);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1]!;
const f = (x: number) => x.toFixed(1);
const both = (label: string, xs: number[]) =>
  `${label}_median_ms=${f(median(xs))} ${label}_p95_ms=${f(p95(xs))}`;

async function timed<T>(run: () => Promise<T> | T): Promise<[number, T]> {
  const started = performance.now();
  const value = await run();
  return [performance.now() - started, value];
}

/** A fixed pseudo-random sequence, so every run encodes the same pictures. */
function lcg(seed: number) {
  return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
}

/** Smooth gradients and shapes with sensor-like noise: compresses like a photo. */
function photo(width: number, height: number): ImageData {
  const next = lcg(1);
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i += 4) {
      const n = next() % 24;
      const ring = Math.hypot(x - width / 3, y - height / 2) % 400 < 200 ? 40 : 0;
      data[i] = (x * 255) / width + n + ring;
      data[i + 1] = (y * 255) / height + n;
      data[i + 2] = 128 + Math.sin(x / 90) * 60 + n - ring;
      data[i + 3] = 255;
    }
  }
  return new ImageData(data, width, height);
}

/** A chart-like picture on a transparent ground: opaque shapes, soft edges, empty areas. */
function translucent(width: number, height: number): ImageData {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i += 4) {
      const d = Math.hypot(x - width / 2, y - height / 2) / (width / 2);
      data[i] = (x * 255) / width;
      data[i + 1] = 90;
      data[i + 2] = (y * 255) / height;
      data[i + 3] = d > 1 ? 0 : d > 0.8 ? 255 * (1 - d) * 5 : x % 200 < 100 ? 255 : 160;
    }
  }
  return new ImageData(data, width, height);
}

async function encoded(image: ImageData, type: string, quality?: number): Promise<Uint8Array> {
  const canvas = new OffscreenCanvas(image.width, image.height);
  canvas.getContext('2d')!.putImageData(image, 0, 0);
  const blob = await canvas.convertToBlob({ type, quality });
  if (blob.type !== type) throw new Error(`this browser does not encode ${type}`);
  return new Uint8Array(await blob.arrayBuffer());
}

/** The browser's path to the same result: decode and scale, flatten onto white, JPEG 0.85. */
async function native(bytes: Uint8Array, width: number, height: number): Promise<Uint8Array> {
  const bitmap = await createImageBitmap(new Blob([bytes as Uint8Array<ArrayBuffer>]), {
    resizeWidth: width,
    resizeHeight: height,
    resizeQuality: 'high',
  });
  const canvas = new OffscreenCanvas(width, height);
  const context = canvas.getContext('2d')!;
  context.fillStyle = '#fff';
  context.fillRect(0, 0, width, height);
  context.drawImage(bitmap, 0, 0);
  bitmap.close();
  const blob = await canvas.convertToBlob({ type: 'image/jpeg', quality: IMAGE_LIMITS.jpegQuality / 100 });
  if (blob.type !== 'image/jpeg') throw new Error('no JPEG encoder');
  return new Uint8Array(await blob.arrayBuffer());
}

type Stages = Record<
  'check' | 'decode' | 'flatten' | 'resize' | 'orient' | 'encode' | 'encodeProgressive',
  number[]
>;

/** The normalizer's steps taken one at a time, with the same codecs. */
async function stages(bytes: Uint8Array, width: number, height: number): Promise<Stages> {
  const codecs = jsquashCodecs();
  const out: Stages = {
    check: [],
    decode: [],
    flatten: [],
    resize: [],
    orient: [],
    encode: [],
    encodeProgressive: [],
  };
  const format = sniffImage(bytes).format as 'png' | 'jpeg';
  const progressive = await import('@jsquash/jpeg/encode.js');
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const [check] = await timed(() => soundImage(bytes, sniffImage(bytes).format));
    const [decode, image] = await timed(() => codecs.decode(format, bytes));
    const [flatten] = await timed(() => format === 'jpeg' || flattenOntoWhite(image!.data));
    const [resize, scaled] = await timed(() => codecs.resize(image!, width, height));
    const [turn, upright] = await timed(() => orient(scaled, 6));
    const [encode] = await timed(() => codecs.encodeJpeg(scaled, IMAGE_LIMITS.jpegQuality));
    const [encodeProgressive] = await timed(() =>
      progressive.default(scaled as ImageData, { quality: IMAGE_LIMITS.jpegQuality }),
    );
    if (i < WARMUP || !upright) continue;
    out.check.push(check);
    out.decode.push(decode);
    out.flatten.push(flatten);
    out.resize.push(resize);
    out.orient.push(turn);
    out.encode.push(encode);
    out.encodeProgressive.push(encodeProgressive);
  }
  return out;
}

type Loaded = { name: string; bytes: number };
const codecFiles = (): Loaded[] =>
  performance
    .getEntriesByType('resource')
    .filter((e) => e.name.includes('@jsquash'))
    .map((e) => ({
      name: e.name.split('?')[0]!.split('/').pop()!,
      bytes: (e as PerformanceResourceTiming).decodedBodySize,
    }));

scope.onmessage = async () => {
  try {
    const lines: string[] = [];
    const loadedBefore = codecFiles();
    const sources = [
      { label: 'jpeg-3000x2000', bytes: await encoded(photo(3000, 2000), 'image/jpeg', 0.92) },
      { label: 'png-alpha-2000x2000', bytes: await encoded(translucent(2000, 2000), 'image/png') },
    ];
    const normalizer = new JsquashImageNormalizer();
    const first: number[] = [];
    for (const { bytes } of sources) first.push((await timed(() => normalizer.normalize(bytes)))[0]);
    const loaded = codecFiles();
    const sum = (files: Loaded[], ext: string) =>
      files.filter((x) => x.name.endsWith(ext)).reduce((n, x) => n + x.bytes, 0);
    lines.push(
      `RESULT images-chromium-worker-first-use codec_files_before=${loadedBefore.length} ` +
        `first_jpeg_ms=${f(first[0]!)} first_png_ms=${f(first[1]!)} ` +
        `wasm_files=${loaded
          .filter((x) => x.name.endsWith('.wasm'))
          .map((x) => x.name)
          .join(',')} ` +
        `wasm_kb=${f(sum(loaded, '.wasm') / 1024)} dev_js_files=${loaded.filter((x) => x.name.endsWith('.js')).length} ` +
        `dev_js_kb=${f(sum(loaded, '.js') / 1024)}`,
    );

    for (const { label, bytes } of sources) {
      const plan = planImage(sniffImage(bytes), bytes.byteLength);
      if (plan.kind !== 'convert') throw new Error(`${label} would not be converted`);
      const lanes = {
        jsquash: async () => {
          const result = await normalizer.normalize(bytes);
          if (!result.ok) throw new Error(result.error.message);
          return result.value.bytes;
        },
        native: () => native(bytes, plan.width, plan.height),
      };
      const times: Record<keyof typeof lanes, number[]> = { jsquash: [], native: [] };
      const sizes: Record<keyof typeof lanes, number> = { jsquash: 0, native: 0 };
      for (let i = 0; i < WARMUP + ITERATIONS; i++) {
        const order = i % 2 ? (['native', 'jsquash'] as const) : (['jsquash', 'native'] as const);
        for (const lane of order) {
          const [ms, out] = await timed(lanes[lane]);
          sizes[lane] = out.byteLength;
          if (i >= WARMUP) times[lane].push(ms);
        }
      }
      lines.push(
        `RESULT images-chromium-worker source=${label} in_bytes=${bytes.byteLength} out=${plan.width}x${plan.height} ` +
          `iterations=${ITERATIONS} ${both('jsquash', times.jsquash)} jsquash_out_bytes=${sizes.jsquash} ` +
          `${both('native', times.native)} native_out_bytes=${sizes.native} goal_ms=400 ` +
          `goal_met=${median(times.jsquash) <= 400 && p95(times.jsquash) <= 400}`,
      );
      const s = await stages(bytes, plan.width, plan.height);
      lines.push(
        `RESULT images-chromium-worker-stages source=${label} ` +
          Object.entries(s)
            .map(([stage, xs]) => `${stage}_median_ms=${f(median(xs))}`)
            .join(' '),
      );
    }
    scope.postMessage({ lines });
  } catch (e) {
    scope.postMessage({ error: e instanceof Error ? `${e.message}\n${e.stack}` : String(e) });
  }
};
