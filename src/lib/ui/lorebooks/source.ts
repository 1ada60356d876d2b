import type { LorebookSource } from '$lib/chat/records';

/** Where a lorebook came from, as the Lorebooks page and an import's summary both say it. */
export function lorebookSourceLabel(source: LorebookSource | null | undefined): string | null {
  if (source?.kind === 'card') return `from the card ${source.fileName}`;
  if (source?.kind === 'worldInfo') return `imported from ${source.fileName}`;
  return null;
}
