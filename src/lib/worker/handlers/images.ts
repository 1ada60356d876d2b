import { imageDataUrl, MAX_UPLOAD_BYTES } from '$lib/domain/user-images';
import type { RuntimeContext } from '../context';
import type { ImageMethods } from '../protocol';
import type { Handlers } from '../rpc';

const megabytes = (n: number) =>
  `${(n / 1024 / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })} MB`;

/**
 * Images the person attaches, pastes or drops: the same normalization as tool images
 * (tools.md §11), here in the runtime worker. A refusal is for the person to read; a codec that
 * fails to load rejects (a system failure).
 */
export function imageHandlers(ctx: RuntimeContext): Handlers<ImageMethods, Record<never, never>> {
  return {
    methods: {
      async 'images.normalize'({ bytes }) {
        if (!(bytes instanceof Uint8Array)) {
          return { ok: false, refusal: { kind: 'unsupported', message: 'No image file was given.' } };
        }
        if (bytes.byteLength > MAX_UPLOAD_BYTES) {
          return {
            ok: false,
            refusal: {
              kind: 'too_large',
              message: `The file is ${megabytes(bytes.byteLength)}, more than the ${megabytes(MAX_UPLOAD_BYTES)} Hearth reads for an image.`,
            },
          };
        }
        const normalized = await ctx.images.normalize(bytes);
        if (!normalized.ok) return { ok: false, refusal: normalized.error };
        const { bytes: out, mimeType, width, height, kept } = normalized.value;
        return {
          ok: true,
          dataUrl: imageDataUrl(out, mimeType),
          mimeType,
          width,
          height,
          byteLength: out.byteLength,
          kept,
        };
      },
    },
    streams: {},
  };
}
