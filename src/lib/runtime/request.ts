import type { ContentPart, ModelMessage, ModelRequest, ToolChoice } from '$lib/domain/model';
import type { SamplerSettings } from '$lib/domain/sampler';
import { pairToolCalls } from './history';
import type { ModelTurn } from './model-turn';
import type { ToolSnapshot } from './tool-snapshot';

/**
 * The one request builder (runtime.md §1.5): the invocation's system prompt, the conversation
 * with every tool call paired with a result, and the snapshot's tools, and whether its model
 * takes images (their bytes are attached just before sending: `withImageData`).
 */
export function buildRequest(input: {
  model: string;
  system: string;
  messages: readonly ModelMessage[];
  snapshot: ToolSnapshot;
  toolChoice?: ToolChoice;
  sampler?: SamplerSettings;
}): ModelRequest {
  return {
    model: input.model,
    messages: [
      { role: 'system', parts: [{ type: 'text', text: input.system }] },
      ...pairToolCalls(input.messages),
    ],
    tools: [...input.snapshot.specs],
    toolChoice: input.toolChoice ?? 'auto',
    acceptsImages: input.snapshot.acceptsImages,
    ...requestSampling(input.sampler),
  };
}

/**
 * The sampler settings a request carries. Today the request has only the reply's length and the
 * temperature; the per-wire sampler settings (issue 29, deliverable 4) replace this with the
 * whole `sampler` on the request.
 */
export function requestSampling(
  sampler: SamplerSettings | undefined,
): Pick<ModelRequest, 'maxOutputTokens' | 'temperature'> {
  if (!sampler) return {};
  return {
    ...(sampler.maxOutputTokens !== undefined ? { maxOutputTokens: sampler.maxOutputTokens } : {}),
    ...(sampler.temperature !== undefined ? { temperature: sampler.temperature } : {}),
  };
}

/**
 * An assistant turn as it is kept: a completed turn exactly as assembled from the stream (so
 * providers get their signatures and native parts back); a cut-off one with the text that
 * arrived and no calls.
 */
export function assistantMessage(turn: ModelTurn, completed: boolean): ModelMessage {
  if (completed) return { role: 'assistant', parts: turn.parts };
  const parts: ContentPart[] = [];
  if (turn.reasoning) parts.push({ type: 'reasoning', text: turn.reasoning });
  if (turn.text) parts.push({ type: 'text', text: turn.text });
  return { role: 'assistant', parts };
}
