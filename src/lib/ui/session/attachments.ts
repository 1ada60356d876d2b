/**
 * Images the person adds to a message in a composer (attach, paste, drop): each goes through the
 * runtime's one normalization (`images.normalize`, in the worker) and is attached, or refused with
 * a message that says why. Pure apart from the `normalize` it is given.
 */
import type { ImageRef } from '$lib/domain/model';
import { MAX_MESSAGE_IMAGES, MAX_UPLOAD_BYTES } from '$lib/domain/user-images';
import type { NormalizedUpload } from '$lib/worker/protocol';
import { describeError } from '../errors';

/** An image waiting in the composer for Send. */
export interface Attachment {
  id: number;
  /** The file's name, or how it arrived (`Pasted image`). */
  name: string;
  dataUrl: string;
  mimeType: string;
  width: number;
  height: number;
}

/** What `attachImages` needs of a file (a `File`, or a test's stand-in). */
export interface ImageFile {
  name: string;
  size: number;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export type Normalize = (bytes: Uint8Array) => Promise<NormalizedUpload>;

let nextId = 1;

const nameOf = (file: ImageFile, fallback: string) => file.name.trim() || fallback;

const megabytes = (n: number) => `${Math.round(n / 1024 / 1024)} MB`;

/**
 * Normalizes `files` one after the other (in the order given, so thumbnails keep it) while the
 * message has room (`room` more images). `fallback` names a file without a name (a pasted one).
 */
export async function attachImages(
  files: readonly ImageFile[],
  room: number,
  normalize: Normalize,
  fallback = 'The pasted image',
): Promise<{ attached: Attachment[]; refusals: string[] }> {
  const attached: Attachment[] = [];
  const refusals: string[] = [];
  for (const file of files) {
    const name = nameOf(file, fallback);
    if (attached.length >= room) {
      refusals.push(`${name} was not attached: a message takes at most ${MAX_MESSAGE_IMAGES} images.`);
      continue;
    }
    if (file.size > MAX_UPLOAD_BYTES) {
      refusals.push(
        `${name} was not attached: it is ${megabytes(file.size)}, more than the ${megabytes(MAX_UPLOAD_BYTES)} Hearth reads for an image.`,
      );
      continue;
    }
    try {
      const result = await normalize(new Uint8Array(await file.arrayBuffer()));
      if (result.ok) {
        const { dataUrl, mimeType, width, height } = result;
        attached.push({ id: nextId++, name, dataUrl, mimeType, width, height });
      } else {
        refusals.push(`${name} was not attached: ${result.refusal.message}`);
      }
    } catch (e) {
      refusals.push(`${name} could not be read: ${describeError(e).message}`);
    }
  }
  return { attached, refusals };
}

/** The files of a paste or drop (clipboard items that are files; text is left to the textarea). */
export function transferFiles(data: DataTransfer | null): File[] {
  if (!data) return [];
  const files = [...data.files];
  if (files.length > 0) return files;
  return [...data.items].flatMap((item) => {
    const file = item.kind === 'file' ? item.getAsFile() : null;
    return file ? [file] : [];
  });
}

/** Whether a drag carries files (to offer the drop). */
export const dragHasFiles = (data: DataTransfer | null): boolean =>
  !!data && [...data.types].includes('Files');

/** What a message stores of its attachments. */
export const imageRefs = (attachments: readonly Attachment[]): ImageRef[] =>
  attachments.map((a) => ({ path: a.dataUrl, mimeType: a.mimeType }));

/** The alt text of a thumbnail waiting to be sent. */
export const attachmentAlt = (a: Attachment, index: number): string =>
  `Image ${index + 1} to send: ${a.name} (${a.width} × ${a.height} px)`;

const KINDS: Record<string, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/webp': 'WebP',
  'image/gif': 'GIF',
};

/** `PNG` for `image/png`. */
export const imageKind = (mimeType: string): string => KINDS[mimeType] ?? mimeType;
