/**
 * The canonical model IR: what the runtime sends to and receives from every provider adapter.
 * Provider wire formats never leak past an adapter; adapters never see runtime records.
 */
import type { HearthError } from './errors';
import type { JsonObject } from './json';
import type { SamplerSettings } from './sampler';

export type ModelRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ImageRef {
  /** Workspace path of the stored image (tool images) or a data URL (user uploads). */
  path: string;
  mimeType: string;
  /**
   * The image's bytes, base64 without a `data:` prefix. Filled in by the request builder just
   * before a request is encoded; never stored (results, audit and history keep `{ path, mimeType }`).
   * An image without it reaches the model as an explanation (`imageExplanation`), not as an image.
   */
  data?: string;
}

/**
 * Provider-private state attached to a part, keyed by provider (`{ gemini: { thoughtSignature } }`).
 * Opaque to the runtime: stored with the part and handed back verbatim. An adapter reads only its
 * own key, so state never leaks to another provider after a switch.
 */
export type ProviderMetadata = JsonObject;

export type ContentPart =
  | { type: 'text'; text: string; providerMetadata?: ProviderMetadata }
  /** An image from the person; its bytes travel in `image.data`. */
  | { type: 'image'; image: ImageRef }
  | {
      type: 'reasoning';
      text: string;
      /** Anthropic's `thinking` signature, replayed verbatim with the text (never shown). */
      signature?: string;
      providerMetadata?: ProviderMetadata;
    }
  | {
      type: 'tool-call';
      /** The provider's id, opaque and byte-for-byte. */
      callId: string;
      /** The model-facing call name, as the model sent it. */
      name: string;
      /** Replayed to providers: the normalized arguments, `{}` when they were invalid. */
      input: JsonObject;
      /** Invalid arguments as the model sent them: shown to the person, never replayed. */
      rawArguments?: string;
      providerMetadata?: ProviderMetadata;
    }
  | {
      type: 'tool-result';
      callId: string;
      name: string;
      content: string;
      isError: boolean;
      images: ImageRef[];
    }
  /** An opaque provider block (Anthropic `redacted_thinking`), replayed only to its own provider. */
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
  /**
   * Whether this invocation's model takes images, decided when the snapshot is built
   * (`acceptsImages(connection, model)` in `domain/vision.ts`) and set by the request builder.
   * When false, every image (the person's and tools') is sent as an explanation at its place and
   * its bytes are not sent. Absent means no decision was made: images with data are sent.
   */
  acceptsImages?: boolean;
  /**
   * How the reply is sampled, with the connection's pinned settings already over the run's
   * (`pinSampler`). Each adapter sends what its provider takes and opens the stream with a
   * `turn-start` warning for each setting it did not send.
   */
  sampler?: SamplerSettings;
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
 *
 * To replay a reply faithfully (thinking signatures, Gemini thought signatures), the assistant
 * message is rebuilt with one ContentPart per block, in the order the blocks started: a text or
 * reasoning block becomes a part when it ends, taking `signature` / `providerMetadata` from its
 * end part; a `tool-call` becomes a tool-call part with its `providerMetadata`; a `native` part
 * is stored as it is.
 */
export type StreamPart =
  | { type: 'turn-start'; warnings: string[] }
  | { type: 'text-start' | 'reasoning-start'; blockId: string }
  | { type: 'text-end'; blockId: string; providerMetadata?: ProviderMetadata }
  | { type: 'reasoning-end'; blockId: string; signature?: string; providerMetadata?: ProviderMetadata }
  | { type: 'text-delta' | 'reasoning-delta'; blockId: string; delta: string }
  | { type: 'tool-input-start'; blockId: string; callId: string; name: string }
  | { type: 'tool-input-delta'; blockId: string; delta: string }
  | { type: 'tool-input-end'; blockId: string }
  /** A complete call; `rawArguments` is the argument text exactly as the provider sent it. */
  | {
      type: 'tool-call';
      callId: string;
      name: string;
      rawArguments: string;
      providerMetadata?: ProviderMetadata;
    }
  /** An opaque provider block to keep, at this position, in the stored assistant message. */
  | { type: 'native'; provider: string; value: unknown }
  | { type: 'response-metadata'; id?: string; model?: string }
  | { type: 'finish'; reason: FinishReason; usage: Usage }
  | { type: 'error'; error: HearthError };

export type StreamPartType = StreamPart['type'];
