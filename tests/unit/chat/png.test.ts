import { describe, expect, it } from 'vitest';
import { decodeBase64, encodeBase64, utf8 } from '$lib/domain/base64';
import { crc32, decodeTextChunk, encodePng, encodeTextChunk, readPngChunks } from '$lib/chat/png';
import { tinyPng, tinyPngChunks } from './helpers';

describe('crc32', () => {
  it('matches the standard check value', () => {
    expect(crc32(utf8.encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });

  it('gives the well-known CRC of an empty IEND chunk', () => {
    expect(crc32(utf8.encode('IEND'))).toBe(0xae426082);
  });
});

describe('readPngChunks / encodePng', () => {
  it('round-trips chunks byte for byte', () => {
    const png = tinyPng();
    const read = readPngChunks(png);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(encodePng(read.value)).toEqual(png);
  });

  it('ignores bytes after IEND', () => {
    const png = tinyPng();
    const padded = new Uint8Array([...png, 1, 2, 3]);
    const read = readPngChunks(padded);
    expect(read.ok && read.value.length).toBe(3);
  });

  it.each([
    ['not a PNG', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), 'card.not_png'],
    ['empty', new Uint8Array(0), 'card.not_png'],
    ['cut inside a chunk', tinyPng().slice(0, 40), 'card.truncated_png'],
    ['cut before IEND', tinyPng().slice(0, tinyPng().length - 12), 'card.truncated_png'],
  ])('refuses a file that is %s', (_, bytes, code) => {
    const read = readPngChunks(bytes, '"x.png"');
    expect(read).toMatchObject({ ok: false, error: { code } });
  });

  it('refuses a CRC mismatch, naming the chunk', () => {
    const png = tinyPng();
    png[8 + 8 + 2] = png[8 + 8 + 2]! ^ 0xff; // a byte of IHDR's data
    const read = readPngChunks(png);
    expect(read).toMatchObject({ ok: false, error: { code: 'card.png_crc_mismatch' } });
    expect(!read.ok && read.error.message).toContain('IHDR');
  });

  it('refuses a chunk length that runs past the end', () => {
    const png = tinyPng();
    png.set([0x7f, 0xff, 0xff, 0xff], 8); // IHDR length
    expect(readPngChunks(png)).toMatchObject({ ok: false, error: { code: 'card.truncated_png' } });
  });

  it('refuses a file that does not start with IHDR', () => {
    const [ihdr, idat, iend] = tinyPngChunks();
    const png = encodePng([idat!, ihdr!, iend!]);
    expect(readPngChunks(png)).toMatchObject({ ok: false, error: { code: 'card.invalid_png' } });
  });

  it('refuses a chunk type that is not four letters', () => {
    const png = tinyPng();
    png[12] = 0x31; // '1'
    expect(readPngChunks(png)).toMatchObject({ ok: false, error: { code: 'card.invalid_png' } });
  });
});

describe('text chunks and base64', () => {
  it('encodes and decodes a tEXt chunk', () => {
    const chunk = encodeTextChunk('chara', 'eyJhIjoxfQ==');
    expect(chunk.type).toBe('tEXt');
    expect(decodeTextChunk(chunk.data)).toEqual({ keyword: 'chara', text: 'eyJhIjoxfQ==' });
  });

  it('has no keyword without a separator', () => {
    expect(decodeTextChunk(utf8.encode('nothing here'))).toBeNull();
  });

  it('round-trips UTF-8 through base64', () => {
    const text = 'Café ☕ 猫 🐈';
    expect(utf8.decode(decodeBase64(encodeBase64(utf8.encode(text)))!)).toBe(text);
  });

  it.each(['not base64!', 'abc*', 'a', 'ab=c'])('rejects malformed base64 %j', (s) => {
    expect(decodeBase64(s)).toBeNull();
  });

  it('accepts missing padding and line breaks', () => {
    expect(decodeBase64('YW\r\nJj')).toEqual(utf8.encode('abc'));
    expect(decodeBase64('YQ')).toEqual(utf8.encode('a'));
  });
});
