import { describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import { HearthFailure } from '$lib/domain/errors';
import { builtinToolId } from '$lib/domain/tool-id';
import { sessionProfile } from '$lib/domain/profile';
import type { RunUpdate } from '$lib/domain/run-update';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import { sessionWorkspaceKey } from '$lib/runtime/sessions';
import { prefetchRecordingStore } from '../../support/workspace-override';
import { collect, openTab, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

/** The Session profile's tools that exist, in its allow order. */
const SESSION_TOOLS = [
  'workspace_list_files',
  'workspace_search_files',
  'workspace_read_file',
  'workspace_write_file',
  'workspace_apply_patch',
  'workspace_shell',
];

const events = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event] : [])) as RunEvent[];
const types = (updates: RunUpdate[]) => events(updates).map((e) => e.type);
const p = (raw: string) => {
  const r = parseWorkspacePath(raw);
  if (!r.ok) throw new Error(raw);
  return r.value;
};

async function readText(h: ReturnType<typeof runtimeHarness>, sessionId: string, path: string) {
  const ws = await h.workspaces.open(sessionWorkspaceKey(sessionId));
  if (!ws.ok) throw new Error('open');
  const r = await ws.value.read(p(path));
  return r.ok ? new TextDecoder().decode(r.value) : null;
}

describe('a Session run', () => {
  it('has its workspace read ahead, from the profile’s visible roots, as it starts', async () => {
    const prefetched: string[][] = [];
    const model = scriptedGateway([{ text: 'Hello.' }]);
    const h = runtimeHarness(model.gateway, {
      files: (memory) => prefetchRecordingStore(memory, prefetched),
    });
    const session = await h.service.create();
    await collect(h.service.send(session.id, 'hi'));
    expect(prefetched).toEqual([[sessionWorkspaceKey(session.id), 'work', 'tmp']]);
  });

  it('runs a two-round tool loop, journals it in order and answers', async () => {
    const model = scriptedGateway([
      {
        text: 'Writing it.',
        toolCalls: [
          {
            callId: 'call_A',
            name: 'workspace_write_file',
            arguments: '{"path":"work/a.md","content":"hello"}',
          },
        ],
      },
      { text: 'Done: work/a.md says hello.' },
    ]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'write hello'));

    expect(types(updates)).toEqual([
      'run_created',
      'status_changed',
      'profile_resolved',
      'agent_invocation_created',
      'agent_invocation_started',
      'context_assembled',
      'status_changed',
      'model_request_created',
      'model_response_stored',
      'model_completed',
      'tool_call_requested',
      'tool_call_started',
      'status_changed',
      'workspace_file_written',
      'status_changed',
      'checkpoint_created',
      'tool_result_stored',
      'tool_call_completed',
      'status_changed',
      'model_request_created',
      'model_response_stored',
      'model_completed',
      'agent_invocation_completed',
      'status_changed',
      'run_completed',
    ]);
    const seqs = events(updates).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));

    // The tool result went back with the provider's call id, after the assistant's call.
    const second = model.requests[1]!;
    const tail = second.messages.slice(-2);
    expect(tail[0]).toMatchObject({
      role: 'assistant',
      parts: expect.arrayContaining([
        {
          type: 'tool-call',
          callId: 'call_A',
          name: 'workspace_write_file',
          input: { path: 'work/a.md', content: 'hello' },
        },
      ]),
    });
    expect(tail[1]!.parts[0]).toMatchObject({ type: 'tool-result', callId: 'call_A', isError: false });
    expect(second.tools.map((t) => t.name)).toEqual(SESSION_TOOLS);

    expect(await readText(h, session.id, 'work/a.md')).toBe('hello');
    const stored = await h.service.get(session.id);
    // The write was checkpointed: a copy of the new content, tied to the journal event.
    const runId = stored.runs[0]!.id;
    const written = events(updates).find((e) => e.type === 'workspace_file_written')!;
    expect(events(updates).find((e) => e.type === 'checkpoint_created')?.payload).toEqual({
      checkpointId: 'cp_000001',
      reason: 'tool_workspace_write',
    });
    expect(await readText(h, session.id, `runs/${runId}/checkpoints/cp_000001/files/work/a.md`)).toBe(
      'hello',
    );
    expect(
      JSON.parse((await readText(h, session.id, `runs/${runId}/checkpoints/cp_000001/checkpoint.json`))!),
    ).toMatchObject({
      id: 'cp_000001',
      seq: 1,
      runId,
      reason: 'tool_workspace_write',
      eventSeq: written.seq,
      files: [{ path: 'work/a.md', bytes: 5 }],
    });
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(stored.runs[0]).toMatchObject({ status: 'completed', rounds: 2, usage: { totalTokens: 30 } });
    expect(stored.session.title).toBe('write hello');

    // The journal on disk equals what was streamed live.
    const journal = await h.journal.read(stored.runs[0]!.id, { limit: 500 });
    expect(journal.map((e) => e.type)).toEqual(types(updates));
  });

  it('reads back what it wrote, and rejects truncated JSON recoverably', async () => {
    const model = scriptedGateway([
      {
        toolCalls: [
          { callId: 'c1', name: 'workspace_write_file', arguments: '{"path":"work/x.md","content":"x"}' },
          { callId: 'c2', name: 'workspace_read_file', arguments: JSON.stringify({ path: 'work/x.md' }) },
          { callId: 'c3', name: 'workspace_read_file', arguments: '{"path": "work/x' },
        ],
      },
      { text: 'ok' },
    ]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    await collect(h.service.send(session.id, 'go'));
    const results = model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.parts[0]);
    expect(results[1]).toMatchObject({ callId: 'c2', isError: false });
    expect(results[2]).toMatchObject({ callId: 'c3', isError: true });
    expect((results[2] as { content: string }).content).toContain('{"path": "work/x');
    // Invalid arguments are replayed as an empty object.
    const call = model.requests[1]!.messages.at(-4)!.parts.find(
      (x) => x.type === 'tool-call' && x.callId === 'c3',
    );
    expect(call).toMatchObject({ input: {} });
  });

  it('answers an unknown call name with the available tools and continues', async () => {
    const model = scriptedGateway([
      { toolCalls: [{ callId: 'u1', name: 'delete_everything', arguments: '{}' }] },
      { text: 'sorry' },
    ]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'go'));
    const failed = events(updates).find((e) => e.type === 'tool_call_failed');
    expect(failed?.payload).toMatchObject({ errorCode: 'tool.unknown_tool', toolId: null });
    expect((failed?.payload as { message: string }).message).toContain('`workspace_read_file`');
    expect(types(updates).at(-1)).toBe('run_completed');
  });

  it('hides a denied tool: calling it is tool.unknown_tool, and it is not offered', async () => {
    const model = scriptedGateway([
      {
        toolCalls: [
          { callId: 'd1', name: 'workspace_write_file', arguments: '{"path":"work/a","content":"x"}' },
        ],
      },
      { text: 'ok' },
    ]);
    const h = runtimeHarness(model.gateway);
    const profile = sessionProfile();
    await h.profiles.put({
      ...profile,
      tools: { ...profile.tools, deny: [builtinToolId('workspace.write_file')] },
    });
    const session = await h.service.create();
    await collect(h.service.send(session.id, 'go'));
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(
      SESSION_TOOLS.filter((t) => t !== 'workspace_write_file'),
    );
    const result = model.requests[1]!.messages.at(-1)!.parts[0] as { content: string; isError: boolean };
    expect(result).toMatchObject({ isError: true });
    expect(result.content).toContain('There is no tool named `workspace_write_file`');
    expect(await readText(h, session.id, 'work/a')).toBeNull();
  });

  it('rejects unknown keys naming the accepted parameters', async () => {
    const model = scriptedGateway([
      {
        toolCalls: [{ callId: 'k1', name: 'workspace_read_file', arguments: '{"path":"work/a","bogus":1}' }],
      },
      { text: 'ok' },
    ]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    await collect(h.service.send(session.id, 'go'));
    const result = model.requests[1]!.messages.at(-1)!.parts[0] as { content: string; isError: boolean };
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/`bogus`.*`path`/);
  });

  it('fails with the provider error, keeping the conversation', async () => {
    const model = scriptedGateway([
      { error: { code: 'model.request_failed', message: 'model gpt-x not found' } },
    ]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'hi'));
    const last = events(updates).at(-1)!;
    expect(last).toMatchObject({
      type: 'run_failed',
      level: 'error',
      payload: { code: 'model.request_failed' },
    });
    const stored = await h.service.get(session.id);
    expect(stored.messages.map((m) => m.role)).toEqual(['user']);
    expect(stored.runs[0]).toMatchObject({ status: 'failed', error: { message: 'model gpt-x not found' } });
  });

  it('retries a rate limit with backoff, then succeeds', async () => {
    const model = scriptedGateway([
      { error: { code: 'model.provider_rate_limited', message: 'slow down', retryable: true } },
      { error: { code: 'model.provider_rate_limited', message: 'slow down', retryable: true } },
      { text: 'hello' },
    ]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'hi'));
    expect(h.sleeps).toEqual([1000, 2000]);
    expect(types(updates).filter((t) => t === 'model_call_retry_scheduled')).toHaveLength(2);
    expect(types(updates).at(-1)).toBe('run_completed');
  });

  it('gives up after the retry budget', async () => {
    const rate = {
      error: { code: 'model.provider_rate_limited' as const, message: 'slow', retryable: true },
    };
    const model = scriptedGateway([rate, rate, rate]);
    const h = runtimeHarness(model.gateway, { maxRetries: 2 });
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'hi'));
    expect(model.remaining()).toBe(0);
    expect(events(updates).at(-1)).toMatchObject({
      type: 'run_failed',
      payload: { code: 'model.provider_rate_limited' },
    });
  });

  it('stops at once when cancelled mid-stream and keeps what streamed', async () => {
    const model = scriptedGateway([{ hangAfter: 'Once upon a time' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const updates: RunUpdate[] = [];
    for await (const u of h.service.send(session.id, 'tell a story')) {
      updates.push(u);
      if (u.type === 'part' && u.part.type === 'text-delta' && u.part.delta.startsWith('time')) {
        const run = updates.find((x) => x.type === 'run');
        if (run?.type === 'run') void h.runService.cancel(run.run.id);
      }
    }
    expect(types(updates).slice(-4)).toEqual([
      'status_changed',
      'agent_invocation_cancelled',
      'status_changed',
      'run_cancelled',
    ]);
    expect(types(updates)).toContain('run_cancel_requested');
    const stored = await h.service.get(session.id);
    expect(stored.runs[0]!.status).toBe('cancelled');
    expect(stored.messages.at(-1)).toMatchObject({
      role: 'assistant',
      interrupted: true,
      parts: [{ type: 'text', text: 'Once upon a time ' }],
    });
  });

  it('allows one active run per session', async () => {
    const model = scriptedGateway([{ hangAfter: 'working' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const first = h.service.send(session.id, 'one')[Symbol.asyncIterator]();
    const firstRun = await first.next();
    expect(firstRun.value).toMatchObject({ type: 'run' });
    await expect(collect(h.service.send(session.id, 'two'))).rejects.toSatisfy(
      (e) => e instanceof HearthFailure && e.code === 'agent.session_busy',
    );
    await h.runService.cancel((firstRun.value as Extract<RunUpdate, { type: 'run' }>).run.id);
  });
});

describe('recovery at start-up', () => {
  it('marks a run left unfinished by a closed tab as interrupted', async () => {
    const model = scriptedGateway([]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const now = Date.now();
    const orphan = {
      id: 'run_orphan' as never,
      target: { kind: 'session' as const, sessionId: session.id },
      connectionId: 'demo',
      model: 'm',
      status: 'calling_model' as const,
      rounds: 1,
      usage: {},
      createdAt: now,
      updatedAt: now,
    };
    await h.runs.put(orphan);
    await h.runs.put({ ...orphan, id: 'run_done' as never, status: 'completed' });
    await h.recoverInterrupted();
    expect((await h.runs.get(orphan.id))?.status).toBe('interrupted');
    expect((await h.runs.get('run_done' as never))?.status).toBe('completed');
    const journal = await h.journal.read(orphan.id);
    expect(journal.map((e) => e.type)).toEqual(['status_changed', 'run_interrupted']);
    expect(journal[0]!.payload).toMatchObject({ from: 'calling_model', status: 'interrupted' });
  });

  it('waits for a live tab: its run is never marked interrupted', async () => {
    const model = scriptedGateway([{ hangAfter: 'busy' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const iterator = h.service.send(session.id, 'work')[Symbol.asyncIterator]();
    const first = (await iterator.next()).value as Extract<RunUpdate, { type: 'run' }>;
    // A second tab starts while the first one is still running the reply.
    let waiting!: () => void;
    const queued = new Promise<void>((r) => (waiting = r));
    const locks = {
      ...h.deps.locks,
      withLock: <T>(name: string, fn: () => Promise<T>) => (waiting(), h.deps.locks.withLock(name, fn)),
    };
    const otherTab = openTab({ ...h.deps, locks });
    const recovery = otherTab.recoverInterrupted();
    // Recovery queues for the run's lock, which the live tab holds: it cannot judge the run.
    await queued;
    expect((await h.runs.get(first.run.id))?.status).not.toBe('interrupted');
    await h.runService.cancel(first.run.id);
    await recovery;
    expect((await h.runs.get(first.run.id))?.status).toBe('cancelled');
  });
});

describe('history after an interrupted run', () => {
  it('sends an unknown-outcome result for a call that never got one, and never replays it', async () => {
    const model = scriptedGateway([{ text: 'checked' }]);
    const h = runtimeHarness(model.gateway);
    const session = await h.service.create();
    const base = { sessionId: session.id, runId: null, createdAt: 0 };
    await h.sessions.appendMessages([
      { ...base, index: 0, role: 'user', parts: [{ type: 'text', text: 'write it' }] },
      {
        ...base,
        index: 1,
        role: 'assistant',
        parts: [
          { type: 'tool-call', callId: 'lost_1', name: 'workspace_write_file', input: { path: 'work/x' } },
        ],
      },
    ]);
    await collect(h.service.send(session.id, 'did it work?'));
    const sent = model.requests[0]!.messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent[3]!.parts[0]).toMatchObject({ callId: 'lost_1', isError: true });
    expect((sent[3]!.parts[0] as { content: string }).content).toContain('unknown');
    expect(await readText(h, session.id, 'work/x')).toBeNull();
  });
});
