import { describe, expect, it } from 'vitest';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import { dataUrlBytes, fileName, loadImage, pixelSize, viewableImageType } from '$lib/ui/common/image-view';

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p)));

const PNG = bytes(
  [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  [0, 0, 0, 13],
  'IHDR',
  [0, 0, 0, 2, 0, 0, 0, 3],
);
const JPEG = bytes([0xff, 0xd8, 0xff, 0xe0, 0, 16], 'JFIF');
const WEBP = bytes('RIFF', [0, 0, 0, 0], 'WEBPVP8 ');
const GIF = bytes('GIF89a', [2, 0, 3, 0]);

describe('viewableImageType', () => {
  it('shows PNG, JPEG, WebP and GIF as images, by their first bytes', () => {
    expect(viewableImageType(PNG)).toBe('image/png');
    expect(viewableImageType(JPEG)).toBe('image/jpeg');
    expect(viewableImageType(WEBP)).toBe('image/webp');
    expect(viewableImageType(GIF)).toBe('image/gif');
  });

  it('never shows SVG, text or other binary files as images', () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    expect(viewableImageType(new TextEncoder().encode(svg))).toBeNull();
    expect(viewableImageType(new TextEncoder().encode('GIF is a format\n'))).toBeNull();
    expect(viewableImageType(bytes('PK', [3, 4, 0, 0]))).toBeNull();
    expect(viewableImageType(new Uint8Array())).toBeNull();
    // A cut signature is not a PNG.
    expect(viewableImageType(PNG.subarray(0, 4))).toBeNull();
  });
});

describe('loadImage', () => {
  const reader = (result: Uint8Array | Error) => async () => {
    if (result instanceof Error) throw result;
    return result;
  };

  it('reads the file and types it by its bytes, not by the recorded type', async () => {
    const loaded = await loadImage('tool-results/r/x.image-1.jpg', reader(PNG));
    expect(loaded).toEqual({ kind: 'ok', bytes: PNG, mimeType: 'image/png' });
  });

  it('says a removed file is missing', async () => {
    for (const code of ['workspace.file_not_found', 'workspace.path_not_found'] as const) {
      const gone = new HearthFailure(hearthError(code, 'no such file'));
      expect(await loadImage('tool-results/r/x.image-1.png', reader(gone))).toEqual({ kind: 'missing' });
    }
  });

  it('passes on other failures and refuses bytes that are not a shown image', async () => {
    const denied = new HearthFailure(hearthError('workspace.path_not_visible', 'not visible'));
    expect(await loadImage('runs/x.png', reader(denied))).toEqual({ kind: 'error', message: 'not visible' });
    const svg = new TextEncoder().encode('<svg/>');
    expect((await loadImage('work/a.png', reader(svg))).kind).toBe('error');
  });

  it('decodes a data: URL without reading anything', async () => {
    const url = `data:image/gif;base64,${btoa(String.fromCharCode(...GIF))}`;
    const loaded = await loadImage(url, () => Promise.reject(new Error('not read')));
    expect(loaded).toEqual({ kind: 'ok', bytes: GIF, mimeType: 'image/gif' });
    expect(dataUrlBytes('data:text/html;base64,PGI+')).toBeNull();
    expect(dataUrlBytes('data:image/png;base64,***')).toBeNull();
  });
});

it('names and sizes', () => {
  expect(fileName('tool-results/run/round-001-call_1.image-1.png')).toBe('round-001-call_1.image-1.png');
  expect(fileName('plot.png')).toBe('plot.png');
  expect(pixelSize(800, 600)).toBe('800 × 600 px');
});
