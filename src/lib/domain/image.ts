/**
 * The image rule (tools.md §11): what happens to an image's bytes before a model sees them, decided
 * from its header alone. PNG, JPEG and WebP files within the size limits are kept byte for byte;
 * everything else that decodes is flattened onto white, scaled to a longer edge of at most 1280 px
 * and encoded as JPEG quality 85.
 *
 * A JPEG whose EXIF orientation is not 1 is always converted, so that its pixels are upright: model
 * APIs do not promise to honour EXIF, and a kept file would reach them sideways.
 */
import type { ImageDamage } from './image-integrity';
import type { ImageFormat, ImageInfo } from './image-headers';

export { sniffImage, type ImageFormat, type ImageInfo } from './image-headers';
export { soundImage, type ImageDamage } from './image-integrity';

export const IMAGE_LIMITS = {
  maxEdge: 1280,
  maxBytes: 1_000_000,
  jpegQuality: 85,
  /**
   * Refused before decoding above this. The largest phone cameras (8160 × 6120 = 49.9 MP) pass;
   * decoded RGBA takes 4 bytes a pixel, so at most 200 MB for the decoder's copy, which a worker can
   * hold. A 30,000 × 30,000 declaration in a small file (3.6 GB of pixels) cannot get through.
   */
  maxPixels: 50_000_000,
  /**
   * A longer side is refused above this even within `maxPixels`: such a strip (a 1 × 50,000,000
   * image passes the pixel limit) would shrink more than 12 times to reach 1280 px and come out as
   * a sliver; 16,384 is also where WebP (16,383) and many browser canvases stop.
   */
  maxDecodeEdge: 16_384,
} as const;

export type DecodableFormat = 'png' | 'jpeg' | 'webp';
export type ImageRefusalKind = 'unsupported' | 'undecodable' | 'too_large' | 'bomb';
export type ImageRefusal = { kind: ImageRefusalKind; message: string };

export type ImagePlan =
  | { kind: 'keep' }
  /** Width and height of the JPEG to write, upright (after the EXIF orientation). */
  | { kind: 'convert'; width: number; height: number }
  | { kind: 'refuse'; reason: ImageRefusalKind; message: string };

export const IMAGE_MIME_TYPES = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
} as const satisfies Record<DecodableFormat, string>;

const NAMES: Record<Exclude<ImageFormat, 'unknown'>, string> = {
  png: 'PNG',
  jpeg: 'JPEG',
  webp: 'WebP',
  gif: 'GIF',
};

const count = (n: number) => n.toLocaleString('en-US');

const refuse = (reason: ImageRefusalKind, message: string): ImagePlan => ({
  kind: 'refuse',
  reason,
  message,
});

/** Orientations 5 to 8 turn the image a quarter turn: its upright width is its stored height. */
export const isQuarterTurn = (orientation: number | undefined) => (orientation ?? 1) >= 5;

/** Pure: keep, convert (to what size) or refuse, from the header and the file's size. */
export function planImage(info: ImageInfo, byteLength: number): ImagePlan {
  const { format, width, height } = info;
  if (format === 'unknown') {
    return refuse(
      'unsupported',
      'The file is not an image Hearth can pass on: only PNG, JPEG and WebP are supported, and its first bytes are none of these.',
    );
  }
  if (format === 'gif') {
    return refuse(
      'unsupported',
      'The image is a GIF, which Hearth cannot pass on: only PNG, JPEG and WebP are supported.',
    );
  }
  if (!width || !height) {
    return refuse(
      'undecodable',
      `The ${NAMES[format]} image could not be decoded: its header is damaged or cut short.`,
    );
  }
  const { maxEdge, maxBytes, maxPixels, maxDecodeEdge } = IMAGE_LIMITS;
  if (width > maxDecodeEdge || height > maxDecodeEdge || width * height > maxPixels) {
    return refuse(
      'bomb',
      `The image declares ${count(width)} × ${count(height)} pixels (${count(Math.round((width * height) / 1e6))} megapixels), ` +
        `more than Hearth decodes (at most ${count(maxPixels / 1e6)} megapixels and ${count(maxDecodeEdge)} pixels on a side), ` +
        'so it was refused without decoding it.',
    );
  }
  const [uprightWidth, uprightHeight] = isQuarterTurn(info.orientation) ? [height, width] : [width, height];
  const longer = Math.max(width, height);
  if (longer <= maxEdge && byteLength <= maxBytes && (info.orientation ?? 1) === 1) return { kind: 'keep' };
  const scale = Math.min(1, maxEdge / longer);
  return {
    kind: 'convert',
    width: Math.max(1, Math.round(uprightWidth * scale)),
    height: Math.max(1, Math.round(uprightHeight * scale)),
  };
}

/** The explanation for an image whose header was fine but whose data is not. */
export function undecodableImage(format: DecodableFormat, damage?: ImageDamage): ImageRefusal {
  const why =
    damage === 'truncated'
      ? 'the file is cut short'
      : damage === 'checksum'
        ? 'the file is damaged (a checksum does not match)'
        : "the file is damaged or uses a feature Hearth's decoder does not support";
  return { kind: 'undecodable', message: `The ${NAMES[format]} image could not be decoded: ${why}.` };
}

/** The explanation for an image whose converted JPEG is still over `maxBytes`. */
export function tooLargeImage(byteLength: number, width: number, height: number): ImageRefusal {
  return {
    kind: 'too_large',
    message:
      `The image is still ${count(byteLength)} bytes after conversion to a ${count(width)} × ${count(height)} JPEG, ` +
      `over Hearth's limit of ${count(IMAGE_LIMITS.maxBytes)} bytes.`,
  };
}
