import { describe, expect, it } from 'vitest';
import { sameBytes } from '$lib/adapters/sandbox/sandbox-fs';

/** The plain comparison that `sameBytes` must agree with. */
const plain = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

/** Bytes 0..255 repeating, high bytes included (words above 2^31 when read four at a time). */
const bytes = (length: number, start = 0) => Uint8Array.from({ length }, (_, i) => (start + i * 37) % 256);

describe('sameBytes', () => {
  it('agrees with a byte-by-byte comparison for every length, offset and place of a difference', () => {
    for (const length of [0, 1, 3, 4, 5, 63, 64, 65, 66, 67, 1000, 4099]) {
      for (const [offsetA, offsetB] of [
        [0, 0],
        [4, 8],
        [1, 1],
        [0, 3],
        [2, 0],
      ] as const) {
        const source = bytes(length + 8);
        const a = new Uint8Array(length + 8);
        a.set(source.subarray(0, length), offsetA);
        const b = new Uint8Array(length + 8);
        b.set(source.subarray(0, length), offsetB);
        const viewA = a.subarray(offsetA, offsetA + length);
        const viewB = b.subarray(offsetB, offsetB + length);
        expect(sameBytes(viewA, viewB)).toBe(true);
        for (const at of new Set([0, 1, length >> 1, length - 4, length - 2, length - 1])) {
          if (at < 0 || at >= length) continue;
          viewB[at] = viewB[at]! ^ 0x80;
          expect(sameBytes(viewA, viewB)).toBe(plain(viewA, viewB));
          expect(sameBytes(viewA, viewB)).toBe(false);
          viewB[at] = viewB[at]! ^ 0x80;
        }
        expect(sameBytes(viewA, viewB.subarray(0, Math.max(0, length - 1)))).toBe(length === 0);
      }
    }
  });

  it('is true for the same array and for equal empty ones, false for other lengths', () => {
    const a = bytes(100);
    expect(sameBytes(a, a)).toBe(true);
    expect(sameBytes(new Uint8Array(), new Uint8Array(0))).toBe(true);
    expect(sameBytes(bytes(100), bytes(101))).toBe(false);
    expect(sameBytes(bytes(128, 1), bytes(128, 2))).toBe(false);
  });
});
