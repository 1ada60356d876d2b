import { describe, expect, it } from 'vitest';
import {
  checkUserImage,
  checkUserImages,
  imageDataUrl,
  imagesOfParts,
  MAX_MESSAGE_IMAGES,
  parseImageDataUrl,
  userMessageParts,
} from '$lib/domain/user-images';
import { estimateTokens, IMAGE_TOKENS, transcriptOf } from '$lib/runtime/compaction';
import { gifFile, jpegFile, pngFile, webpFile } from '../../support/image-headers';

const url = (bytes: Uint8Array, mime: string) => imageDataUrl(bytes, mime);
const png = url(pngFile(64, 48), 'image/png');

describe('images from the person', () => {
  it('round-trips bytes through a data URL', () => {
    const bytes = pngFile(3, 2);
    expect(png.startsWith('data:image/png;base64,')).toBe(true);
    const parsed = parseImageDataUrl(url(bytes, 'image/png'));
    expect(parsed?.mimeType).toBe('image/png');
    expect([...parsed!.bytes]).toEqual([...bytes]);
    expect(parseImageDataUrl('data:image/png;base64,@@@=')).toBeNull();
    expect(parseImageDataUrl('data:text/plain;base64,AAAA')).toBeNull();
    expect(parseImageDataUrl('https://example.test/a.png')).toBeNull();
  });

  it('keeps what the normalization gives: PNG, JPEG and WebP within the limits, as { path, mimeType }', () => {
    expect(checkUserImage({ path: png, mimeType: 'whatever' })).toEqual({
      ok: true,
      value: { path: png, mimeType: 'image/png' },
    });
    const jpeg = url(jpegFile(1280, 720), 'image/jpeg');
    expect(checkUserImage({ path: jpeg, mimeType: 'image/jpeg' })).toMatchObject({ ok: true });
    const webp = url(webpFile('VP8X', 100, 100), 'image/webp');
    expect(checkUserImage({ path: webp, mimeType: 'image/webp' })).toMatchObject({ ok: true });
    // `data` is never kept with the message.
    const checked = checkUserImage({ path: png, mimeType: 'image/png', data: 'AAAA' });
    expect(checked.ok && 'data' in checked.value).toBe(false);
  });

  it.each([
    ['not a reference', 'image.png'],
    ['a web address', { path: 'https://example.test/a.png', mimeType: 'image/png' }],
    ['a workspace path', { path: 'work/plot.png', mimeType: 'image/png' }],
    ['a GIF', { path: url(gifFile(10, 10), 'image/gif'), mimeType: 'image/gif' }],
    ['a PNG said to be a JPEG', { path: url(pngFile(10, 10), 'image/jpeg'), mimeType: 'image/jpeg' }],
    [
      'not an image at all',
      { path: url(new TextEncoder().encode('hello'), 'image/png'), mimeType: 'image/png' },
    ],
    ['too wide', { path: url(pngFile(2000, 10), 'image/png'), mimeType: 'image/png' }],
    [
      'sideways (EXIF 6)',
      { path: url(jpegFile(10, 10, { orientation: 6 }), 'image/jpeg'), mimeType: 'image/jpeg' },
    ],
    ['a bomb', { path: url(pngFile(30_000, 30_000), 'image/png'), mimeType: 'image/png' }],
  ])('refuses an image that was not normalized: %s', (_, value) => {
    const checked = checkUserImage(value);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.error.code).toBe('image.invalid');
  });

  it('refuses a file over 1,000,000 bytes', () => {
    const big = new Uint8Array(1_000_100);
    big.set(pngFile(10, 10));
    expect(checkUserImage({ path: url(big, 'image/png'), mimeType: 'image/png' }).ok).toBe(false);
  });

  it('takes at most MAX_MESSAGE_IMAGES images in a message, each checked', () => {
    const ref = { path: png, mimeType: 'image/png' };
    expect(checkUserImages()).toEqual({ ok: true, value: [] });
    expect(checkUserImages(Array(MAX_MESSAGE_IMAGES).fill(ref))).toMatchObject({ ok: true });
    expect(checkUserImages(Array(MAX_MESSAGE_IMAGES + 1).fill(ref))).toMatchObject({ ok: false });
    expect(checkUserImages([ref, { path: 'x', mimeType: 'image/png' }])).toMatchObject({ ok: false });
  });

  it('puts images before the text, and leaves out an empty text beside images', () => {
    const image = { path: png, mimeType: 'image/png' };
    expect(userMessageParts('look')).toEqual([{ type: 'text', text: 'look' }]);
    expect(userMessageParts('')).toEqual([{ type: 'text', text: '' }]);
    expect(userMessageParts('look', [image])).toEqual([
      { type: 'image', image },
      { type: 'text', text: 'look' },
    ]);
    expect(userMessageParts('', [image])).toEqual([{ type: 'image', image }]);
    expect(imagesOfParts(userMessageParts('look', [image, image]))).toEqual([image, image]);
  });

  it('counts an image as IMAGE_TOKENS for compaction, not by its base64 length, and never puts it in a summary', () => {
    const big = new Uint8Array(900_000);
    big.set(pngFile(1000, 1000));
    const image = { path: url(big, 'image/png'), mimeType: 'image/png' };
    const parts = userMessageParts('hi', [image]);
    expect(estimateTokens(parts)).toBeLessThan(IMAGE_TOKENS + 100);
    expect(estimateTokens(parts)).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    const transcript = transcriptOf([
      { sessionId: 's', index: 0, runId: null, createdAt: 0, role: 'user', parts },
    ]);
    expect(transcript).toBe('[the person attached an image (image/png)]\n\nuser: hi');
  });
});
