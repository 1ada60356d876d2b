/// <reference lib="webworker" />
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import {
  DexieConnectionStore,
  DexieRunStore,
  DexieSessionStore,
  DexieSettingsStore,
} from '$lib/adapters/db/stores';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import { webLocks } from '$lib/adapters/system/locks';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { defaultWriterProfile, sessionProfile } from '$lib/domain/profile';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { RunService } from '$lib/runtime/run-service';
import { SessionService } from '$lib/runtime/sessions';
import { builtinProvider, toolProviders } from '$lib/runtime/tool-catalog';
import { runtimeTools } from '$lib/tools/runtime-tools';
import { median } from './loop';

/**
 * Delegation where the runtime really runs (a dedicated worker, OPFS and IndexedDB), against
 * instant models: each agent's script is chosen by its first message, and its next step by how
 * many turns it has had. Nothing waits, so the time is the runtime's.
 */
type Step = { name: string; args: object } | { text: string };
type Script = (turn: number) => Step;

const firstUser = (r: ModelRequest) =>
  r.messages
    .find((m) => m.role === 'user')
    ?.parts.map((p) => (p.type === 'text' ? p.text : ''))
    .join('') ?? '';

function instantAgents(scripts: Record<string, Script>): ModelGateway {
  return {
    provider: 'bench',
    async *stream(request): AsyncIterable<StreamPart> {
      const text = firstUser(request);
      const key = Object.keys(scripts).find((k) => k !== 'root' && text.includes(k)) ?? 'root';
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      const step = scripts[key]!(turn);
      yield { type: 'turn-start', warnings: [] };
      if ('text' in step) {
        yield { type: 'text-delta', blockId: 't', delta: step.text };
        yield { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: {} };
        return;
      }
      yield {
        type: 'tool-call',
        callId: `${key}-${turn}`,
        name: step.name,
        rawArguments: JSON.stringify(step.args),
      };
      yield { type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: {} };
    },
  };
}

const write = (marker: string, turn: number): Step => ({
  name: 'workspace_write_file',
  args: { path: `work/${marker.replace(/\W/g, '')}-${turn}.md`, content: `turn ${turn}` },
});
/** A child that writes `rounds` files, then returns. */
const child =
  (marker: string, rounds: number): Script =>
  (turn) =>
    turn < rounds ? write(marker, turn) : { name: 'task_return', args: { summary: `${marker} done` } };
/** A root that delegates to `markers` in one turn, awaits them all, then answers. */
const delegating =
  (markers: string[]): Script =>
  (turn) =>
    turn === 0
      ? { name: 'agent_delegate', args: { agentId: 'worker', task: { objective: `Do ${markers[0]}` } } }
      : turn < markers.length
        ? { name: 'agent_delegate', args: { agentId: 'worker', task: { objective: `Do ${markers[turn]}` } } }
        : turn === markers.length
          ? { name: 'agent_await', args: { mode: 'allCompleted' } }
          : { text: 'done' };
/** A root doing the same number of turns with cheap calls of its own (the baseline). */
const plain =
  (turns: number): Script =>
  (turn) =>
    turn < turns ? { name: 'workspace_list_files', args: {} } : { text: 'done' };

const scope = self as unknown as DedicatedWorkerGlobalScope;
scope.onmessage = async (e: MessageEvent<{ repeats: number; rounds: number }>) => {
  const { repeats, rounds } = e.data;
  const db = openHearthDatabase(`hearth-bench-delegation-${Date.now()}`);
  const runs = new DexieRunStore(db);
  const journal = new DexieJournal(db, systemClock);
  const locks = webLocks(navigator.locks);
  const profiles = new DexieProfileStore(db);
  const session = sessionProfile();
  await profiles.put({
    ...session,
    delegation: { ...session.delegation, canDelegate: true },
    tools: {
      ...session.tools,
      allow: [...session.tools.allow, 'builtin:agent.delegate', 'builtin:agent.await'],
    },
  });
  const writer = defaultWriterProfile();
  await profiles.put({
    ...writer,
    id: 'worker',
    displayName: 'Worker',
    delegation: { ...writer.delegation, callable: true, allowAsSubagent: true },
  });
  let scripts: Record<string, Script> = {};
  const service = new SessionService({
    sessions: new DexieSessionStore(db),
    runs,
    journal,
    connections: new DexieConnectionStore(db),
    settings: new DexieSettingsStore(db),
    workspaces: new TieredWorkspaceStore(new OpfsWorkspaceStore(), new DexieRecordStore(db)),
    locks,
    gatewayFor: () => instantAgents(scripts),
    providers: toolProviders([builtinProvider(runtimeTools.session)]),
    clock: systemClock,
    ids: randomIds,
    profiles,
    sleep: async () => {},
    images: new JsquashImageNormalizer(),
    service: new RunService({ runs, journal, locks, clock: systemClock, ids: randomIds }),
  });
  const time = async (s: Record<string, Script>) => {
    scripts = s;
    const created = await service.create();
    const t = performance.now();
    for await (const u of service.send(created.id, 'go')) {
      if (u.type === 'event' && u.event.type === 'run_failed')
        throw new Error(JSON.stringify(u.event.payload));
    }
    return performance.now() - t;
  };
  const lines: string[] = [];
  // A delegate + await round trip: root 3 turns + child 1 turn, against 4 plain turns.
  const delegated: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < repeats; i++) {
    delegated.push(await time({ root: delegating(['[one]']), '[one]': child('[one]', 0) }));
    baseline.push(await time({ root: plain(3 + 1) }));
  }
  lines.push(
    `RESULT delegation_round_trip runs=${repeats} delegate_await_run_median_ms=${median(delegated).toFixed(1)} ` +
      `baseline_same_turns_plain_median_ms=${median(baseline).toFixed(1)} added_median_ms=${(median(delegated) - median(baseline)).toFixed(1)}`,
  );
  // Three children of `rounds` rounds at once, against one child of 3 x `rounds`.
  const three = await time({
    root: delegating(['[a]', '[b]', '[c]']),
    '[a]': child('[a]', rounds),
    '[b]': child('[b]', rounds),
    '[c]': child('[c]', rounds),
  });
  const one = await time({ root: delegating(['[solo]']), '[solo]': child('[solo]', 3 * rounds) });
  lines.push(
    `RESULT delegation_concurrency three_children_x${rounds}_rounds_ms=${three.toFixed(0)} one_child_x${3 * rounds}_rounds_ms=${one.toFixed(0)} ratio=${(three / one).toFixed(2)}`,
  );
  db.close();
  scope.postMessage({ lines });
};
