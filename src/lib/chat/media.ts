import type { JsonObject, JsonValue } from '$lib/domain/json';
import { isRecord } from './json-fields';

/**
 * Images of a chat message, kept SillyTavern's way in the message's `extra`: SillyTavern 1.13
 * and later keep a list `media: [{ url, type: 'image', title?, source? }]` (with `media_index`, the
 * one shown, and `inline_image: true`); older versions kept one `image` URL (and `image_swipes`),
 * which SillyTavern itself migrates into `media`. Hearth reads all three and writes `media`. A
 * Hearth image's `url` is a data URL; one from SillyTavern is usually a path on its server.
 */
export interface ChatImage {
  url: string;
  title?: string;
}

/** Pure: the message's images in order (media list, then older `image_swipes` and `image`), each once. */
export function messageImages(extra: JsonObject): ChatImage[] {
  const out: ChatImage[] = [];
  const add = (url: unknown, title?: unknown) => {
    if (typeof url !== 'string' || url === '' || out.some((i) => i.url === url)) return;
    out.push(typeof title === 'string' && title !== '' ? { url, title } : { url });
  };
  if (Array.isArray(extra.media)) {
    for (const item of extra.media) {
      if (isRecord(item) && (item.type === undefined || item.type === 'image')) add(item.url, item.title);
    }
  }
  if (Array.isArray(extra.image_swipes)) for (const url of extra.image_swipes) add(url);
  add(extra.image, extra.title);
  return out;
}

/** Pure: `extra` with `images` added to its `media` list, as SillyTavern adds uploaded files. */
export function withImages(extra: JsonObject, images: readonly ChatImage[]): JsonObject {
  if (images.length === 0) return extra;
  const media: JsonValue[] = Array.isArray(extra.media) ? [...extra.media] : [];
  for (const image of images) {
    const item: JsonObject = { url: image.url, type: 'image', source: 'upload' };
    if (image.title) item.title = image.title;
    media.push(item);
  }
  return { ...extra, media, media_index: media.length - 1, inline_image: true };
}
