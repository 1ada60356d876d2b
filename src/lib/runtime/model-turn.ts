import type { HearthError } from '$lib/domain/errors';
import type { ContentPart, FinishReason, ModelRequest, StreamPart, Usage } from '$lib/domain/model';
import { createReplyAssembler } from '$lib/domain/model-reply';
import type { ModelGateway } from '$lib/ports/model-gateway';

export interface ModelToolCall {
  callId: string;
  name: string;
  rawArguments: string;
}

/** One model response assembled from the canonical stream. */
export interface ModelTurn {
  /** The assistant message as the provider must see it again (signatures, native parts, order). */
  parts: ContentPart[];
  text: string;
  reasoning: string;
  toolCalls: ModelToolCall[];
  finish: FinishReason;
  usage: Usage;
  responseId: string | null;
  model: string | null;
}

export type ModelTurnOutcome =
  | { kind: 'completed'; turn: ModelTurn }
  /** `partial` holds what streamed before the failure; `toolOutputStarted` forbids a retry (D15). */
  | { kind: 'failed'; error: HearthError; partial: ModelTurn; toolOutputStarted: boolean };

const emptyTurn = (): ModelTurn => ({
  parts: [],
  text: '',
  reasoning: '',
  toolCalls: [],
  finish: { unified: 'other', raw: null },
  usage: {},
  responseId: null,
  model: null,
});

/** Consumes one streamed response, forwarding every part to `onPart` (live UI only). */
export async function collectModelTurn(
  gateway: ModelGateway,
  request: ModelRequest,
  signal: AbortSignal,
  onPart: (part: StreamPart) => void,
): Promise<ModelTurnOutcome> {
  const turn = emptyTurn();
  const reply = createReplyAssembler();
  let toolOutputStarted = false;
  for await (const part of gateway.stream(request, signal)) {
    onPart(part);
    reply.push(part);
    switch (part.type) {
      case 'text-delta':
        turn.text += part.delta;
        break;
      case 'reasoning-delta':
        turn.reasoning += part.delta;
        break;
      case 'tool-input-start':
        toolOutputStarted = true;
        break;
      case 'tool-call':
        toolOutputStarted = true;
        turn.toolCalls.push({ callId: part.callId, name: part.name, rawArguments: part.rawArguments });
        break;
      case 'response-metadata':
        turn.responseId = part.id ?? turn.responseId;
        turn.model = part.model ?? turn.model;
        break;
      case 'finish':
        turn.finish = part.reason;
        turn.usage = part.usage;
        turn.parts = reply.parts();
        return { kind: 'completed', turn };
      case 'error':
        return { kind: 'failed', error: part.error, partial: turn, toolOutputStarted };
    }
  }
  return {
    kind: 'failed',
    error: { code: 'model.stream_failed', message: 'The model stream ended without a finish.' },
    partial: turn,
    toolOutputStarted,
  };
}
