import type { ImageRefusal } from '$lib/domain/image';
import type { Result } from '$lib/domain/result';

export type { ImageRefusal, ImageRefusalKind } from '$lib/domain/image';

export type NormalizedImage = {
  /** The file's own bytes when `kept` (less any damaged ancillary PNG chunk), else the converted JPEG. */
  bytes: Uint8Array;
  mimeType: 'image/png' | 'image/jpeg' | 'image/webp';
  /** Upright size of `bytes`, in pixels. */
  width: number;
  height: number;
  kept: boolean;
};

/**
 * The one normalization of an image at ingestion (tools.md §11). A refusal is the image's fault and
 * is explained to the model; a rejected promise (a codec that cannot load, an encoder that fails) is
 * a system failure.
 */
export interface ImageNormalizer {
  normalize(bytes: Uint8Array): Promise<Result<NormalizedImage, ImageRefusal>>;
}
