import { describe, expect, it } from 'vitest';
import { createUtf8Decoder } from '$lib/adapters/llm/utf8-decoder';

const enc = new TextEncoder();

/** What `TextDecoder` gives in streaming mode for the same chunks. */
function streamed(chunks: Uint8Array[]): string {
  const d = new TextDecoder('utf-8');
  return chunks.map((c) => d.decode(c, { stream: true })).join('') + d.decode();
}

function decoded(chunks: Uint8Array[]): string {
  const d = createUtf8Decoder();
  return chunks.map((c) => d.decode(c)).join('') + d.end();
}

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...enc.encode(p)] : p)));

const SAMPLES: Record<string, Uint8Array> = {
  text: bytes('data: héllo wörld ✓ 日本語 😀 👩‍💻\n\n'),
  'a BOM, then a BOM inside': bytes([0xef, 0xbb, 0xbf], 'a', [0xef, 0xbb, 0xbf], 'b'),
  'invalid bytes': bytes('a', [0x80], 'b', [0xc0, 0xaf], 'c', [0xe0, 0x80], 'd', [0xff, 0xf5, 0xc1], 'e'),
  'a cut-off character at the end': bytes('ok ', [0xf0, 0x9f, 0x98]),
  'a character cut by a new one': bytes('x', [0xe2, 0x82], '€', [0xf0, 0x9f], 'y'),
  'stray continuation bytes': bytes('😀', [0x80, 0x80, 0x80, 0x80, 0x80], 'z'),
};

describe('createUtf8Decoder', () => {
  for (const [name, all] of Object.entries(SAMPLES)) {
    it(`gives TextDecoder's streamed text for ${name}, cut at any two places`, () => {
      for (let a = 0; a <= all.length; a++) {
        for (let b = a; b <= all.length; b++) {
          const chunks = [all.subarray(0, a), all.subarray(a, b), all.subarray(b)];
          expect(decoded(chunks), `cut at ${a} and ${b}`).toBe(streamed(chunks));
        }
      }
    });

    it(`gives TextDecoder's streamed text for ${name}, one byte at a time`, () => {
      const chunks = Array.from(all, (_, i) => all.subarray(i, i + 1));
      expect(decoded(chunks)).toBe(streamed(chunks));
    });
  }

  it('drops only the BOM that starts the stream', () => {
    expect(decoded([bytes([0xef, 0xbb]), bytes([0xbf], 'a', [0xef, 0xbb, 0xbf])])).toBe('a\ufeff');
  });
});
