import { describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import { defaultWriterProfile, sessionProfile, type ProfileV5 } from '$lib/domain/profile';
import type { RunId } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { ModelRequest } from '$lib/domain/model';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import { sessionWorkspaceKey } from '$lib/runtime/sessions';
import { memoryLocks } from '$lib/adapters/system/locks';
import { collect, openTab, runtimeHarness } from '../../support/runtime-harness';
import { routedGateway, type ScriptedTurn } from '../../support/scripted-gateway';

/**
 * Delegated tasks in a real Session run (runtime.md §2, D7): children are invocations of the one
 * loop, scheduled at most three at a time per caller, awaited without being driven, returning
 * results the caller reads, and never outliving the run.
 */

const events = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event] : [])) as RunEvent[];
const ofType = <T extends RunEvent['type']>(updates: RunUpdate[], type: T) =>
  events(updates).filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

const call = (callId: string, name: string, args: object): ScriptedTurn => ({
  toolCalls: [{ callId, name, arguments: JSON.stringify(args) }],
});
const calls = (...list: [string, string, object][]): ScriptedTurn => ({
  toolCalls: list.map(([callId, name, args]) => ({ callId, name, arguments: JSON.stringify(args) })),
});
const delegate = (callId: string, marker: string, extra: object = {}) =>
  [
    callId,
    'agent_delegate',
    { agentId: 'researcher', task: { objective: `Research ${marker}.`, ...extra } },
  ] as [string, string, object];
/** A child that writes its notes and returns them. */
const researcher = (marker: string, summary: string): ScriptedTurn[] => [
  call(`${marker}-w`, 'workspace_write_file', { path: `work/${marker}.md`, content: `notes on ${marker}` }),
  call(`${marker}-r`, 'task_return', {
    summary,
    confidence: 'high',
    artifacts: [{ path: `work/${marker}.md`, kind: 'notes', role: 'findings' }],
    findings: [{ claim: `${marker} exists`, source: `work/${marker}.md` }],
    warnings: [`check ${marker} again`],
  }),
];

/** A Chat-scope profile other agents may delegate to (its model: the run's). */
function researcherProfile(): ProfileV5 {
  const p = defaultWriterProfile();
  return {
    ...p,
    id: 'researcher',
    displayName: 'Researcher',
    description: 'Looks things up and writes notes.',
    delegation: {
      ...p.delegation,
      callable: true,
      allowAsSubagent: true,
      descriptionForAgents: 'Give it a question; it returns notes.',
    },
    tools: {
      ...p.tools,
      allow: ['builtin:workspace.read_file', 'builtin:workspace.write_file', 'builtin:workspace.list_files'],
    },
  };
}

async function delegatingSession(scripts: Record<string, ScriptedTurn[]>) {
  const model = routedGateway(scripts);
  const h = runtimeHarness(model.gateway);
  await h.ready;
  const session = sessionProfile();
  await h.profiles.put({
    ...session,
    delegation: { ...session.delegation, canDelegate: true },
    tools: {
      ...session.tools,
      allow: [...session.tools.allow, 'builtin:agent.delegate', 'builtin:agent.await'],
    },
  });
  await h.profiles.put(researcherProfile());
  const created = await h.service.create();
  return { h, model, sessionId: created.id };
}

const lastUserText = (request: ModelRequest) =>
  request.messages
    .filter((m) => m.role === 'user')
    .at(-1)!
    .parts.map((p) => (p.type === 'text' ? p.text : ''))
    .join('');
const toolResultText = (request: ModelRequest, callId: string) =>
  request.messages.flatMap((m) => m.parts).find((p) => p.type === 'tool-result' && p.callId === callId) as
    { content: string; isError: boolean } | undefined;

describe('delegated tasks in a Session', () => {
  it('runs three at a time, queues the fourth, and the caller reads every result when it awaits', async () => {
    const { h, model, sessionId } = await delegatingSession({
      root: [
        calls(
          delegate('d1', '[alpha]'),
          delegate('d2', '[beta]'),
          delegate('d3', '[gamma]'),
          delegate('d4', '[delta]'),
        ),
        call('a1', 'agent_await', { mode: 'allCompleted' }),
        { text: 'All four are done.' },
      ],
      '[alpha]': researcher('alpha', 'Alpha is fine.'),
      '[beta]': researcher('beta', 'Beta is fine.'),
      '[gamma]': researcher('gamma', 'Gamma is fine.'),
      '[delta]': researcher('delta', 'Delta is fine.'),
    });
    const updates = await collect(h.service.send(sessionId, 'research four things'));

    expect(ofType(updates, 'run_completed')).toHaveLength(1);
    // The fourth starts only after one of the first three has returned.
    const all = events(updates);
    const started = all.filter((e) => e.type === 'agent_task_started');
    const firstReturn = all.findIndex((e) => e.type === 'task_return_completed');
    expect(started).toHaveLength(4);
    expect(all.indexOf(started[3]!)).toBeGreaterThan(firstReturn);
    expect(all.indexOf(started[2]!)).toBeLessThan(firstReturn);

    // The await's result names every task with its summary, artifacts and warnings.
    const afterAwait = model.requests.get('root')!.at(-1)!;
    const awaited = toolResultText(afterAwait, 'a1')!;
    expect(awaited.isError).toBe(false);
    for (const name of ['Alpha', 'Beta', 'Gamma', 'Delta'])
      expect(awaited.content).toContain(`${name} is fine.`);
    expect(awaited.content).toContain('`work/alpha.md` (notes, findings)');
    expect(awaited.content).toContain('check delta again');
    expect(awaited.content).toContain('- **claim**: gamma exists');
    expect(awaited.content).toContain('## Continue Current Agent Flow');

    // Each child wrote its result files; the workspace keys are researcher, researcher-002, ….
    const ws = await h.workspaces.open(sessionWorkspaceKey(sessionId));
    if (!ws.ok) throw new Error('open');
    const registered = ofType(updates, 'agent_task_registered');
    expect(registered.map((e) => e.payload.workspaceKey)).toEqual([
      'researcher',
      'researcher-002',
      'researcher-003',
      'researcher-004',
    ]);
    const read = async (raw: string) => {
      const path = parseWorkspacePath(raw);
      if (!path.ok) throw new Error(raw);
      const r = await ws.value.read(path.value);
      return r.ok ? new TextDecoder().decode(r.value) : null;
    };
    const child = registered[0]!.payload.childInvocationId;
    const runId = all[0]!.runId;
    const document = JSON.parse((await read(`runs/${runId}/agent-results/${child}.json`))!);
    expect(document).toMatchObject({
      schemaVersion: 1,
      kind: 'tauritavern.agentTaskResult',
      status: 'completed',
      summary: 'Alpha is fine.',
      runtime: {
        taskId: registered[0]!.payload.taskId,
        targetProfileId: 'researcher',
        workspaceKey: 'researcher',
      },
    });
    expect(await read(`runs/${runId}/summaries/researcher-result.md`)).toContain('Alpha is fine.');
    expect(await read('work/alpha.md')).toBe('notes on alpha');
    // A child's events carry its own invocation id; its rounds are its own.
    const childRounds = all.filter((e) => e.type === 'model_request_created' && e.invocationId === child);
    expect(childRounds.map((e) => e.type === 'model_request_created' && e.payload.round)).toEqual([1, 2]);
  });

  it('brings results the caller did not await after its next tool turn, and the brief says everything', async () => {
    let returned!: () => void;
    const childDone = new Promise<void>((r) => (returned = r));
    const { h, model, sessionId } = await delegatingSession({
      root: [
        calls(
          delegate('d1', '[solo]', {
            title: 'Solo',
            context: { paths: ['work/plan.md'] },
            deadline: 'today',
          }),
        ),
        // The root's second turn waits until the task has returned, so its tool turn ends after it.
        { until: childDone, then: call('l1', 'workspace_list_files', {}) },
        call('l2', 'workspace_list_files', {}),
        { text: 'Done.' },
      ],
      '[solo]': researcher('solo', 'Solo done.'),
    });
    for await (const u of h.service.send(sessionId, 'go'))
      if (u.type === 'event' && u.event.type === 'task_return_completed') returned();
    const root = model.requests.get('root')!;
    const injected = root
      .map(lastUserText)
      .find((t) => t.includes('Results of tasks you delegated are now available'));
    expect(injected).toContain('Solo done.');
    // Injected once only.
    expect(root.filter((r) => lastUserText(r).includes('Solo done.')).length).toBeLessThanOrEqual(2);
    const brief = lastUserText(model.requests.get('[solo]')![0]!);
    expect(brief).toContain('# Delegated Task');
    expect(brief).toContain('## Title\nSolo');
    expect(brief).toContain('- **paths**:\n  - work/plan.md');
    expect(brief).toContain('## Additional Instructions\n- **deadline**: today');
    expect(brief).toContain('`task_return`');
  });

  it('reports a failing child, reminds a child that drifts, and times out an await', async () => {
    const { h, model, sessionId } = await delegatingSession({
      root: [
        calls(delegate('d1', '[broken]'), delegate('d2', '[chatty]'), delegate('d3', '[slow]')),
        call('s1', 'agent_await', { mode: 'statusOnly' }),
        call('a1', 'agent_await', { taskIds: [], mode: 'allCompleted' }),
        call('a2', 'agent_await', { mode: 'allCompleted', timeoutMs: 300 }),
        { text: 'Enough.' },
      ],
      '[broken]': [
        { error: { code: 'model.request_failed', message: 'the provider is down', retryable: false } },
      ],
      '[chatty]': [
        { text: 'I think it is fine.' },
        call('c-r', 'task_return', { summary: 'Fine after all.' }),
      ],
      '[slow]': [{ hangAfter: 'thinking slowly' }],
    });
    const updates = await collect(h.service.send(sessionId, 'go'));
    const root = model.requests.get('root')!;

    expect(toolResultText(root[2]!, 's1')!.content).toMatch(/### researcher - (queued|running)/);
    expect(toolResultText(root[3]!, 'a1')).toMatchObject({ isError: true });
    const timedOut = toolResultText(root[4]!, 'a2')!;
    expect(timedOut.content).toContain('The wait timed out');
    expect(timedOut.content).toContain('### researcher - failed');
    expect(timedOut.content).toContain('Error: the provider is down');
    expect(timedOut.content).toContain('Fine after all.');
    expect(timedOut.content).toMatch(/### researcher - running/);

    // The chatty child was told how to finish.
    const chatty = model.requests.get('[chatty]')!;
    expect(lastUserText(chatty[1]!)).toContain('finish with `task_return`');
    // Its prose was kept like any invocation's (runtime.md §1.8), and it was told where.
    const captured = ofType(updates, 'direct_output_captured');
    expect(captured).toHaveLength(1);
    const path = captured[0]!.payload.path;
    expect(path).toMatch(/^(work|output)\/direct_output\.md$/);
    expect(lastUserText(chatty[1]!)).toContain(`saved to \`${path}\``);
    const ws = await h.workspaces.open(sessionWorkspaceKey(sessionId));
    const parsed = parseWorkspacePath(path);
    if (!ws.ok || !parsed.ok) throw new Error('open');
    const saved = await ws.value.read(parsed.value);
    expect(saved.ok && new TextDecoder().decode(saved.value)).toBe('I think it is fine.');
    // The run completes; the slow child is cancelled with it, never outliving it.
    expect(ofType(updates, 'run_completed')).toHaveLength(1);
    expect(ofType(updates, 'agent_child_invocation_failed').map((e) => e.payload.message)).toEqual([
      'the provider is down',
    ]);
    expect(ofType(updates, 'agent_task_cancelled')).toHaveLength(1);
    const all = events(updates);
    expect(all.findIndex((e) => e.type === 'agent_task_cancelled')).toBeLessThan(
      all.findIndex((e) => e.type === 'run_completed'),
    );
  });

  it('nextCompleted returns when one selected task ends, the others still running', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { h, model, sessionId } = await delegatingSession({
      root: [
        calls(delegate('d1', '[quick]'), delegate('d2', '[held]')),
        call('n1', 'agent_await', {}),
        call('n2', 'agent_await', { mode: 'nextCompleted' }),
        { text: 'Both done.' },
      ],
      '[quick]': researcher('quick', 'Quick is done.'),
      '[held]': [{ until: held, then: call('held-r', 'task_return', { summary: 'Held is done.' }) }],
    });
    for await (const u of h.service.send(sessionId, 'go'))
      if (u.type === 'event' && u.event.type === 'tool_call_completed' && u.event.payload.callId === 'n1')
        release();
    const root = model.requests.get('root')!;
    const first = toolResultText(root[2]!, 'n1')!.content;
    expect(first).toContain('Quick is done.');
    expect(first).toMatch(/### researcher - running/);
    // The next wait returns with the task that ended since, not the one already read.
    expect(toolResultText(root[3]!, 'n2')!.content).toContain('Held is done.');
  });

  it('refuses what the spec refuses, as errors the caller reads', async () => {
    const { h, model, sessionId } = await delegatingSession({
      root: [
        call('w1', 'agent_await', {}),
        call('x1', 'agent_delegate', { agentId: 'nobody', task: { objective: 'x' } }),
        call('x2', 'agent_delegate', { agentId: 'default-writer', task: { objective: 'x' } }),
        call('x3', 'agent_delegate', { agentId: 'researcher', task: { objective: '  ' } }),
        calls(delegate('d1', '[ok]')),
        call('w2', 'agent_await', { taskIds: ['task_nope'] }),
        call('w3', 'agent_await', {}),
        { text: 'Done.' },
      ],
      '[ok]': [
        call('ok-bad', 'task_return', {
          summary: 'x',
          artifacts: [{ path: 'runs/secret.json', kind: 'k', role: 'r' }],
        }),
        call('ok-r', 'task_return', { summary: 'Returned.' }),
      ],
    });
    const updates = await collect(h.service.send(sessionId, 'go'));
    const results = model.requests.get('root')!.at(-1)!;
    const code = (id: string) =>
      ofType(updates, 'tool_call_failed').find((e) => e.payload.callId === id)?.payload.errorCode ?? null;
    expect(code('w1')).toBe('agent.no_child_tasks');
    expect(code('x1')).toBe('agent.target_profile_not_found');
    expect(code('x2')).toBe('agent.delegation_policy_denied');
    expect(code('x3')).toBe('tool.invalid_arguments');
    expect(code('w2')).toBe('agent.await_task_not_found');
    expect(toolResultText(results, 'w3')!.content).toContain('Returned.');
    const child = model.requests.get('[ok]')!.at(-1)!;
    expect(toolResultText(child, 'ok-bad')!.content).toContain('outside the visible workspace');
  });

  it('resumes after the tab closed: a finished child keeps its result, an unfinished one goes on where it stopped', async () => {
    const { h, model, sessionId } = await delegatingSession({
      root: [
        calls(delegate('d1', '[done]'), delegate('d2', '[slow]')),
        call('a1', 'agent_await', { mode: 'allCompleted', timeoutMs: 300_000 }),
        // In the tab that resumes: the first await's outcome is unknown, so it waits again.
        call('a2', 'agent_await', { mode: 'allCompleted' }),
        { text: 'Resumed.' },
      ],
      '[done]': researcher('done', 'Done fine.'),
      '[slow]': [
        call('slow-w', 'workspace_write_file', { path: 'work/slow.md', content: 'half' }),
        // The tab closes while this turn streams; the resumed child asks again.
        { hangAfter: 'working slowly' },
        call('slow-r', 'task_return', { summary: 'Slow done after resume.' }),
      ],
    });
    // Tab A waits for both tasks, then its page goes away.
    const tabA = openTab({ ...h.deps, locks: memoryLocks() });
    let runId: RunId | null = null;
    const waiting = new Promise<void>((resolve) => {
      void (async () => {
        let returned = false;
        // Both children have made their second request: [done]'s answered, [slow]'s hanging.
        let childRequests = 0;
        for await (const u of tabA.service.send(sessionId, 'go')) {
          if (u.type === 'run') runId = u.run.id;
          if (u.type === 'event' && u.event.type === 'task_return_completed') returned = true;
          if (
            u.type === 'event' &&
            u.event.type === 'model_request_created' &&
            u.event.invocationId !== 'inv_root'
          )
            childRequests++;
          if (returned && childRequests === 4) resolve();
        }
      })();
    });
    await waiting;
    const tabB = openTab(h.deps);
    await tabB.recoverInterrupted();
    expect((await h.runs.get(runId!))?.status).toBe('interrupted');

    const resumed = await collect(tabB.runService.resume(runId!));
    expect(ofType(resumed, 'run_completed')).toHaveLength(1);
    expect(ofType(resumed, 'agent_child_invocation_failed')).toEqual([]);
    // The finished child did not run again; the slow one went on after its write (not repeated).
    expect(model.requests.get('[done]')).toHaveLength(2);
    const slow = model.requests.get('[slow]')!;
    expect(slow).toHaveLength(3);
    expect(ofType(resumed, 'workspace_file_written')).toEqual([]);
    const root = model.requests.get('root')!;
    const awaited = toolResultText(root.at(-1)!, 'a2')!.content;
    expect(awaited).toContain('Done fine.');
    expect(awaited).toContain('Slow done after resume.');
  });

  it('Stop cancels every child with the run', async () => {
    const { h, sessionId } = await delegatingSession({
      root: [
        calls(delegate('d1', '[one]'), delegate('d2', '[two]')),
        call('a1', 'agent_await', { mode: 'allCompleted' }),
      ],
      '[one]': [{ hangAfter: 'working on one' }],
      '[two]': [{ hangAfter: 'working on two' }],
    });
    const stream = h.service.send(sessionId, 'go');
    const updates: RunUpdate[] = [];
    for await (const u of stream) {
      updates.push(u);
      if (
        u.type === 'event' &&
        u.event.type === 'agent_task_started' &&
        ofType(updates, 'agent_task_started').length === 2
      )
        void h.runService.cancel(u.event.runId);
    }
    expect(ofType(updates, 'run_cancelled')).toHaveLength(1);
    expect(ofType(updates, 'agent_task_cancelled')).toHaveLength(2);
    expect(ofType(updates, 'agent_invocation_cancelled').length).toBeGreaterThanOrEqual(3);
  });
});
