import type { MozJPEGModule as JpegDecoder } from '@jsquash/jpeg/codec/dec/mozjpeg_dec.js';
import type { MozJPEGModule as JpegEncoder } from '@jsquash/jpeg/codec/enc/mozjpeg_enc.js';
import type { WebPModule } from '@jsquash/webp/codec/dec/webp_dec.js';
import type { DecodableFormat } from '$lib/domain/image';

/** The wasm files the normalizer can need, by name: what a `WasmLoader` is asked to compile. */
export type CodecWasm = 'png' | 'jpeg-decode' | 'jpeg-encode' | 'webp-decode' | 'resize';

/** Compiles one codec's wasm (Node, where the codecs cannot fetch their files). */
export type WasmLoader = (wasm: CodecWasm) => Promise<WebAssembly.Module>;

export type Rgba = { data: Uint8ClampedArray<ArrayBuffer>; width: number; height: number };

/** The codecs, each loaded on first use: a rejected promise means a codec could not load. */
export interface Codecs {
  /** Null when the bytes do not decode. */
  decode(format: DecodableFormat, bytes: Uint8Array): Promise<Rgba | null>;
  resize(image: Rgba, width: number, height: number): Promise<Rgba>;
  encodeJpeg(image: Rgba, quality: number): Promise<Uint8Array>;
}

/** Loads once; a failed load is tried again next time. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((e: unknown) => {
      loading = undefined;
      throw e;
    }));
}

/**
 * The @jsquash codecs, imported on first use so the worker's bundle pays for them only when an
 * image arrives. Without `loadWasm` each codec fetches the wasm file its bundler emitted beside it
 * (`new URL(…, import.meta.url)`).
 *
 * The emscripten codecs (JPEG, WebP) are instantiated through `initEmscriptenModule`, the helper
 * their `init` wraps: it returns the module's promise, so a codec that cannot load fails here,
 * never later as an image that "does not decode". Their modules are typed here: the `EmscriptenWasm`
 * namespace their .d.ts files build on is declared nowhere TypeScript looks, so it reads as `any`.
 *
 * Resize imports only its own wasm: the package's index also pulls in the hqx and magic-kernel
 * wasm (154 KB) that `triangle` never uses.
 */
export function jsquashCodecs(loadWasm?: WasmLoader): Codecs {
  const wasm = async (name: CodecWasm) => loadWasm?.(name);
  // The codecs copy their input into their own memory, whatever kind of buffer holds it.
  const source = (bytes: Uint8Array) => bytes as Uint8Array<ArrayBuffer>;
  const decoders: Record<DecodableFormat, () => Promise<(bytes: Uint8Array) => Promise<Rgba | null>>> = {
    png: once(async () => {
      const codec = await import('@jsquash/png/decode.js');
      await codec.init(await wasm('png'));
      return (bytes) => codec.default(bytes.slice().buffer);
    }),
    jpeg: once(async () => {
      const [{ initEmscriptenModule }, { default: factory }] = await Promise.all([
        import('@jsquash/jpeg/utils.js'),
        import('@jsquash/jpeg/codec/dec/mozjpeg_dec.js'),
      ]);
      const module: JpegDecoder = await initEmscriptenModule(factory, await wasm('jpeg-decode'));
      // Orientation is applied by the normalizer, after scaling, on fewer pixels.
      return async (bytes) => module.decode(source(bytes), false);
    }),
    webp: once(async () => {
      const [{ initEmscriptenModule }, { default: factory }] = await Promise.all([
        import('@jsquash/webp/utils.js'),
        import('@jsquash/webp/codec/dec/webp_dec.js'),
      ]);
      const module: WebPModule = await initEmscriptenModule(factory, await wasm('webp-decode'));
      return async (bytes) => module.decode(source(bytes));
    }),
  };
  const resizer = once(async () => {
    const codec = await import('@jsquash/resize/lib/resize/pkg/squoosh_resize.js');
    await codec.default(await wasm('resize'));
    return codec.resize;
  });
  const jpegEncoder = once(async () => {
    const [{ initEmscriptenModule }, { default: factory }, { defaultOptions }] = await Promise.all([
      import('@jsquash/jpeg/utils.js'),
      import('@jsquash/jpeg/codec/enc/mozjpeg_enc.js'),
      import('@jsquash/jpeg/meta.js'),
    ]);
    const module: JpegEncoder = await initEmscriptenModule(factory, await wasm('jpeg-encode'));
    return { module, defaultOptions };
  });

  return {
    async decode(format, bytes) {
      const decode = await decoders[format]();
      try {
        return await decode(bytes);
      } catch {
        // libjpeg's exit(1), libwebp's null, the PNG decoder's thrown error: the bytes' fault.
        return null;
      }
    },
    async resize({ data, width: fromWidth, height: fromHeight }, width, height) {
      const resize = await resizer();
      const input = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      // Triangle is the cheapest filter; the image is opaque by now (premultiplying would change
      // nothing), and it is scaled in gamma space as browsers scale (linear light costs 100 ms more
      // on 6 MP).
      const scaled = resize(input, fromWidth, fromHeight, width, height, 0, false, false);
      return { data: scaled as Uint8ClampedArray<ArrayBuffer>, width, height };
    },
    async encodeJpeg({ data, width, height }, quality) {
      const { module, defaultOptions } = await jpegEncoder();
      // Baseline, not mozjpeg's default progressive: half the time for a file about 7% larger.
      return module.encode(data, width, height, { ...defaultOptions, quality, progressive: false });
    },
  };
}
