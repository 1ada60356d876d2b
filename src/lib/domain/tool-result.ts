import type { ErrorCode } from './errors';
import type { JsonValue } from './json';
import type { ImageRef } from './model';
import type { ToolId } from './tool-id';

/** The record of one tool call's outcome (tools.md §8). */
export interface AgentToolResult {
  callId: string;
  toolId: ToolId;
  content: string;
  /** Kept in records, never expanded into model text (D9). */
  structured?: JsonValue;
  isError: boolean;
  errorCode?: ErrorCode;
  resourceRefs: string[];
  images: ImageRef[];
}

const IMAGES_NOT_KEPT = '## Images not kept\n\n';

/** Notes for images that were not kept (tools.md §11), after the result's own text. */
export function withImageNotes(content: string, notes: readonly string[]): string {
  if (notes.length === 0) return content;
  const section = `${IMAGES_NOT_KEPT}${notes.map((n) => `- ${n}`).join('\n')}`;
  return content ? `${content}\n\n${section}` : section;
}

/** How many images the result's text says were not kept: what its row in a conversation counts. */
export function imagesNotKept(content: string): number {
  const at = content.lastIndexOf(IMAGES_NOT_KEPT);
  if (at < 0) return 0;
  const lines = content.slice(at + IMAGES_NOT_KEPT.length).split('\n');
  return lines.filter((line) => line.startsWith('- ')).length;
}
