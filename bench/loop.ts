import type { ModelRequest, StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { SessionService } from '$lib/runtime/sessions';
import type { BuiltinTool } from '$lib/tools/tool';
import { workspaceTools } from '$lib/tools/workspace';

/**
 * An instant model: every round asks for one `workspace_write_file` call until `rounds` are
 * done, then answers. Nothing waits, so time spent is the runtime's and the tool's.
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

/** The workspace tools, with the time each `workspace_write_file` execution took recorded. */
export function timedWorkspaceTools(): { tools: BuiltinTool[]; writes: number[] } {
  const writes: number[] = [];
  const tools = workspaceTools.map((tool) =>
    tool.name !== 'workspace.write_file'
      ? tool
      : ({
          ...tool,
          execute: async (input, ctx) => {
            const t = performance.now();
            const out = await tool.execute(input, ctx);
            writes.push(performance.now() - t);
            return out;
          },
        } as BuiltinTool),
  );
  return { tools, writes };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Per round: its whole duration, and what the runtime added around the tool's own execution. */
export interface RoundTimes {
  round: number[];
  overhead: number[];
  /** `workspace_write_file` as the run viewer shows it: the call's `elapsedMs`. */
  call: number[];
  /** The same call from `tool_call_started` to `tool_call_completed` reaching the page. */
  callSeen: number[];
}

/** Runs one Session run of `rounds` rounds (tool executions timed in `writes`). */
export async function measureRounds(
  service: SessionService,
  rounds: number,
  writes: number[],
): Promise<RoundTimes> {
  const session = await service.create();
  const starts: number[] = [];
  const callStarts: number[] = [];
  const call: number[] = [];
  const callSeen: number[] = [];
  let end = 0;
  for await (const u of service.send(session.id, 'bench')) {
    if (u.type !== 'event') continue;
    const now = performance.now();
    if (u.event.type === 'model_request_created') starts.push(now);
    if (u.event.type === 'tool_call_started') callStarts.push(now);
    if (u.event.type === 'tool_call_completed') {
      call.push(u.event.payload.elapsedMs);
      callSeen.push(now - callStarts.at(-1)!);
    }
    if (u.event.type === 'run_completed') end = now;
  }
  if (starts.length !== rounds) throw new Error(`expected ${rounds} rounds, saw ${starts.length}`);
  const round = starts.map((t, i) => (starts[i + 1] ?? end) - t);
  // The last round answers without a call.
  const overhead = round.map((r, i) => r - (writes[i] ?? 0));
  return { round, overhead, call, callSeen };
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

/** The RESULT line of a loop benchmark. */
export function loopResult(
  label: string,
  rounds: number,
  times: RoundTimes,
  writes: number[],
  bare: number[],
) {
  return (
    `RESULT ${label} rounds=${rounds} median_ms_per_round=${median(times.round).toFixed(3)} ` +
    `runtime_overhead_median_ms=${median(times.overhead).toFixed(3)} ` +
    `write_file_execute_median_ms=${median(writes).toFixed(3)} ` +
    `write_file_call_elapsed_median_ms=${median(times.call).toFixed(3)} ` +
    `write_file_call_started_to_completed_median_ms=${median(times.callSeen).toFixed(3)} ` +
    `baseline_bare_model_median_ms=${median(bare).toFixed(4)}`
  );
}

/** Adds the time every awaited call of `target`'s methods takes to `spent.ms`. */
export function timed<T extends object>(target: T, spent: { ms: number }): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const start = performance.now();
        const out = value.apply(t, args);
        if (!(out instanceof Promise)) return out;
        return out.finally(() => (spent.ms += performance.now() - start));
      };
    },
  });
}

/** The runtime's overhead split into the database's share (journal, session messages) and its own. */
export function splitResult(label: string, times: RoundTimes, storageMs: number) {
  const rounds = times.round.length;
  const overhead = times.overhead.reduce((a, b) => a + b, 0) / rounds;
  const storage = storageMs / rounds;
  return (
    `RESULT ${label}-split mean_overhead_ms=${overhead.toFixed(3)} ` +
    `database_mean_ms=${storage.toFixed(3)} runtime_own_mean_ms=${(overhead - storage).toFixed(3)}`
  );
}
