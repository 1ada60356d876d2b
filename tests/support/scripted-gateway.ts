import type { ModelRequest, StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';

export type ScriptedTurn =
  | { text?: string; toolCalls?: { callId: string; name: string; arguments: string }[] }
  | {
      error: {
        code: 'model.request_failed' | 'model.provider_rate_limited';
        message: string;
        retryable?: boolean;
      };
    }
  /** Streams `text` word by word and then waits until the request is aborted. */
  | { hangAfter: string };

/**
 * An in-memory model for runtime tests: replays scripted turns as canonical parts and records
 * every request it was sent.
 */
export function scriptedGateway(turns: ScriptedTurn[]) {
  const requests: ModelRequest[] = [];
  const queue = [...turns];
  const gateway: ModelGateway = {
    provider: 'scripted',
    async *stream(request, signal): AsyncIterable<StreamPart> {
      requests.push(structuredClone(request));
      yield { type: 'turn-start', warnings: [] };
      const turn = queue.shift();
      if (!turn) {
        yield { type: 'error', error: { code: 'model.request_failed', message: 'no scripted turn left' } };
        return;
      }
      if ('error' in turn) {
        yield { type: 'error', error: turn.error };
        return;
      }
      if ('hangAfter' in turn) {
        yield { type: 'text-start', blockId: 't' };
        for (const w of turn.hangAfter.split(' ')) yield { type: 'text-delta', blockId: 't', delta: `${w} ` };
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        yield { type: 'error', error: { code: 'model.cancelled', message: 'cancelled' } };
        return;
      }
      if (turn.text) {
        yield { type: 'text-start', blockId: 't' };
        yield { type: 'text-delta', blockId: 't', delta: turn.text };
        yield { type: 'text-end', blockId: 't' };
      }
      for (const call of turn.toolCalls ?? []) {
        yield { type: 'tool-call', callId: call.callId, name: call.name, rawArguments: call.arguments };
      }
      yield {
        type: 'finish',
        reason: turn.toolCalls?.length
          ? { unified: 'tool-calls', raw: 'tool_calls' }
          : { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      };
    },
  };
  return { gateway, requests, remaining: () => queue.length };
}
