/** Image bytes in the page: their type, and uploads turned into what the worker keeps. */

/** The image type of `bytes` by its first bytes (avatars are PNG, JPEG, WebP or GIF). */
export function imageType(bytes: Uint8Array): string {
  const at = (i: number, ...b: number[]) => b.every((x, k) => bytes[i + k] === x);
  if (at(0, 0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp';
  if (at(0, 0x47, 0x49, 0x46)) return 'image/gif';
  return 'application/octet-stream';
}

export const fileBytes = async (file: Blob): Promise<Uint8Array> => new Uint8Array(await file.arrayBuffer());

/** Largest side of an avatar converted to PNG (cards are usually 400x600 or 512x768). */
const MAX_SIDE = 1024;

/**
 * A character avatar as PNG bytes (cards carry their data in a PNG): a PNG is kept as it is, any
 * other image the browser can decode is drawn into a canvas and written as PNG.
 */
export async function avatarPng(file: Blob): Promise<Uint8Array> {
  const bytes = await fileBytes(file);
  if (imageType(bytes) === 'image/png') return bytes;
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    throw new Error('That file is not an image this browser can read.');
  }
  const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  canvas.getContext('2d')?.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/png'));
  if (!blob) throw new Error('The image could not be converted to PNG.');
  return fileBytes(blob);
}
