import type { StreamPart } from '$lib/domain/model';

export interface StreamingToolCall {
  blockId: string;
  callId: string;
  name: string;
  argumentsPreview: string;
}

/** What is streaming in the current round, before the message is saved (never journaled). */
export interface StreamingTurn {
  round: number;
  reasoning: string;
  text: string;
  toolCalls: StreamingToolCall[];
}

export const emptyTurn = (round: number): StreamingTurn => ({
  round,
  reasoning: '',
  text: '',
  toolCalls: [],
});

/** Folds one streamed part into the turn being shown (in place, so a `$state` proxy updates). */
export function applyStreamPart(turn: StreamingTurn, part: StreamPart): void {
  switch (part.type) {
    case 'text-delta':
      turn.text += part.delta;
      break;
    case 'reasoning-delta':
      turn.reasoning += part.delta;
      break;
    case 'tool-input-start':
      turn.toolCalls.push({
        blockId: part.blockId,
        callId: part.callId,
        name: part.name,
        argumentsPreview: '',
      });
      break;
    case 'tool-input-delta': {
      const call = turn.toolCalls.find((c) => c.blockId === part.blockId);
      if (call) call.argumentsPreview += part.delta;
      break;
    }
  }
}
