import type { ModelRequest, StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { SessionService } from '$lib/runtime/sessions';

/**
 * An instant model: every round asks for one `workspace_write_file` call until `rounds` are
 * done, then answers. Nothing waits, so time spent is the runtime's own overhead.
 */
export function instantModel(rounds: number): ModelGateway {
  let round = 0;
  return {
    provider: 'bench',
    async *stream(_request: ModelRequest): AsyncIterable<StreamPart> {
      round++;
      yield { type: 'turn-start', warnings: [] };
      if (round < rounds) {
        yield {
          type: 'tool-call',
          callId: `c${round}`,
          name: 'workspace_write_file',
          rawArguments: JSON.stringify({ path: `work/r${round}.md`, content: `round ${round}` }),
        };
        yield { type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: {} };
      } else {
        yield { type: 'text-delta', blockId: 't', delta: 'done' };
        yield { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: {} };
      }
    },
  };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Runs one Session run of `rounds` rounds and returns the duration of each round in ms. */
export async function measureRounds(service: SessionService, rounds: number): Promise<number[]> {
  const session = await service.create();
  const starts: number[] = [];
  let end = 0;
  for await (const u of service.send(session.id, 'bench')) {
    if (u.type === 'event' && u.event.type === 'model_request_created') starts.push(performance.now());
    if (u.type === 'event' && u.event.type === 'run_completed') end = performance.now();
  }
  if (starts.length !== rounds) throw new Error(`expected ${rounds} rounds, saw ${starts.length}`);
  return starts.map((t, i) => (starts[i + 1] ?? end) - t);
}

/** The baseline: the same model consumed directly, with no runtime around it. */
export async function measureBareModel(rounds: number): Promise<number[]> {
  const model = instantModel(rounds);
  const out: number[] = [];
  const request: ModelRequest = { model: 'bench', messages: [], tools: [], toolChoice: 'auto' };
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    for await (const _ of model.stream(request, new AbortController().signal)) void _;
    out.push(performance.now() - t);
  }
  return out;
}
