/**
 * Images the page shows (workspace files, tool results' images): which bytes are shown as an
 * image, and how a stored image is fetched for it. Images reach an `<img>` only through `blob:`
 * URLs made here (the page's policy allows `img-src 'self' data: blob:`), never from a remote URL.
 */
import { decodeBase64 } from '$lib/domain/base64';
import { getContext, setContext } from 'svelte';
import { sniffImage } from '$lib/domain/image';
import { describeError } from '../errors';

/**
 * Raster formats a browser draws without running anything. SVG is not among them: it can carry
 * script, so an SVG file is shown as the text it is.
 */
const VIEWABLE = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif' } as const;

/**
 * The type to show `bytes` as an image with, from their first bytes (a file's name or a
 * recorded type is not trusted); `null` when they are not a PNG, JPEG, WebP or GIF.
 */
export function viewableImageType(bytes: Uint8Array): string | null {
  const { format } = sniffImage(bytes);
  return format === 'unknown' ? null : VIEWABLE[format];
}

/** A stored image as the page can show it, or why it cannot. */
export type ImageLoad =
  | { kind: 'ok'; bytes: Uint8Array; mimeType: string }
  /** The file is gone (retention removed the run's tool results, or the workspace was cleared). */
  | { kind: 'missing' }
  | { kind: 'error'; message: string };

const MISSING = new Set(['workspace.file_not_found', 'workspace.path_not_found']);

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([a-z0-9+/=\s]*)$/i;

/** The bytes of a `data:` image URL (images the person attached are kept that way), or null. */
export function dataUrlBytes(url: string): Uint8Array | null {
  const match = DATA_URL.exec(url);
  if (!match) return null;
  return decodeBase64(match[2]!);
}

/**
 * An image by its recorded path: a `data:` URL is decoded here, anything else is read with
 * `read` (a workspace or run file RPC). A file that is not there any more is `missing`; bytes
 * that are not a raster image the page shows are an error.
 */
export async function loadImage(
  path: string,
  read: (path: string) => Promise<Uint8Array>,
): Promise<ImageLoad> {
  let bytes: Uint8Array | null;
  if (path.startsWith('data:')) {
    bytes = dataUrlBytes(path);
    if (!bytes) return { kind: 'error', message: 'The image data could not be read.' };
  } else {
    try {
      bytes = await read(path);
    } catch (e) {
      const error = describeError(e);
      if (MISSING.has(error.code)) return { kind: 'missing' };
      return { kind: 'error', message: error.message };
    }
  }
  const mimeType = viewableImageType(bytes);
  if (!mimeType) return { kind: 'error', message: 'The file is not a PNG, JPEG, WebP or GIF image.' };
  return { kind: 'ok', bytes, mimeType };
}

/** A `blob:` URL for shown bytes; the caller revokes it when the image goes. */
export const imageUrl = (bytes: Uint8Array, mimeType: string): string =>
  URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: mimeType }));

/** The last segment of a path (an image's alt text). */
export const fileName = (path: string): string => path.split('/').at(-1) || path;

/** `800 × 600 px` */
export const pixelSize = (width: number, height: number): string => `${width} × ${height} px`;

/** Where the tool calls of a conversation get their images from (set by the page that knows the workspace). */
export type ImageSource = (path: string) => Promise<ImageLoad>;

const SOURCE = Symbol('image-source');
export const setImageSource = (source: ImageSource) => setContext(SOURCE, source);
export const getImageSource = (): ImageSource | undefined => getContext(SOURCE);
