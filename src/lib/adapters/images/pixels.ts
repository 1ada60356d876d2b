import type { Rgba } from './codecs';

/** Composites every pixel onto white, in place: what a JPEG (no alpha) shows of a transparent one. */
export function flattenOntoWhite(data: Uint8ClampedArray): void {
  for (let i = 3; i < data.length; i += 4) {
    const alpha = data[i]!;
    if (alpha === 255) continue;
    const white = 255 - alpha;
    data[i - 3] = (data[i - 3]! * alpha) / 255 + white;
    data[i - 2] = (data[i - 2]! * alpha) / 255 + white;
    data[i - 1] = (data[i - 1]! * alpha) / 255 + white;
    data[i] = 255;
  }
}

/**
 * The upright image for an EXIF orientation (1 to 8). The source pixel of output pixel (x, y) is
 * at `base + x * dx + y * dy` in the stored image, whose size is `width` × `height`.
 */
function walk(orientation: number, width: number, height: number): { base: number; dx: number; dy: number } {
  const last = (height - 1) * width;
  switch (orientation) {
    case 2: // mirrored
      return { base: width - 1, dx: -1, dy: width };
    case 3: // turned 180°
      return { base: last + width - 1, dx: -1, dy: -width };
    case 4: // mirrored vertically
      return { base: last, dx: 1, dy: -width };
    case 5: // transposed
      return { base: 0, dx: width, dy: 1 };
    case 6: // to be turned 90° clockwise
      return { base: last, dx: -width, dy: 1 };
    case 7: // transversed
      return { base: last + width - 1, dx: -width, dy: -1 };
    case 8: // to be turned 90° counter-clockwise
      return { base: width - 1, dx: width, dy: -1 };
    default: // 1: as stored
      return { base: 0, dx: 1, dy: width };
  }
}

export function orient(image: Rgba, orientation: number): Rgba {
  if (orientation === 1) return image;
  const { width, height } = image;
  const [outWidth, outHeight] = orientation >= 5 ? [height, width] : [width, height];
  const { base, dx, dy } = walk(orientation, width, height);
  const from = new Uint32Array(image.data.buffer, image.data.byteOffset, width * height);
  const to = new Uint32Array(width * height);
  for (let y = 0, i = 0; y < outHeight; y++) {
    for (let x = 0, at = base + y * dy; x < outWidth; x++, at += dx) to[i++] = from[at]!;
  }
  return { data: new Uint8ClampedArray(to.buffer), width: outWidth, height: outHeight };
}
