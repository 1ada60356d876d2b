import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_IMAGES, MAX_UPLOAD_BYTES } from '$lib/domain/user-images';
import {
  attachImages,
  attachmentAlt,
  imageKind,
  imageRefs,
  type ImageFile,
} from '$lib/ui/session/attachments';
import type { NormalizedUpload } from '$lib/worker/protocol';

const file = (name: string, bytes: number[] = [1, 2, 3], size = bytes.length): ImageFile => ({
  name,
  size,
  arrayBuffer: async () => new Uint8Array(bytes).buffer,
});

/** Accepts files starting with 1, refuses 2 (a GIF), throws on 3 (a codec that failed). */
const normalize = async (bytes: Uint8Array): Promise<NormalizedUpload> => {
  if (bytes[0] === 1)
    return {
      ok: true,
      dataUrl: `data:image/png;base64,${bytes.length}`,
      mimeType: 'image/png',
      width: 4,
      height: 3,
      byteLength: bytes.length,
      kept: true,
    };
  if (bytes[0] === 2) return { ok: false, refusal: { kind: 'unsupported', message: 'The image is a GIF.' } };
  throw new Error('codec failed');
};

describe('composer attachments', () => {
  it('attaches what the normalization keeps, in order, and says why the rest was not attached', async () => {
    const result = await attachImages(
      [file('a.png'), file('b.gif', [2]), file('', [1, 1]), file('c.png', [3])],
      MAX_MESSAGE_IMAGES,
      normalize,
    );
    expect(result.attached.map((a) => [a.name, a.dataUrl])).toEqual([
      ['a.png', 'data:image/png;base64,3'],
      ['The pasted image', 'data:image/png;base64,2'],
    ]);
    expect(result.refusals).toEqual([
      'b.gif was not attached: The image is a GIF.',
      'c.png could not be read: codec failed',
    ]);
    expect(imageRefs(result.attached)).toEqual([
      { path: 'data:image/png;base64,3', mimeType: 'image/png' },
      { path: 'data:image/png;base64,2', mimeType: 'image/png' },
    ]);
    expect(attachmentAlt(result.attached[0]!, 0)).toBe('Image 1 to send: a.png (4 × 3 px)');
  });

  it('stops at the room left in the message and refuses huge files before reading them', async () => {
    let read = 0;
    const huge: ImageFile = {
      name: 'huge.png',
      size: MAX_UPLOAD_BYTES + 1,
      arrayBuffer: async () => (read++, new ArrayBuffer(1)),
    };
    const result = await attachImages([huge, file('a.png'), file('b.png')], 1, normalize);
    expect(result.attached.map((a) => a.name)).toEqual(['a.png']);
    expect(read).toBe(0);
    expect(result.refusals[0]).toMatch(/^huge\.png was not attached: it is 50 MB, more than the 50 MB/);
    expect(result.refusals[1]).toBe(
      `b.png was not attached: a message takes at most ${MAX_MESSAGE_IMAGES} images.`,
    );
  });

  it('names image types as people know them', () => {
    expect(['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/avif'].map(imageKind)).toEqual([
      'PNG',
      'JPEG',
      'WebP',
      'GIF',
      'image/avif',
    ]);
  });
});
