import { randomIds } from '$lib/adapters/system/clock';
import type { Ids } from '$lib/ports/clock';
import { Transfer } from '../rpc';

/**
 * Helpers shared by the character, persona and lorebook handlers: ids, and transferring bytes
 * back to the page (what they check and save on import: `runtime/imported-content.ts`).
 */

export const ids: Ids = randomIds;
export const newId = (prefix: string): string => ids.contentId(prefix);

/** `value` with the buffers of `bytes` transferred (each buffer once), not copied. */
export function withTransfer<T>(value: T, bytes: readonly (Uint8Array | null | undefined)[]): Transfer<T> {
  const buffers = new Set<ArrayBuffer>();
  for (const b of bytes) if (b && b.buffer instanceof ArrayBuffer) buffers.add(b.buffer);
  return new Transfer(value, [...buffers]);
}
