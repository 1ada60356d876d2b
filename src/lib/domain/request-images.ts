/**
 * How an image in a model request reaches the model (tools.md §11): its bytes where the model
 * takes images and they were loaded, else a text explanation at the image's place. Every
 * provider adapter uses these words, so the model reads the same sentence whatever it runs on.
 */
import type { ImageRef } from './model';

/** Why an image was explained instead of sent. */
export type WithheldReason =
  /** The invocation's model does not take images (`ModelRequest.acceptsImages === false`). */
  | 'no-vision'
  /** The request builder did not fill in `ImageRef.data`. */
  | 'not-loaded'
  /** Only a web address is known, and the provider takes bytes. */
  | 'web-address';

export type RequestImage =
  /** Base64 bytes (no `data:` prefix) and their type. */
  | { kind: 'inline'; mimeType: string; data: string }
  /** An http(s) address, for providers that download images themselves. */
  | { kind: 'url'; url: string }
  | { kind: 'withheld'; reason: WithheldReason; text: string };

/** Pure: what to put on the wire for one image of a request. */
export function requestImage(image: ImageRef, acceptsImages: boolean): RequestImage {
  if (!acceptsImages) return withheld(image, 'no-vision');
  const inline =
    image.data !== undefined && image.data !== ''
      ? image.data
      : image.path.startsWith('data:')
        ? image.path
        : null;
  if (inline !== null) {
    // Tolerates a data URL where bare base64 is documented (older user uploads kept one as `path`).
    const m = /^data:([^;,]+)(?:;[^,]*)?,(.*)$/s.exec(inline);
    return m
      ? { kind: 'inline', mimeType: m[1] ?? image.mimeType, data: m[2] ?? '' }
      : { kind: 'inline', mimeType: image.mimeType, data: inline };
  }
  if (/^https?:\/\//i.test(image.path)) return { kind: 'url', url: image.path };
  return withheld(image, 'not-loaded');
}

export const withheld = (image: ImageRef, reason: WithheldReason): RequestImage & { kind: 'withheld' } => ({
  kind: 'withheld',
  reason,
  text: imageExplanation(image, reason),
});

/**
 * The text that stands at the place of an image that was not sent, e.g.
 * `[Image work/plot.png (image/png): this model does not take images, so it was not sent.]`.
 */
export function imageExplanation(image: ImageRef, reason: WithheldReason): string {
  const what = imageLabel(image);
  switch (reason) {
    case 'no-vision':
      return `[${what}: this model does not take images, so it was not sent.]`;
    case 'not-loaded':
      return `[${what} could not be attached: its data was not loaded.]`;
    case 'web-address':
      return `[${what} could not be attached: this provider takes image data, not web addresses.]`;
  }
}

/** `Image work/plot.png (image/png)`; an image kept as a data URL is not spelled out. */
const imageLabel = (image: ImageRef): string =>
  image.path.startsWith('data:') ? `Image (${image.mimeType})` : `Image ${image.path} (${image.mimeType})`;

/**
 * The line before a tool call's images where they travel apart from its result (OpenAI-compatible,
 * Gemini before 3): `Images returned by call_abc (mcp__x__screenshot):`. Without a provider id the
 * call is named by its tool alone.
 */
export function toolImagesHeading(count: number, call: { callId?: string; name: string }): string {
  const images = count === 1 ? 'Image' : 'Images';
  return call.callId !== undefined
    ? `${images} returned by ${call.callId} (${call.name}):`
    : `${images} returned by ${call.name}:`;
}

/**
 * One request's images, for an encoder: resolves each image (recording those explained) and
 * gives the warnings that open the stream. Pure apart from its own record; make one per request.
 */
export interface RequestImages {
  /** `webAddresses: false` for a provider that takes only bytes. */
  resolve(image: ImageRef, opts?: { webAddresses?: boolean }): RequestImage;
  warnings(): string[];
}

export function requestImages(acceptsImages: boolean): RequestImages {
  const explained: { image: ImageRef; reason: WithheldReason }[] = [];
  return {
    resolve(image, opts = {}) {
      let r = requestImage(image, acceptsImages);
      if (r.kind === 'url' && opts.webAddresses === false) r = withheld(image, 'web-address');
      if (r.kind === 'withheld') explained.push({ image, reason: r.reason });
      return r;
    },
    warnings() {
      const out: string[] = [];
      const noVision = explained.filter((e) => e.reason === 'no-vision').length;
      if (noVision > 0)
        out.push(
          `${noVision === 1 ? 'An image was' : `${noVision} images were`} not sent: this model does not take images.`,
        );
      for (const { image, reason } of explained) {
        if (reason === 'not-loaded')
          out.push(`The image ${image.path} was not sent: its data was not loaded.`);
        if (reason === 'web-address')
          out.push(
            `The image ${image.path} was not sent: this provider takes image data, not web addresses.`,
          );
      }
      return out;
    },
  };
}

/** Appends explanations to a tool result's text, each on its own line after the content. */
export function withExplanations(content: string, explanations: readonly string[]): string {
  if (explanations.length === 0) return content;
  const tail = explanations.join('\n');
  return content === '' ? tail : `${content}\n\n${tail}`;
}
