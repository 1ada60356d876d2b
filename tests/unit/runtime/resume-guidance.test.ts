import { describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import type { RunId, RunRecord } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { SessionMessage } from '$lib/domain/session';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import type { BusMessage, RunBus } from '$lib/ports/run-bus';
import { sessionWorkspaceKey } from '$lib/runtime/sessions';
import { collect, openTab, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

const types = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [(u.event as RunEvent).type] : []));

async function workspaceOf(h: ReturnType<typeof runtimeHarness>, sessionId: string) {
  const ws = await h.workspaces.open(sessionWorkspaceKey(sessionId));
  if (!ws.ok) throw new Error('open');
  return ws.value;
}
const path = (raw: string) => {
  const p = parseWorkspacePath(raw);
  if (!p.ok) throw new Error(raw);
  return p.value;
};

/** A run a closed tab left behind: its record, what it saved, and what it wrote. */
async function leftBehind(
  h: ReturnType<typeof runtimeHarness>,
  status: RunRecord['status'],
  messages: Omit<SessionMessage, 'sessionId' | 'index' | 'runId' | 'createdAt'>[],
) {
  const session = await h.service.create();
  const run: RunRecord = {
    id: 'run_left' as RunId,
    target: { kind: 'session', sessionId: session.id },
    connectionId: 'demo',
    model: 'm',
    status,
    rounds: 1,
    usage: {},
    createdAt: 1,
    updatedAt: 1,
  };
  await h.runs.put(run);
  await h.sessions.appendMessages(
    messages.map((m, index) => ({ ...m, sessionId: session.id, index, runId: run.id, createdAt: 1 })),
  );
  await h.recoverInterrupted();
  return { session, run };
}

describe('resume (D10)', () => {
  it('continues an interrupted run as the same run, never replaying a confirmed effect', async () => {
    const model = scriptedGateway([{ text: 'Finished: work/a.md is written.' }]);
    const h = runtimeHarness(model.gateway);
    const { session, run } = await leftBehind(h, 'dispatching_tool', [
      { role: 'user', parts: [{ type: 'text', text: 'write a' }] },
      {
        role: 'assistant',
        parts: [
          {
            type: 'tool-call',
            callId: 'w1',
            name: 'workspace_write_file',
            input: { path: 'work/a.md', content: 'A' },
          },
        ],
      },
      {
        role: 'tool',
        parts: [
          {
            type: 'tool-result',
            callId: 'w1',
            name: 'workspace_write_file',
            content: 'Wrote 1 chars',
            isError: false,
            images: [],
          },
        ],
      },
    ]);
    const ws = await workspaceOf(h, session.id);
    await ws.write(path('work/a.md'), new TextEncoder().encode('A'));
    expect((await h.runs.get(run.id))?.status).toBe('interrupted');

    const updates = await collect(h.runService.resume(run.id));
    expect(types(updates)).toContain('run_resumed');
    expect(types(updates).at(-1)).toBe('run_completed');
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    const stored = await h.service.get(session.id);
    expect(stored.runs).toHaveLength(1);
    expect(stored.runs[0]).toMatchObject({ id: run.id, status: 'completed', rounds: 2 });
    expect(stored.messages.at(-1)).toMatchObject({ role: 'assistant', runId: run.id });
    const listed = await ws.list(path(`runs/${run.id}/model-responses`));
    expect(listed.ok && listed.value.map((e) => e.path)).toEqual([
      `runs/${run.id}/model-responses/round-002.json`,
    ]);
  });

  it('reports a call whose result was never recorded as unknown instead of repeating it', async () => {
    const model = scriptedGateway([{ text: 'I checked; the file exists.' }]);
    const h = runtimeHarness(model.gateway);
    const { run } = await leftBehind(h, 'dispatching_tool', [
      { role: 'user', parts: [{ type: 'text', text: 'write a' }] },
      {
        role: 'assistant',
        parts: [
          {
            type: 'tool-call',
            callId: 'w1',
            name: 'workspace_write_file',
            input: { path: 'work/a.md', content: 'A' },
          },
        ],
      },
    ]);
    await collect(h.runService.resume(run.id));
    const sent = model.requests[0]!.messages.at(-1)!.parts[0];
    expect(sent).toMatchObject({ type: 'tool-result', callId: 'w1', isError: true });
  });

  it('refuses to resume a completed run', async () => {
    const model = scriptedGateway([{ text: 'hi' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'hello'));
    const run = updates.find((u) => u.type === 'run');
    if (run?.type !== 'run') throw new Error('no run');
    await expect(collect(h.runService.resume(run.run.id))).rejects.toMatchObject({
      code: 'agent.resume_refused',
    });
  });
});

describe('guidance (runtime.md §1.13)', () => {
  it('merges instructions added while a run works into the next request, journaled', async () => {
    const model = scriptedGateway([{ hangAfter: 'thinking' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    // First request hangs until cancelled; guidance is queued meanwhile, then the run is stopped.
    const iterator = h.service.send(session.id, 'start')[Symbol.asyncIterator]();
    const first = (await iterator.next()).value as Extract<RunUpdate, { type: 'run' }>;
    const queued = await h.runService.guide(first.run.id, '  Use British spelling.  ');
    expect(queued.pendingCount).toBe(1);
    await expect(h.runService.guide(first.run.id, '   ')).rejects.toMatchObject({
      code: 'agent.guidance_empty',
    });
    await h.runService.cancel(first.run.id);
    const journal = await h.journal.read(first.run.id, { limit: 500 });
    const submitted = journal.find((e) => e.type === 'user_guidance_submitted');
    expect(submitted?.payload).toMatchObject({ text: 'Use British spelling.', status: 'queued', chars: 21 });
    // Never applied: the run stopped first, so it is discarded with a reason.
    expect(journal.find((e) => e.type === 'user_guidance_discarded')?.payload).toMatchObject({
      count: 1,
      reason: 'run_cancelled_before_next_model_request',
    });
  });

  it('takes guidance that arrived during a final answer into one more round', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const turns = [{ text: 'Draft answer.' }, { text: 'Revised with your note.' }];
    const requests: unknown[] = [];
    const h = runtimeHarness({
      provider: 'gated',
      async *stream(request) {
        requests.push(structuredClone(request));
        yield { type: 'turn-start', warnings: [] };
        if (requests.length === 1) await gate;
        const turn = turns[requests.length - 1]!;
        yield { type: 'text-start', blockId: 't' };
        yield { type: 'text-delta', blockId: 't', delta: turn.text };
        yield { type: 'text-end', blockId: 't' };
        yield { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: {} };
      },
    });
    const session = await h.service.create();
    const updates: RunUpdate[] = [];
    let guided = false;
    const done = (async () => {
      for await (const u of h.service.send(session.id, 'answer')) {
        updates.push(u);
        if (u.type === 'event' && u.event.type === 'model_request_created' && !guided) {
          guided = true;
          const run = updates.find((x) => x.type === 'run');
          if (run?.type === 'run') await h.runService.guide(run.run.id, 'Mention the weather.');
          release();
        }
      }
    })();
    await done;
    expect(requests).toHaveLength(2);
    const second = requests[1] as { messages: { role: string; parts: { text?: string }[] }[] };
    expect(second.messages.at(-1)!.role).toBe('user');
    expect(second.messages.at(-1)!.parts[0]!.text).toContain('Mention the weather.');
    expect(types(updates)).toContain('user_guidance_applied');
    const stored = await h.service.get(session.id);
    expect(stored.messages.map((m) => [m.role, m.guidance ?? false])).toEqual([
      ['user', false],
      ['assistant', false],
      ['user', true],
      ['assistant', false],
    ]);
  });
});

describe('two tabs on one session', () => {
  /** BroadcastChannel semantics in one process: every other listener, never the sender. */
  function memoryBus() {
    const listeners = new Set<(m: BusMessage) => void>();
    return (): RunBus => {
      const mine = new Set<(m: BusMessage) => void>();
      return {
        post: (m) => listeners.forEach((l) => !mine.has(l) && l(structuredClone(m))),
        listen(handler) {
          mine.add(handler);
          listeners.add(handler);
          return () => listeners.delete(handler);
        },
      };
    };
  }

  it('the second tab follows the first tab’s run live and can stop it', async () => {
    const model = scriptedGateway([{ hangAfter: 'working on it' }]);
    const h = runtimeHarness(model.gateway);
    const bus = memoryBus();
    const tabA = openTab(h.deps, { bus: bus() });
    const tabB = openTab(h.deps, { bus: bus() });
    const session = await tabA.service.create();
    const iterator = tabA.service.send(session.id, 'go')[Symbol.asyncIterator]();
    const first = (await iterator.next()).value as Extract<RunUpdate, { type: 'run' }>;

    await expect(collect(tabB.service.send(session.id, 'me too'))).rejects.toMatchObject({
      code: 'agent.session_busy',
    });
    const followed: RunUpdate[] = [];
    let replayed!: () => void;
    const caughtUp = new Promise<void>((r) => (replayed = r));
    const following = (async () => {
      for await (const u of tabB.runService.watch(first.run.id)) {
        followed.push(u);
        if (u.type === 'event' && u.event.type === 'run_created') replayed();
      }
    })();
    await caughtUp;
    await tabB.runService.cancel(first.run.id);
    await following;
    expect(types(followed).at(-1)).toBe('run_cancelled');
    expect((await h.runs.get(first.run.id))?.status).toBe('cancelled');
  });
});
