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
