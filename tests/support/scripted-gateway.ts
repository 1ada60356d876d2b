import type { ModelRequest, StreamPart, Usage } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';

export type ScriptedTurn =
  | {
      text?: string;
      toolCalls?: { callId: string; name: string; arguments: string }[];
      /** What the provider reports it counted; default 10 tokens in, 5 out. */
      usage?: Usage;
    }
  | {
      error: {
        code: 'model.request_failed' | 'model.provider_rate_limited';
        message: string;
        retryable?: boolean;
      };
    }
  /** Streams `text` word by word and then waits until the request is aborted. */
  | { hangAfter: string }
  /** Answers with `then` once `until` resolves (a test holds an agent back). */
  | { until: Promise<unknown>; then: ScriptedTurn };

/** One scripted turn as canonical parts (`null`: the script ran out). */
async function* replay(turn: ScriptedTurn | undefined, signal: AbortSignal): AsyncIterable<StreamPart> {
  if (turn && 'until' in turn) {
    await turn.until;
    yield* replay(turn.then, signal);
    return;
  }
  yield { type: 'turn-start', warnings: [] };
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
    // A request made after its stop is answered at once, as fetch answers an aborted signal.
    if (!signal.aborted)
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
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
    usage: turn.usage ?? { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
  };
}

/**
 * An in-memory model for runtime tests: replays scripted turns as canonical parts and records
 * every request it was sent.
 */
export function scriptedGateway(turns: ScriptedTurn[]) {
  const requests: ModelRequest[] = [];
  const queue = [...turns];
  const gateway: ModelGateway = {
    provider: 'scripted',
    stream(request, signal) {
      requests.push(structuredClone(request));
      return replay(queue.shift(), signal);
    },
  };
  return { gateway, requests, remaining: () => queue.length };
}

/**
 * Several scripted agents behind one model (a run with delegated tasks): each request goes to the
 * script whose key its first user message contains, else to `root`. Records each script's requests.
 */
export function routedGateway(scripts: Record<string, ScriptedTurn[]>) {
  const queues = new Map(Object.entries(scripts).map(([k, turns]) => [k, [...turns]]));
  const requests = new Map<string, ModelRequest[]>([...queues.keys()].map((k) => [k, []]));
  const keyOf = (request: ModelRequest) => {
    const first = request.messages.find((m) => m.role === 'user');
    const text = first?.parts.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
    return [...queues.keys()].find((k) => k !== 'root' && text.includes(k)) ?? 'root';
  };
  const gateway: ModelGateway = {
    provider: 'scripted',
    stream(request, signal) {
      const key = keyOf(request);
      requests.get(key)!.push(structuredClone(request));
      return replay(queues.get(key)!.shift(), signal);
    },
  };
  return { gateway, requests, remaining: (key: string) => queues.get(key)!.length };
}
