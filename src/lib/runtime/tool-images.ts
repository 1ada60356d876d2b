import { encodeBase64 } from '$lib/domain/base64';
import { HearthFailure } from '$lib/domain/errors';
import type { ContentPart, ImageRef, ModelRequest } from '$lib/domain/model';
import { imageDataUrl } from '$lib/domain/user-images';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { ImageNormalizer } from '$lib/ports/images';
import type { Workspace } from '$lib/ports/workspace';
import type { ToolImage } from '$lib/tools/tool';

export interface IngestedImages {
  /** The stored images, in return order: what results, audit and history keep (tools.md §11). */
  refs: ImageRef[];
  /** One line per image that could not be kept, in return order, for the end of the result. */
  notes: string[];
}

/**
 * What "Try it" on the servers and extensions pages shows of a result's images: the same
 * normalization as a run, so an image a run would refuse is reported as not kept here too.
 */
export async function previewToolImages(
  images: readonly ToolImage[],
  normalizer: ImageNormalizer,
): Promise<{ images: { label: string; dataUrl: string }[]; notes: string[] }> {
  const shown: { label: string; dataUrl: string }[] = [];
  const notes: string[] = [];
  for (const image of images) {
    const normalized = await normalizer.normalize(image.bytes);
    if (!normalized.ok) notes.push(notKept(image.label, normalized.error.message));
    else
      shown.push({
        label: image.label,
        dataUrl: imageDataUrl(normalized.value.bytes, normalized.value.mimeType),
      });
  }
  return { images: shown, notes };
}

const notKept = (label: string, why: string) => `${capitalize(label)} was not kept: ${why}`;

const EXTENSION = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' } as const;

/**
 * Tool images at ingestion (tools.md §11): each is normalized once and stored beside its
 * result under the read-only `tool-results/` (`<result stem>.image-<n>.<ext>`). An image that
 * cannot be decoded or stays too large is explained, and the rest is kept; a failure to encode
 * or store is a system failure (it throws).
 */
export async function ingestToolImages(
  images: readonly ToolImage[],
  deps: { normalizer: ImageNormalizer; workspace: Workspace; resultPath: WorkspacePath },
): Promise<IngestedImages> {
  const refs: ImageRef[] = [];
  const notes: string[] = [];
  const stem = deps.resultPath.replace(/\.json$/, '');
  for (const [i, image] of images.entries()) {
    const normalized = await deps.normalizer.normalize(image.bytes);
    if (!normalized.ok) {
      notes.push(notKept(image.label, normalized.error.message));
      continue;
    }
    const { bytes, mimeType } = normalized.value;
    const path = orThrow(parseWorkspacePath(`${stem}.image-${i + 1}.${EXTENSION[mimeType]}`));
    const written = await deps.workspace.write(path, bytes, { kind: 'absent' });
    if (!written.ok) {
      throw new HearthFailure({
        code: 'storage.failed',
        message: `Could not store the image ${path}: ${written.error.message}`,
      });
    }
    refs.push({ path, mimeType });
  }
  return { refs, notes };
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function orThrow<T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!r.ok) throw new HearthFailure({ code: 'storage.failed', message: r.error.message });
  return r.value;
}

/**
 * The request as sent: each stored image it refers to gets its bytes (base64), read once per
 * invocation (`cache`). Images of a model that does not take them are left without, and the
 * adapters explain them in place.
 */
export async function withImageData(
  request: ModelRequest,
  workspace: Workspace,
  cache: Map<string, string>,
): Promise<ModelRequest> {
  if (!request.acceptsImages) return request;
  const load = async (image: ImageRef): Promise<ImageRef> => {
    if (image.data !== undefined || image.path.startsWith('data:')) return image;
    let data = cache.get(image.path);
    if (data === undefined) {
      const path = parseWorkspacePath(image.path);
      const read = path.ok ? await workspace.read(path.value) : null;
      if (!read?.ok) return image;
      data = encodeBase64(read.value);
      cache.set(image.path, data);
    }
    return { ...image, data };
  };
  const hasImages = (part: ContentPart) =>
    part.type === 'image' || (part.type === 'tool-result' && part.images.length > 0);
  const messages = await Promise.all(
    request.messages.map(async (message) =>
      !message.parts.some(hasImages)
        ? message
        : {
            ...message,
            parts: await Promise.all(
              message.parts.map(async (part): Promise<ContentPart> => {
                if (part.type === 'image') return { ...part, image: await load(part.image) };
                if (part.type === 'tool-result' && part.images.length)
                  return { ...part, images: await Promise.all(part.images.map(load)) };
                return part;
              }),
            ),
          },
    ),
  );
  return { ...request, messages };
}
