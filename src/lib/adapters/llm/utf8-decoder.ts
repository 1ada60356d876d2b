/**
 * Decodes a UTF-8 byte stream chunk by chunk, with the same text as `TextDecoder`'s streaming
 * mode (a leading BOM dropped, invalid bytes as U+FFFD), but faster: engines decode a whole
 * buffer much faster than a streamed one. A chunk that ends inside a character keeps that
 * character's first bytes for the next chunk; the cut is always before a byte that starts a
 * sequence, where the decoder's state is reset anyway, so every cut gives the streamed result.
 */
export interface Utf8Decoder {
  decode(bytes: Uint8Array): string;
  /** The end of the stream: a character still unfinished becomes U+FFFD. */
  end(): string;
}

export function createUtf8Decoder(): Utf8Decoder {
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let carry: Uint8Array | null = null;
  let atStart = true;
  const text = (bytes: Uint8Array): string => {
    const out = bytes.length === 0 ? '' : decoder.decode(bytes);
    if (!atStart || out === '') return out;
    atStart = false;
    return out.charCodeAt(0) === 0xfeff ? out.slice(1) : out;
  };
  return {
    decode(chunk) {
      let bytes = chunk;
      if (carry) {
        bytes = new Uint8Array(carry.length + chunk.length);
        bytes.set(carry);
        bytes.set(chunk, carry.length);
        carry = null;
      }
      const cut = incompleteTail(bytes);
      if (cut < bytes.length) {
        carry = bytes.slice(cut);
        bytes = bytes.subarray(0, cut);
      }
      return text(bytes);
    },
    end() {
      const rest = carry ?? new Uint8Array(0);
      carry = null;
      return text(rest);
    },
  };
}

/** Where the last, unfinished character begins; `bytes.length` when the last one is complete. */
function incompleteTail(bytes: Uint8Array): number {
  const stop = Math.max(0, bytes.length - 4);
  for (let i = bytes.length - 1; i >= stop; i--) {
    const b = bytes[i]!;
    if (b < 0x80) return bytes.length;
    if (b < 0xc0) continue; // a continuation byte
    const length = b < 0xc2 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : b < 0xf5 ? 4 : 1; // C0, C1, F5-FF never start one
    return bytes.length - i < length ? i : bytes.length;
  }
  return bytes.length;
}
