import { describe, expect, it } from 'vitest';
import {
  imageExplanation,
  requestImage,
  requestImages,
  toolImagesHeading,
  withExplanations,
} from '$lib/domain/request-images';

const plot = { path: 'work/plot.png', mimeType: 'image/png' };

describe('request images', () => {
  it('has one wording for every adapter', () => {
    expect(imageExplanation(plot, 'no-vision')).toBe(
      '[Image work/plot.png (image/png): this model does not take images, so it was not sent.]',
    );
    expect(imageExplanation(plot, 'not-loaded')).toBe(
      '[Image work/plot.png (image/png) could not be attached: its data was not loaded.]',
    );
    expect(imageExplanation({ path: 'https://x.test/a.jpg', mimeType: 'image/jpeg' }, 'web-address')).toBe(
      '[Image https://x.test/a.jpg (image/jpeg) could not be attached: this provider takes image data, not web addresses.]',
    );
    // A data URL is not spelled out in the text the model reads.
    expect(imageExplanation({ path: 'data:image/png;base64,AAAA', mimeType: 'image/png' }, 'no-vision')).toBe(
      '[Image (image/png): this model does not take images, so it was not sent.]',
    );
  });

  it('sends loaded bytes, explains the rest, and never sends bytes to a model without vision', () => {
    expect(requestImage({ ...plot, data: 'AAAA' }, true)).toEqual({
      kind: 'inline',
      mimeType: 'image/png',
      data: 'AAAA',
    });
    expect(requestImage({ ...plot, data: 'AAAA' }, false)).toMatchObject({
      kind: 'withheld',
      reason: 'no-vision',
    });
    expect(requestImage(plot, true)).toMatchObject({ kind: 'withheld', reason: 'not-loaded' });
    expect(requestImage({ path: 'data:image/webp;base64,UklG', mimeType: 'image/png' }, true)).toEqual({
      kind: 'inline',
      mimeType: 'image/webp',
      data: 'UklG',
    });
    expect(requestImage({ path: 'https://x.test/a.jpg', mimeType: 'image/jpeg' }, true)).toEqual({
      kind: 'url',
      url: 'https://x.test/a.jpg',
    });
  });

  it('names the call images belong to, and appends explanations after a result’s text', () => {
    expect(toolImagesHeading(2, { callId: 'call_abc', name: 'mcp__x__screenshot' })).toBe(
      'Images returned by call_abc (mcp__x__screenshot):',
    );
    expect(toolImagesHeading(1, { name: 'shot' })).toBe('Image returned by shot:');
    expect(withExplanations('ok', [])).toBe('ok');
    expect(withExplanations('ok', ['[a]', '[b]'])).toBe('ok\n\n[a]\n[b]');
    expect(withExplanations('', ['[a]'])).toBe('[a]');
  });

  it('warns once for a model without vision and once per image it could not send', () => {
    const off = requestImages(false);
    off.resolve({ ...plot, data: 'AAAA' });
    off.resolve(plot);
    expect(off.warnings()).toEqual(['2 images were not sent: this model does not take images.']);
    const on = requestImages(true);
    on.resolve(plot);
    on.resolve({ path: 'https://x.test/a.jpg', mimeType: 'image/jpeg' }, { webAddresses: false });
    on.resolve({ ...plot, data: 'AAAA' });
    expect(on.warnings()).toEqual([
      'The image work/plot.png was not sent: its data was not loaded.',
      'The image https://x.test/a.jpg was not sent: this provider takes image data, not web addresses.',
    ]);
  });
});
