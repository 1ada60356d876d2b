import { describe, expect, it } from 'vitest';
import { memoryLocks } from '$lib/adapters/system/locks';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { RunEvent } from '$lib/domain/events';
import { sessionProfile } from '$lib/domain/profile';
import type { RunId } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { Journal } from '$lib/ports/journal';
import type { BusMessage, RunBus } from '$lib/ports/run-bus';
import type { ApprovalDecision } from '$lib/runtime/approvals';
import { chatHarness } from '../../support/chat-harness';
import { collect, openTab, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway, type ScriptedTurn } from '../../support/scripted-gateway';

/**
 * The one run engine (issue 13): Session and Chat runs pinned to their exact journals, calls that
 * ask the person first, and the four bugs the old two loops had.
 */

/** A journal as a list: each event's type, with the status a `status_changed` moved to. */
const journal = (updates: readonly RunUpdate[]) =>
  updates.flatMap((u) =>
    u.type === 'event'
      ? [u.event.type === 'status_changed' ? `status:${u.event.payload.status}` : u.event.type]
      : [],
  );
const eventsOf = (updates: readonly RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event as RunEvent] : []));

const call = (callId: string, name: string, args: object) => ({
  toolCalls: [{ callId, name, arguments: JSON.stringify(args) }],
});
const writeA = call('w1', 'workspace_write_file', { path: 'work/a.md', content: 'A' });

/** The journal of one model round that writes a file: request, response, the call, its checkpoint. */
const WRITE_ROUND = [
  'status:calling_model',
  'model_request_created',
  'model_response_stored',
  'model_completed',
  'tool_call_requested',
  'tool_call_started',
  'status:dispatching_tool',
  'workspace_file_written',
  'status:creating_checkpoint',
  'checkpoint_created',
  'tool_result_stored',
  'tool_call_completed',
];
const ANSWER_ROUND = [
  'status:calling_model',
  'model_request_created',
  'model_response_stored',
  'model_completed',
];
const SESSION_START = [
  'run_created',
  'status:assembling_context',
  'profile_resolved',
  'agent_invocation_created',
  'agent_invocation_started',
  'context_assembled',
];
const SESSION_END = ['agent_invocation_completed', 'status:completed', 'run_completed'];

/** A Session whose profile asks before `workspace_write_file`. */
async function askingSession(turns: ScriptedTurn[]) {
  const model = scriptedGateway(turns);
  const h = runtimeHarness(model.gateway);
  await h.ready;
  const profile = sessionProfile();
  await h.profiles.put({
    ...profile,
    tools: { ...profile.tools, ask: ['builtin:workspace.write_file'] },
  });
  const session = await h.service.create();
  return { model, h, session };
}

/** Follows a run and answers each approval it asks for with the next decision. */
async function answering(
  updates: AsyncIterable<RunUpdate>,
  decide: (runId: RunId, approvalId: string) => Promise<void> | void,
): Promise<RunUpdate[]> {
  const seen: RunUpdate[] = [];
  let runId: RunId | null = null;
  for await (const u of updates) {
    seen.push(u);
    if (u.type === 'run') runId = u.run.id;
    if (u.type === 'event' && u.event.type === 'tool_call_awaiting_approval') {
      void decide(runId!, u.event.payload.approvalId);
    }
  }
  return seen;
}

describe('one engine: the exact journals', () => {
  it('a Session run that writes a file and answers', async () => {
    const model = scriptedGateway([writeA, { text: 'done' }]);
    const h = runtimeHarness(model.gateway);
    await h.ready;
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'go'));
    expect(journal(updates)).toEqual([...SESSION_START, ...WRITE_ROUND, ...ANSWER_ROUND, ...SESSION_END]);
  });

  it('a Chat run that drafts, commits and finishes: one checkpoint per write', async () => {
    const model = scriptedGateway([
      call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'Hello.' }),
      call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
    ]);
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    const updates = await collect(service.send(chat.id, 'hi'));
    expect(journal(updates)).toEqual([
      'run_created',
      'status:initializing_workspace',
      'status:assembling_context',
      'persistent_projection_initialized',
      'profile_resolved',
      'chat_prompt_assembled',
      'agent_invocation_created',
      'agent_invocation_started',
      'context_assembled',
      ...WRITE_ROUND,
      'status:calling_model',
      'model_request_created',
      'model_response_stored',
      'model_completed',
      'tool_call_requested',
      'tool_call_started',
      'status:dispatching_tool',
      'chat_commit_started',
      'status:creating_checkpoint',
      'checkpoint_created',
      'status:awaiting_host_commit',
      'chat_commit_requested',
      'status:dispatching_tool',
      'chat_commit_completed',
      'chat_commit_recorded',
      'tool_result_stored',
      'tool_call_completed',
      'agent_loop_finished',
      'agent_invocation_completed',
      'persistent_changes_committed',
      'status:completed',
      'run_completed',
    ]);
    // The bug: each write journaled its checkpoint twice, with the same id.
    const checkpoints = eventsOf(updates).flatMap((e) =>
      e.type === 'checkpoint_created' ? [e.payload.checkpointId] : [],
    );
    expect(checkpoints).toEqual(['cp_000001', 'cp_000002']);
    // The committed message's id reaches the model (it was always null).
    const stored = eventsOf(updates).find((e) => e.type === 'chat_commit_recorded');
    expect(stored).toMatchObject({ payload: { messageId: '2', messageIndex: 2, commitCount: 1 } });
  });

  it('a reply the chat cannot save journals chat_commit_failed and fails the run naming the cause', async () => {
    const model = scriptedGateway([
      call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'Hello.' }),
      call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
    ]);
    const { service, deps } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    const save = deps.chats.putMessages.bind(deps.chats);
    // The person's message is saved; the reply is not (a full disk, say).
    deps.chats.putMessages = async (rows) => {
      if (rows.some((r) => !r.isUser)) {
        throw new HearthFailure(hearthError('storage.quota_exceeded', 'The storage is full.'));
      }
      return save(rows);
    };
    const updates = await collect(service.send(chat.id, 'hi'));
    const failed = eventsOf(updates).find((e) => e.type === 'chat_commit_failed');
    expect(failed).toMatchObject({
      level: 'error',
      payload: { path: 'output/main.md', code: 'storage.quota_exceeded', message: 'The storage is full.' },
    });
    const end = eventsOf(updates).at(-1)!;
    expect(end.type).toBe('run_failed');
    expect(end.payload).toMatchObject({ code: 'agent.chat_commit_failed' });
    expect((end.payload as { message: string }).message).toContain('storage.quota_exceeded');
    expect(journal(updates)).not.toContain('chat_commit_completed');
  });

  it('stamps every event an invocation emits with its id; the run-level ones carry none', async () => {
    const model = scriptedGateway([writeA, { text: 'done' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const events = eventsOf(await collect(h.service.send(session.id, 'go')));
    const runLevel = new Set(['run_created', 'status_changed', 'profile_resolved', 'run_completed']);
    for (const e of events) {
      if (runLevel.has(e.type)) expect(e.invocationId, e.type).toBeUndefined();
      else expect(e.invocationId, e.type).toBe('inv_root');
    }
  });

  it('audit files are kept per invocation: the root keeps the round files, children get their own folder', async () => {
    const { auditPaths, sessionAuditLayout } = await import('$lib/runtime/audit-paths');
    const layout = sessionAuditLayout('run_x' as RunId);
    const root = auditPaths(layout, 'inv_root' as never);
    const child = auditPaths(layout, 'inv_child' as never);
    expect(root.modelResponse(1)).toBe('runs/run_x/model-responses/round-001.json');
    expect(child.modelResponse(1)).toBe('runs/run_x/model-responses/inv_child/round-001.json');
    expect(child.toolResult(1, 'call_a')).toBe('tool-results/run_x/inv_child/round-001-call_a.json');
  });
});

describe('a round costs few transactions', () => {
  it('a round that writes a file is three journal writes, each with the records and messages it adds', async () => {
    const model = scriptedGateway([writeA, { text: 'done' }]);
    const h = runtimeHarness(model.gateway);
    await h.ready;
    const appends: { types: string[]; files: string[]; messages: string[]; record: boolean }[] = [];
    const journal: Journal = {
      ...h.deps.journal,
      read: (...a) => h.deps.journal.read(...a),
      count: (...a) => h.deps.journal.count(...a),
      deleteEvents: (...a) => h.deps.journal.deleteEvents(...a),
      append: (runId, events, write) => {
        appends.push({
          types: events.map((e) => (e.type === 'status_changed' ? `status:${e.payload.status}` : e.type)),
          files: (write?.files ?? []).map((f) => f.path.replaceAll(runId, 'RUN').replace(/call_\w+/, 'call')),
          messages: (write?.messages ?? []).map((m) => m.role),
          record: write?.record !== undefined,
        });
        return h.deps.journal.append(runId, events, write);
      },
    };
    const tab = openTab({ ...h.deps, journal });
    const session = await tab.service.create();
    await collect(tab.service.send(session.id, 'go'));
    const round = appends.slice(
      appends.findIndex((a) => a.types.includes('model_request_created')),
      appends.findIndex((a) => a.types.includes('tool_call_completed')) + 1,
    );
    expect(round).toEqual([
      { types: ['status:calling_model', 'model_request_created'], files: [], messages: [], record: true },
      {
        // Nothing acts on the response before it, its message and the call's opening are durable.
        types: [
          'model_response_stored',
          'model_completed',
          'tool_call_requested',
          'tool_call_started',
          'status:dispatching_tool',
        ],
        files: ['runs/RUN/model-responses/round-001.json', 'runs/RUN/tool-args/round-001-call.json'],
        messages: ['assistant'],
        record: true,
      },
      {
        types: [
          'workspace_file_written',
          'status:creating_checkpoint',
          'checkpoint_created',
          'tool_result_stored',
          'tool_call_completed',
        ],
        files: [
          'runs/RUN/checkpoints/cp_000001/checkpoint.json',
          'runs/RUN/checkpoints/cp_000001/files/work/a.md',
          'tool-results/RUN/round-001-call.json',
        ],
        messages: ['tool'],
        record: true,
      },
    ]);
    // The checkpoint names the journal seq of the change it keeps, stored in the same write.
    const ws = await tab.service.workspace(session.id);
    const events = await h.journal.read((await tab.service.get(session.id)).runs[0]!.id, { limit: 500 });
    const written = events.find((e) => e.type === 'workspace_file_written')!;
    const cp = await ws.read(`runs/${written.runId}/checkpoints/cp_000001/checkpoint.json` as never);
    expect(cp.ok && JSON.parse(new TextDecoder().decode(cp.value))).toMatchObject({ eventSeq: written.seq });
  });
});

describe('a call that asks first (D20)', () => {
  const ASKED = ['tool_call_requested', 'status:awaiting_approval', 'tool_call_awaiting_approval'];

  it("the call's elapsed time starts when it runs: the wait for the person is not the tool's", async () => {
    const { h, session } = await askingSession([writeA, { text: 'done' }]);
    let now = 1_000;
    const tab = openTab({ ...h.deps, clock: { now: () => now } });
    const updates = await answering(tab.service.send(session.id, 'go'), (runId, id) => {
      now += 600_000; // ten minutes to decide
      return tab.runService.decide(runId, id, { decision: 'approve' });
    });
    const completed = eventsOf(updates).find((e) => e.type === 'tool_call_completed');
    expect(completed?.type === 'tool_call_completed' && completed.payload.elapsedMs).toBe(0);
  });

  it('waits for the person; Approve runs it', async () => {
    const { h, session, model } = await askingSession([writeA, { text: 'done' }]);
    const updates = await answering(h.service.send(session.id, 'go'), (runId, id) =>
      h.runService.decide(runId, id, { decision: 'approve' }),
    );
    expect(journal(updates)).toEqual([
      ...SESSION_START,
      'status:calling_model',
      'model_request_created',
      'model_response_stored',
      'model_completed',
      ...ASKED,
      'tool_call_approved',
      'tool_call_started',
      'status:dispatching_tool',
      'workspace_file_written',
      'status:creating_checkpoint',
      'checkpoint_created',
      'tool_result_stored',
      'tool_call_completed',
      ...ANSWER_ROUND,
      ...SESSION_END,
    ]);
    const asked = eventsOf(updates).find((e) => e.type === 'tool_call_awaiting_approval');
    expect(asked).toMatchObject({
      invocationId: 'inv_root',
      payload: {
        callId: 'w1',
        callName: 'workspace_write_file',
        toolId: 'builtin:workspace.write_file',
        source: 'Hearth',
      },
    });
    expect(model.requests).toHaveLength(2);
  });

  it('Deny runs nothing and tells the model, which goes on', async () => {
    const { h, session, model } = await askingSession([writeA, { text: 'I will not write it.' }]);
    const updates = await answering(h.service.send(session.id, 'go'), (runId, id) =>
      h.runService.decide(runId, id, { decision: 'deny' }),
    );
    expect(journal(updates)).toEqual([
      ...SESSION_START,
      'status:calling_model',
      'model_request_created',
      'model_response_stored',
      'model_completed',
      ...ASKED,
      'tool_call_denied',
      'tool_result_stored',
      'tool_call_failed',
      ...ANSWER_ROUND,
      ...SESSION_END,
    ]);
    const result = model.requests[1]!.messages.at(-1)!.parts[0];
    expect(result).toMatchObject({ type: 'tool-result', callId: 'w1', isError: true });
    expect((result as { content: string }).content).toContain('declined');
    const ws = await h.workspaces.open(`sessions/${session.id}`);
    expect(ws.ok && (await ws.value.stat('work/a.md' as never))).toEqual({ ok: true, value: null });
  });

  it('the person may edit the arguments before approving: the edit runs, and both are kept', async () => {
    const { h, session } = await askingSession([writeA, { text: 'done' }]);
    const edit = { path: 'work/b.md', content: 'edited by the person' };
    const updates = await answering(h.service.send(session.id, 'go'), (runId, id) =>
      h.runService.decide(runId, id, { decision: 'approve', arguments: edit }),
    );
    const ws = await h.workspaces.open(`sessions/${session.id}`);
    if (!ws.ok) throw new Error('workspace');
    const read = async (p: string) => {
      const r = await ws.value.read(p as never);
      return r.ok ? new TextDecoder().decode(r.value) : r.error.code;
    };
    expect(await read('work/b.md')).toBe('edited by the person');
    expect(await read('work/a.md')).toBe('workspace.file_not_found');
    const approved = eventsOf(updates).find((e) => e.type === 'tool_call_approved');
    const ref = approved?.type === 'tool_call_approved' ? approved.payload.argumentsRef : undefined;
    expect(ref).toMatch(/tool-args\/round-001-call_\w+\.approved\.json$/);
    expect(JSON.parse(await read(ref!))).toMatchObject({ arguments: edit });
    const asked = eventsOf(updates).find((e) => e.type === 'tool_call_awaiting_approval');
    const original = asked?.type === 'tool_call_awaiting_approval' ? asked.payload.argumentsRef : '';
    expect(JSON.parse(await read(original))).toMatchObject({
      arguments: { path: 'work/a.md', content: 'A' },
    });
  });

  it('an edit the tool refuses reaches the model as invalid arguments, and nothing runs', async () => {
    const { h, session, model } = await askingSession([writeA, { text: 'done' }]);
    await answering(h.service.send(session.id, 'go'), (runId, id) =>
      h.runService.decide(runId, id, { decision: 'approve', arguments: { path: 'work/c.md' } }),
    );
    const result = model.requests[1]!.messages.at(-1)!.parts[0] as { content: string; isError: boolean };
    expect(result.isError).toBe(true);
    expect(result.content).toContain('as the person edited them are not valid');
    const ws = await h.workspaces.open(`sessions/${session.id}`);
    expect(ws.ok && (await ws.value.stat('work/c.md' as never))).toEqual({ ok: true, value: null });
  });

  it('Always allow is stored in the profile, and the run asks no more', async () => {
    const writeB = call('w2', 'workspace_write_file', { path: 'work/b.md', content: 'B' });
    const { h, session } = await askingSession([writeA, writeB, { text: 'done' }]);
    const decisions: ApprovalDecision[] = [];
    const updates = await answering(h.service.send(session.id, 'go'), (runId, id) => {
      decisions.push('always');
      return h.runService.decide(runId, id, { decision: 'always' });
    });
    expect(decisions).toHaveLength(1);
    expect(journal(updates).filter((t) => t === 'tool_call_awaiting_approval')).toHaveLength(1);
    expect(eventsOf(updates).find((e) => e.type === 'tool_call_approved')).toMatchObject({
      payload: { always: true },
    });
    expect((await h.profiles.get('session'))?.tools.ask).toEqual([]);
    expect(journal(updates).at(-1)).toBe('run_completed');
  });

  it('Stop while it waits cancels the run cleanly', async () => {
    const { h, session } = await askingSession([writeA]);
    const updates = await answering(h.service.send(session.id, 'go'), (runId) => h.runService.cancel(runId));
    expect(journal(updates)).toEqual([
      ...SESSION_START,
      'status:calling_model',
      'model_request_created',
      'model_response_stored',
      'model_completed',
      ...ASKED,
      'run_cancel_requested',
      'status:cancelling',
      'agent_invocation_cancelled',
      'status:cancelled',
      'run_cancelled',
    ]);
    await expect(
      h.runService.decide(updates.find((u) => u.type === 'run')!.run.id, 'x', { decision: 'approve' }),
    ).resolves.toBe(undefined);
  });

  it('a tab closed while it waits leaves the run interrupted; resume asks again', async () => {
    const { h, session, model } = await askingSession([writeA, { text: 'done' }]);
    // Tab A asks, then its page goes away: it never answers and never runs again.
    const tabA = openTab({ ...h.deps, locks: memoryLocks() });
    const asked = new Promise<RunId>(
      (resolve) => void answering(tabA.service.send(session.id, 'go'), (runId) => resolve(runId)),
    );
    const runId = await asked;
    // Tab B starts: the run is not its own and no live tab holds its lock.
    const tabB = openTab(h.deps);
    await tabB.recoverInterrupted();
    expect((await h.runs.get(runId))?.status).toBe('interrupted');

    const resumed = await answering(tabB.runService.resume(runId), (id, approvalId) =>
      tabB.runService.decide(id, approvalId, { decision: 'approve' }),
    );
    expect(journal(resumed)).toEqual([
      'run_resumed',
      'status:assembling_context',
      'agent_invocation_created',
      'agent_invocation_started',
      'context_assembled',
      // The call never ran: it is made again, and asks again.
      ...ASKED,
      'tool_call_approved',
      'tool_call_started',
      'status:dispatching_tool',
      'workspace_file_written',
      'status:creating_checkpoint',
      'checkpoint_created',
      'tool_result_stored',
      'tool_call_completed',
      ...ANSWER_ROUND,
      ...SESSION_END,
    ]);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]!.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('another tab following the run can answer', async () => {
    const { h, session } = await askingSession([writeA, { text: 'done' }]);
    const bus = sharedBus();
    const owner = openTab(h.deps, { bus: bus() });
    const other = openTab(h.deps, { bus: bus() });
    const updates = await answering(owner.service.send(session.id, 'go'), (runId, id) =>
      other.runService.decide(runId, id, { decision: 'approve' }),
    );
    expect(journal(updates)).toContain('tool_call_approved');
    expect(journal(updates).at(-1)).toBe('run_completed');
  });
});

describe('the old loops’ bugs, fixed', () => {
  it('Guide reaches a Chat run', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const requests: unknown[] = [];
    const model = scriptedGateway([
      call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'Hi.' }),
      call('c1', 'workspace_commit', { finish: true }),
    ]);
    const gated = {
      provider: 'scripted',
      async *stream(request: never, signal: AbortSignal) {
        requests.push(request);
        if (requests.length === 1) await gate;
        yield* model.gateway.stream(request, signal);
      },
    };
    const { service, runService } = await chatHarness(gated);
    const chat = await service.create('c1');
    let guided = false;
    for await (const u of service.send(chat.id, 'hello')) {
      if (u.type === 'event' && u.event.type === 'model_request_created' && !guided) {
        guided = true;
        const run = (await runService.run(u.event.runId)).id;
        await runService.guide(run, 'Sign it with a paw print.');
        release();
      }
    }
    const second = JSON.stringify(model.requests[1]);
    expect(second).toContain('Sign it with a paw print.');
  });

  it('a watcher that goes away lets go of the run: nothing buffers for it', async () => {
    const model = scriptedGateway([{ hangAfter: 'thinking about it' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const sending = h.service.send(session.id, 'go')[Symbol.asyncIterator]();
    const first = (await sending.next()).value as Extract<RunUpdate, { type: 'run' }>;
    const runId = first.run.id;
    const watching = h.runService.watch(runId)[Symbol.asyncIterator]();
    await watching.next();
    expect(h.runService.feed.listeners(runId)).toBe(2);
    await watching.return?.();
    await sending.return?.();
    expect(h.runService.feed.listeners(runId)).toBe(0);
    await h.runService.cancel(runId);
    expect((await h.runs.get(runId))?.status).toBe('cancelled');
  });

  it('a stopped round counts, and its streamed text is kept, marked as cut off', async () => {
    const model = scriptedGateway([{ hangAfter: 'half of an answer' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    for await (const u of h.service.send(session.id, 'go')) {
      if (u.type === 'part' && u.part.type === 'text-delta' && u.part.delta.startsWith('answer')) {
        void h.runService.cancel((await h.runs.listForSession(session.id))[0]!.id);
      }
    }
    const { runs, messages } = await h.service.get(session.id);
    expect(runs[0]).toMatchObject({ status: 'cancelled', rounds: 1 });
    expect(messages.at(-1)).toMatchObject({
      role: 'assistant',
      interrupted: true,
      parts: [{ type: 'text', text: 'half of an answer ' }],
    });
  });

  it('a tab closed mid-stream keeps what had streamed, marked as cut off, after reload', async () => {
    let clock = 1_000;
    const model = scriptedGateway([{ hangAfter: 'words that were already on screen' }]);
    const h = runtimeHarness(model.gateway);
    // The streamed text is kept once a second: let time pass between parts.
    const tabA = openTab({ ...h.deps, locks: memoryLocks(), clock: { now: () => (clock += 600) } });
    const session = await h.service.create();
    let runId: RunId | null = null;
    for await (const u of tabA.service.send(session.id, 'go')) {
      if (u.type === 'run') runId = u.run.id;
      if (u.type === 'part' && u.part.type === 'text-delta' && u.part.delta.startsWith('on')) break;
    }
    // The tab is gone; a new one opens the session.
    const tabB = openTab(h.deps);
    await tabB.recoverInterrupted();
    const { runs, messages } = await tabB.service.get(session.id);
    expect(runs[0]).toMatchObject({ id: runId, status: 'interrupted', rounds: 1 });
    const kept = messages.at(-1)!;
    expect(kept).toMatchObject({ role: 'assistant', interrupted: true });
    expect((kept.parts[0] as { text: string }).text).toMatch(/^words that were/);
  });
});

describe('watchers see how a run ends', () => {
  const lastRun = (updates: RunUpdate[]) =>
    updates.filter((u): u is Extract<RunUpdate, { type: 'run' }> => u.type === 'run').at(-1)?.run.status;

  it('a page that opened a run left behind gets its interrupted record when the new tab marks it', async () => {
    const model = scriptedGateway([{ hangAfter: 'cut off here' }]);
    const h = runtimeHarness(model.gateway);
    const tabA = openTab({ ...h.deps, locks: memoryLocks() });
    const session = await h.service.create();
    let runId: RunId | null = null;
    for await (const u of tabA.service.send(session.id, 'go')) {
      if (u.type === 'run') runId = u.run.id;
      if (u.type === 'part' && u.part.type === 'text-delta') break;
    }
    const tabB = openTab(h.deps);
    // The page follows the run before the new tab has looked at it: it is still "calling model".
    const watching = collect(tabB.runService.watch(runId!));
    await tabB.recoverInterrupted();
    const seen = await watching;
    expect(lastRun(seen)).toBe('interrupted');
    expect(journal(seen).at(-1)).toBe('run_interrupted');
  });

  it('a page following a run live gets its completed record before the stream ends', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const model = scriptedGateway([{ text: 'done' }]);
    const h = runtimeHarness({
      provider: 'scripted',
      async *stream(request, signal) {
        await gate;
        yield* model.gateway.stream(request, signal);
      },
    });
    await h.ready;
    const session = await h.service.create();
    const sending = h.service.send(session.id, 'go')[Symbol.asyncIterator]();
    const first = (await sending.next()).value as Extract<RunUpdate, { type: 'run' }>;
    const watching = collect(h.runService.watch(first.run.id));
    release();
    while (!(await sending.next()).done);
    const seen = await watching;
    expect(lastRun(seen)).toBe('completed');
    expect(journal(seen).at(-1)).toBe('run_completed');
  });
});

/** BroadcastChannel semantics in one process: every other listener, never the sender. */
function sharedBus(): () => RunBus {
  type Message = BusMessage;
  const listeners = new Set<(m: Message) => void>();
  return () => {
    const mine = new Set<(m: Message) => void>();
    return {
      post: (m: Message) => listeners.forEach((l) => !mine.has(l) && l(structuredClone(m))),
      listen(handler: (m: Message) => void) {
        mine.add(handler);
        listeners.add(handler);
        return () => {
          listeners.delete(handler);
          mine.delete(handler);
        };
      },
    };
  };
}
