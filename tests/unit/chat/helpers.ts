import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeBase64, utf8 } from '$lib/domain/base64';
import { encodePng, encodeTextChunk, type PngChunk } from '$lib/chat/png';

export const fixture = (name: string): string =>
  readFileSync(join(import.meta.dirname, '__fixtures__', name), 'utf8');
export const fixtureJson = (name: string): unknown => JSON.parse(fixture(name));

function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (const x of bytes) {
    a = (a + x) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

const u32 = (n: number) => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];

/** The chunks of a real 1x1 RGBA PNG (IDAT is a stored deflate block), plus `extra` before IEND. */
export function tinyPngChunks(rgba: [number, number, number, number] = [200, 80, 40, 255]): PngChunk[] {
  const ihdr = Uint8Array.from([...u32(1), ...u32(1), 8, 6, 0, 0, 0]);
  const raw = Uint8Array.from([0, ...rgba]); // filter byte + one pixel
  const stored = [0x01, raw.length, 0, ~raw.length & 0xff, 0xff];
  const idat = Uint8Array.from([0x78, 0x01, ...stored, ...raw, ...u32(adler32(raw))]);
  return [
    { type: 'IHDR', data: ihdr },
    { type: 'IDAT', data: idat },
    { type: 'IEND', data: new Uint8Array(0) },
  ];
}

export const tinyPng = (): Uint8Array => encodePng(tinyPngChunks());

/** A PNG with the given tEXt chunks (keyword -> text) inserted before IEND. */
export function pngWithText(texts: [string, string][], base = tinyPngChunks()): Uint8Array {
  const iend = base.at(-1)!;
  return encodePng([...base.slice(0, -1), ...texts.map(([k, t]) => encodeTextChunk(k, t)), iend]);
}

export const b64json = (value: unknown): string => encodeBase64(utf8.encode(JSON.stringify(value)));
export const bytes = (text: string): Uint8Array => utf8.encode(text);
