import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { WebPModule } from '@jsquash/webp/codec/enc/webp_enc.js';
import { jsquashCodecs, type CodecWasm, type Rgba, type WasmLoader } from '$lib/adapters/images/codecs';
import type { DecodableFormat } from '$lib/domain/image';
import { exifSegment } from './image-headers';

const require = createRequire(import.meta.url);
const compile = async (spec: string) => WebAssembly.compile(await readFile(require.resolve(spec)));

const WASM: Record<CodecWasm, string> = {
  png: '@jsquash/png/codec/pkg/squoosh_png_bg.wasm',
  'jpeg-decode': '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm',
  'jpeg-encode': '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm',
  'webp-decode': '@jsquash/webp/codec/dec/webp_dec.wasm',
  resize: '@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm',
};

/** The codecs' wasm compiled from node_modules: in Node they have no URL to fetch it from. */
export const nodeWasm: WasmLoader = (name) => compile(WASM[name]);

const codecs = jsquashCodecs(nodeWasm);

/** An image whose pixel (x, y) is `colour(x, y)`, RGBA. */
export function rgba(width: number, height: number, colour: (x: number, y: number) => number[]): Rgba {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) data.set(colour(x, y), (y * width + x) * 4);
  return { data, width, height };
}

/** Opaque noise around mid-grey (a fixed sequence): what compresses worst. */
export function noise(width: number, height: number, amplitude = 127): Rgba {
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16;
  return rgba(width, height, () =>
    [0, 0, 0].map(() => 128 + (next() % (2 * amplitude + 1)) - amplitude).concat(255),
  );
}

export const pixel = (image: Rgba, x: number, y: number) => [
  ...image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 4),
];

export async function encodePng(image: Rgba): Promise<Uint8Array> {
  const png = await import('@jsquash/png/encode.js');
  await png.init(await nodeWasm('png'));
  return new Uint8Array(await png.default(image as ImageData));
}

export const encodeJpeg = (image: Rgba, quality: number) => codecs.encodeJpeg(image, quality);

export async function encodeWebp(image: Rgba, lossless = false): Promise<Uint8Array> {
  const [{ initEmscriptenModule }, { default: factory }, { defaultOptions }] = await Promise.all([
    import('@jsquash/webp/utils.js'),
    // The plain build: the SIMD one needs its own wasm.
    import('@jsquash/webp/codec/enc/webp_enc.js'),
    import('@jsquash/webp/meta.js'),
  ]);
  const module: WebPModule = await initEmscriptenModule(
    factory,
    await compile('@jsquash/webp/codec/enc/webp_enc.wasm'),
  );
  const out = module.encode(image.data, image.width, image.height, {
    ...defaultOptions,
    lossless: lossless ? 1 : 0,
  });
  if (!out) throw new Error('WebP encoding failed');
  return out;
}

export async function decode(format: DecodableFormat, bytes: Uint8Array): Promise<Rgba> {
  const image = await codecs.decode(format, bytes);
  if (!image) throw new Error(`not a ${format}`);
  return image;
}

/** The JPEG with an APP1 EXIF segment holding `orientation` spliced in after SOI. */
export const withOrientation = (jpeg: Uint8Array, orientation: number) =>
  new Uint8Array([...jpeg.subarray(0, 2), ...exifSegment(orientation), ...jpeg.subarray(2)]);
