const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard base64 (ASCII whitespace ignored, padding optional) to bytes, or null if malformed. */
export function decodeBase64(text: string): Uint8Array | null {
  const clean = text.replace(/[\t\n\f\r ]+/g, '');
  if (!BASE64.test(clean) || clean.length % 4 === 1) return null;
  const body = clean.replace(/=+$/, '');
  if (clean.length - body.length > 0 && clean.length % 4 !== 0) return null;
  let binary: string;
  try {
    binary = atob(body);
  } catch {
    return null;
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Bytes to standard base64. */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export const utf8 = {
  encode: (text: string): Uint8Array => new TextEncoder().encode(text),
  /** Lenient like SillyTavern (invalid sequences become U+FFFD); a leading BOM is dropped. */
  decode: (bytes: Uint8Array): string => new TextDecoder('utf-8').decode(bytes),
};
