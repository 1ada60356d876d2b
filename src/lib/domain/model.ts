/**
 * The canonical model IR: what the runtime sends to and receives from every provider adapter.
 * Provider wire formats never leak past an adapter; adapters never see runtime records.
 */
import type { HearthError } from './errors';
import type { JsonObject } from './json';

export type ModelRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ImageRef {
  /** Workspace path of the stored image (tool images) or a data URL (user uploads). */
  path: string;
  mimeType: string;
}

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; image: ImageRef; data?: string }
  | { type: 'reasoning'; text: string; signature?: string }
  | {
      type: 'tool-call';
      /** The provider's id, opaque and byte-for-byte. */
      callId: string;
      /** The model-facing call name, as the model sent it. */
      name: string;
      /** Replayed to providers: the normalized arguments, `{}` when they were invalid. */
      input: JsonObject;
    }
  | {
      type: 'tool-result';
      callId: string;
      name: string;
      content: string;
      isError: boolean;
      images: ImageRef[];
    }
  | { type: 'native'; provider: string; value: unknown };

export interface ModelMessage {
  role: ModelRole;
  parts: ContentPart[];
}

export interface ModelToolSpec {
  /** The call name the model uses. */
  name: string;
  description: string;
  /** JSON Schema of the parameters (object root). */
  parameters: JsonObject;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface ModelRequest {
  model: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  toolChoice: ToolChoice;
  maxOutputTokens?: number;
  temperature?: number;
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

export type UnifiedFinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other';
export interface FinishReason {
  unified: UnifiedFinishReason;
  /** The provider's own value, kept for records. */
  raw: string | null;
}

/**
 * The canonical stream. Every block streams start, deltas, end under one `blockId`. It opens
 * with `turn-start` and closes with exactly one `finish` or `error`; an adapter never throws.
 */
export type StreamPart =
  | { type: 'turn-start'; warnings: string[] }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; blockId: string }
  | { type: 'text-delta' | 'reasoning-delta'; blockId: string; delta: string }
  | { type: 'tool-input-start'; blockId: string; callId: string; name: string }
  | { type: 'tool-input-delta'; blockId: string; delta: string }
  | { type: 'tool-input-end'; blockId: string }
  /** A complete call; `rawArguments` is the argument text exactly as the provider sent it. */
  | { type: 'tool-call'; callId: string; name: string; rawArguments: string }
  | { type: 'response-metadata'; id?: string; model?: string }
  | { type: 'finish'; reason: FinishReason; usage: Usage }
  | { type: 'error'; error: HearthError };

export type StreamPartType = StreamPart['type'];
