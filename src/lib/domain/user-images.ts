/**
 * Images from the person (attached, pasted or dropped in a composer). Each went through the one
 * normalization (tools.md §11, `images.normalize` in the runtime worker) on the way in, and is kept
 * with its message as a data URL in `ImageRef.path`. The runtime takes a message's images only in
 * the form that normalization produces: PNG, JPEG or WebP that the rule keeps as it is.
 */
import { decodeBase64, encodeBase64 } from './base64';
import { hearthError, type HearthError } from './errors';
import { IMAGE_MIME_TYPES, planImage, sniffImage } from './image';
import type { ContentPart, ImageRef } from './model';
import { err, ok, type Result } from './result';

/** At most this many images go with one message. */
export const MAX_MESSAGE_IMAGES = 10;
/** Largest file the worker reads to normalize (a phone photo is far below). */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/** The mime types a normalized image has. */
export type UserImageMime = (typeof IMAGE_MIME_TYPES)[keyof typeof IMAGE_MIME_TYPES];

/** `data:<mime>;base64,<bytes>`. */
export const imageDataUrl = (bytes: Uint8Array, mimeType: string): string =>
  `data:${mimeType};base64,${encodeBase64(bytes)}`;

/**
 * Images a "Try" shows (a tool result's, before any normalization): those that are PNG, JPEG or
 * WebP by their bytes, whatever type they claimed, as data URLs; others are left out.
 */
export function previewImages(
  images: readonly { bytes: Uint8Array; label: string }[],
): { label: string; dataUrl: string }[] {
  return images.flatMap(({ bytes, label }) => {
    const format = sniffImage(bytes).format;
    return format === 'png' || format === 'jpeg' || format === 'webp'
      ? [{ label, dataUrl: imageDataUrl(bytes, IMAGE_MIME_TYPES[format]) }]
      : [];
  });
}

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/;

/** The bytes and type of a base64 data URL of an image, or null. */
export function parseImageDataUrl(url: string): { mimeType: string; bytes: Uint8Array } | null {
  const m = DATA_URL.exec(url);
  if (!m || m[2]!.length % 4 !== 0) return null;
  const bytes = decodeBase64(m[2]!);
  if (!bytes) return null;
  return { mimeType: m[1]!, bytes };
}

const invalid = (message: string) => err(hearthError('image.invalid', message));

/**
 * Pure: a person's image as the runtime keeps it (`{ path: dataUrl, mimeType }`), when it is what
 * the normalization gives: a PNG, JPEG or WebP data URL of the declared type that the image rule
 * keeps as it is (longer edge at most 1280 px, at most 1,000,000 bytes, upright). Anything else is
 * refused with a message: it was not normalized (`images.normalize` makes it so).
 */
export function checkUserImage(value: unknown): Result<ImageRef, HearthError> {
  const ref = value as Partial<ImageRef> | null;
  if (typeof ref !== 'object' || ref === null || typeof ref.path !== 'string') {
    return invalid('An attached image is not an image reference.');
  }
  const parsed = parseImageDataUrl(ref.path);
  if (!parsed) return invalid('An attached image is not a base64 data URL of an image.');
  const info = sniffImage(parsed.bytes);
  const format = info.format === 'unknown' || info.format === 'gif' ? null : info.format;
  if (!format || IMAGE_MIME_TYPES[format] !== parsed.mimeType) {
    return invalid('An attached image is not the PNG, JPEG or WebP file its data URL says it is.');
  }
  if (planImage(info, parsed.bytes.byteLength).kind !== 'keep') {
    return invalid(
      'An attached image was not normalized (at most 1280 px on its longer edge and 1,000,000 bytes, upright): normalize it first.',
    );
  }
  return ok({ path: ref.path, mimeType: parsed.mimeType });
}

/** Pure: every image of a message, checked (`checkUserImage`), at most `MAX_MESSAGE_IMAGES`. */
export function checkUserImages(values: readonly unknown[] = []): Result<ImageRef[], HearthError> {
  if (values.length > MAX_MESSAGE_IMAGES) {
    return invalid(`A message takes at most ${MAX_MESSAGE_IMAGES} images; this one has ${values.length}.`);
  }
  const refs: ImageRef[] = [];
  for (const value of values) {
    const checked = checkUserImage(value);
    if (!checked.ok) return checked;
    refs.push(checked.value);
  }
  return ok(refs);
}

/** Pure: the parts of the person's message: its images first (as models read best), then its text. */
export function userMessageParts(text: string, images: readonly ImageRef[] = []): ContentPart[] {
  const parts: ContentPart[] = images.map((image) => ({ type: 'image', image: { ...image } }));
  if (text !== '' || parts.length === 0) parts.push({ type: 'text', text });
  return parts;
}

/** Pure: the person's images in a message's parts, in order. */
export const imagesOfParts = (parts: readonly ContentPart[]): ImageRef[] =>
  parts.flatMap((p) => (p.type === 'image' ? [p.image] : []));

/** What the composer shows beside images when the model does not take them. */
export const NO_VISION_NOTICE =
  'This model does not take images: they will not be sent to it, only a note saying an image was attached.';
