import {
  IMAGE_LIMITS,
  IMAGE_MIME_TYPES,
  isQuarterTurn,
  planImage,
  sniffImage,
  soundImage,
  tooLargeImage,
  undecodableImage,
  type DecodableFormat,
} from '$lib/domain/image';
import { err, ok, type Result } from '$lib/domain/result';
import type { ImageNormalizer, ImageRefusal, NormalizedImage } from '$lib/ports/images';
import { jsquashCodecs, type Codecs, type Rgba, type WasmLoader } from './codecs';
import { flattenOntoWhite, orient } from './pixels';

export type JsquashNormalizerOptions = {
  /** Compiles the codecs' wasm; without it they fetch their own files (the browser). */
  loadWasm?: WasmLoader;
};

/**
 * tools.md §11 with the @jsquash codecs. Every image is decoded, a kept one too: its bytes go to
 * the provider as they are, and one that does not decode would fail the request there.
 */
export class JsquashImageNormalizer implements ImageNormalizer {
  readonly #codecs: Codecs;

  constructor(options: JsquashNormalizerOptions = {}) {
    this.#codecs = jsquashCodecs(options.loadWasm);
  }

  async normalize(given: Uint8Array): Promise<Result<NormalizedImage, ImageRefusal>> {
    const info = sniffImage(given);
    const plan = planImage(info, given.byteLength);
    if (plan.kind === 'refuse') return err({ kind: plan.reason, message: plan.message });
    // planImage refuses every other format.
    const format = info.format as DecodableFormat;
    const sound = soundImage(given, format);
    if (!sound.ok) return err(undecodableImage(format, sound.error));
    const bytes = sound.value;
    const image = await this.#codecs.decode(format, bytes);
    if (!image || image.width !== info.width || image.height !== info.height)
      return err(undecodableImage(format));
    if (plan.kind === 'keep') {
      const { width, height } = image;
      return ok({ bytes, mimeType: IMAGE_MIME_TYPES[format], width, height, kept: true });
    }
    const { width, height } = plan;
    const jpeg = await this.#convert(image, format === 'jpeg', info.orientation ?? 1, width, height);
    if (jpeg.byteLength > IMAGE_LIMITS.maxBytes) return err(tooLargeImage(jpeg.byteLength, width, height));
    return ok({ bytes: jpeg, mimeType: 'image/jpeg', width, height, kept: false });
  }

  /** Flattens, scales (in stored orientation: fewer pixels to turn), turns upright, encodes. */
  async #convert(image: Rgba, opaque: boolean, orientation: number, width: number, height: number) {
    if (!opaque) flattenOntoWhite(image.data);
    const [storedWidth, storedHeight] = isQuarterTurn(orientation) ? [height, width] : [width, height];
    const scaled =
      storedWidth === image.width && storedHeight === image.height
        ? image
        : await this.#codecs.resize(image, storedWidth, storedHeight);
    return this.#codecs.encodeJpeg(orient(scaled, orientation), IMAGE_LIMITS.jpegQuality);
  }
}
