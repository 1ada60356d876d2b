import { describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import { defaultWriterProfile, type ProfileV5 } from '$lib/domain/profile';
import type { RunUpdate } from '$lib/domain/run-update';
import { memoryLocks } from '$lib/adapters/system/locks';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import type { RunId } from '$lib/domain/run';
import { ChatService } from '$lib/runtime/chats';
import { RunService } from '$lib/runtime/run-service';
import { runLock } from '$lib/runtime/sessions';
import { collect } from '../../support/runtime-harness';
import { chatHarness } from '../../support/chat-harness';
import { routedGateway, type ScriptedTurn } from '../../support/scripted-gateway';

/**
 * Handoff in a Chat (runtime.md §2.10): the caller stops as `transferred`, the target continues
 * in the foreground from its brief and commits the reply, which records who wrote it; a caller
 * with a task still running, or a run handed off too often, is refused.
 */
const events = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event] : [])) as RunEvent[];
const ofType = <T extends RunEvent['type']>(updates: RunUpdate[], type: T) =>
  events(updates).filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
const call = (callId: string, name: string, args: object): ScriptedTurn => ({
  toolCalls: [{ callId, name, arguments: JSON.stringify(args) }],
});

const AGENT_TOOLS = ['builtin:agent.delegate', 'builtin:agent.await', 'builtin:agent.handoff'];

function profile(id: string, change: (p: ProfileV5) => void = () => {}): ProfileV5 {
  const base = defaultWriterProfile();
  const p: ProfileV5 = {
    ...base,
    id,
    displayName: id,
    delegation: { ...base.delegation },
    tools: { ...base.tools, allow: [...base.tools.allow, ...AGENT_TOOLS] },
  };
  change(p);
  return p;
}

/** A planner that hands off to a writer; both may delegate and hand off, the writer takes handoffs. */
async function chatWith(scripts: Record<string, ScriptedTurn[]>, extra: ProfileV5[] = []) {
  const model = routedGateway(scripts);
  const h = await chatHarness(model.gateway);
  const planner = profile('planner', (p) => {
    p.delegation.canHandoff = true;
    p.delegation.canDelegate = true;
  });
  const writer = profile('writer', (p) => {
    p.delegation.callable = true;
    p.delegation.allowAsHandoffTarget = true;
    p.delegation.allowAsSubagent = true;
    p.delegation.canHandoff = true;
    p.delegation.descriptionForAgents = 'Writes the reply.';
  });
  for (const p of [planner, writer, ...extra]) await h.deps.profiles.put(p);
  const chat = await h.service.create('c1');
  await h.service.update(chat.id, { profileId: 'planner' });
  return { ...h, model, chatId: chat.id };
}

const handoff = (callId: string, marker: string, agentId = 'writer') =>
  call(callId, 'agent_handoff', {
    agentId,
    handoff: { objective: `Write the reply ${marker}.`, mustPreserve: ['the tone'] },
  });

describe('handoff in a Chat', () => {
  it('transfers the run: the target commits the reply, and the message says which agent wrote it', async () => {
    const { service, model, chatId } = await chatWith({
      root: [handoff('h1', '[write]')],
      '[write]': [
        call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'Written by the writer.' }),
        call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
      ],
    });
    const updates = await collect(service.send(chatId, 'Hello'));
    expect(ofType(updates, 'run_completed')).toHaveLength(1);
    expect(ofType(updates, 'agent_handoff_accepted')).toMatchObject([
      { payload: { agentId: 'writer', depth: 1 } },
    ]);
    expect(ofType(updates, 'agent_invocation_transferred')).toMatchObject([
      { payload: { profileId: 'planner' } },
    ]);
    const view = await service.get(chatId);
    expect(view.messages.at(-1)).toMatchObject({
      mes: 'Written by the writer.',
      extra: { hearth: { profileId: 'writer' } },
    });
    // The target starts from its brief, with the caller's constraints, and sees the directory.
    const first = model.requests.get('[write]')![0]!;
    const brief = JSON.stringify(first.messages);
    expect(brief).toContain('# Handoff Brief');
    expect(brief).toContain('the tone');
    // The caller's instructions named the writer as a handoff target.
    expect(JSON.stringify(model.requests.get('root')![0]!.messages[0])).toContain(
      '## Agents you can hand the run to',
    );
  });

  it('guidance sent after a handoff is stamped with, and applied by, the agent holding the run', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const { service, runService, model, chatId } = await chatWith({
      root: [handoff('h1', '[write]')],
      '[write]': [
        {
          until: released,
          then: call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'Brief.' }),
        },
        call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
      ],
    });
    const updates: RunUpdate[] = [];
    const done = (async () => {
      for await (const u of service.send(chatId, 'Hello')) updates.push(u);
    })();
    while (model.requests.get('[write]')!.length === 0) await new Promise((r) => setTimeout(r, 1));
    const started = updates.find((u) => u.type === 'run');
    if (started?.type !== 'run') throw new Error('no run');
    await runService.guide(started.run.id, 'Keep it short.');
    release();
    await done;
    const writer = ofType(updates, 'agent_invocation_created').find((e) => e.payload.profileId === 'writer')!;
    const submitted = ofType(updates, 'user_guidance_submitted');
    expect(submitted).toHaveLength(1);
    expect(submitted[0]!.invocationId).toBe(writer.payload.invocationId);
    expect(submitted[0]!.payload.invocationId).toBe(writer.payload.invocationId);
    expect(ofType(updates, 'user_guidance_applied')[0]!.payload.invocationId).toBe(
      writer.payload.invocationId,
    );
  });

  it('refuses a handoff while a delegated task runs, and past the depth limit', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const editor = profile('editor', (p) => {
      p.delegation.callable = true;
      p.delegation.allowAsHandoffTarget = true;
      p.delegation.canHandoff = true;
    });
    const { service, model, chatId } = await chatWith(
      {
        root: [
          call('x1', 'agent_handoff', { agentId: 'nobody', handoff: { objective: 'x' } }),
          call('x2', 'agent_handoff', { agentId: 'planner', handoff: { objective: 'x' } }),
          call('d1', 'agent_delegate', { agentId: 'writer', task: { objective: 'Draft notes [notes].' } }),
          handoff('h1', '[never]'),
          call('a1', 'agent_await', { mode: 'allCompleted' }),
          handoff('h2', '[bounce]'),
        ],
        // The task runs until the refused handoff has been answered.
        '[notes]': [{ until: released, then: call('n1', 'task_return', { summary: 'Notes drafted.' }) }],
        // The writer and the editor hand the run to each other until it may not be handed off any more.
        '[bounce]': Array.from({ length: 8 }, (_, i) =>
          handoff(`b${i}`, '[bounce]', i % 2 ? 'writer' : 'editor'),
        ).concat([
          call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'Finally.' }),
          call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
        ]),
      },
      [editor],
    );
    const updates: RunUpdate[] = [];
    for await (const u of service.send(chatId, 'Hello')) {
      updates.push(u);
      if (u.type === 'event' && u.event.type === 'tool_call_failed' && u.event.payload.callId === 'h1')
        release();
    }
    const failed = ofType(updates, 'tool_call_failed').map((e) => [e.payload.callId, e.payload.errorCode]);
    expect(failed).toContainEqual(['x1', 'agent.target_profile_not_found']);
    expect(failed).toContainEqual(['x2', 'agent.handoff_policy_denied']);
    expect(failed).toContainEqual(['h1', 'agent.handoff_pending_tasks']);
    expect(failed).toContainEqual(['b7', 'agent.handoff_depth_exhausted']);
    expect(ofType(updates, 'agent_handoff_accepted').map((e) => e.payload.depth)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
    expect(ofType(updates, 'run_completed')).toHaveLength(1);
    expect((await service.get(chatId)).messages.at(-1)).toMatchObject({ mes: 'Finally.' });
    expect(model.remaining('[bounce]')).toBe(0);
  });

  it('a run handed off before its tab closed resumes with the agent that held it', async () => {
    let planner!: () => void;
    const handedOff = new Promise<void>((r) => (planner = r));
    const { service, model, chatId, deps, runService } = await chatWith({
      root: [handoff('h1', '[resume]')],
      '[resume]': [
        // In the tab that closes, the writer starts a turn that never answers.
        { hangAfter: 'thinking' },
        call('w1', 'workspace_write_file', { path: 'output/main.md', content: 'Resumed reply.' }),
        call('c1', 'workspace_commit', { path: 'output/main.md', finish: true }),
      ],
    });
    // Tab A: its own locks, so the run looks abandoned to the tab that recovers it.
    const tabA = new ChatService({
      ...deps,
      locks: memoryLocks(),
      service: new RunService({
        runs: deps.runs,
        journal: deps.journal,
        locks: memoryLocks(),
        clock: systemClock,
        ids: randomIds,
      }),
    });
    let runId: RunId | null = null;
    void (async () => {
      for await (const u of tabA.send(chatId, 'Hello')) {
        if (u.type === 'run') runId = u.run.id;
        if (
          u.type === 'event' &&
          u.event.type === 'model_request_created' &&
          u.event.invocationId !== 'inv_root'
        )
          planner();
      }
    })();
    await handedOff;
    await runService.recoverInterrupted((run) => runLock(run.target));
    expect((await deps.runs.get(runId!))?.status).toBe('interrupted');

    const resumed = await collect(runService.resume(runId!));
    expect(ofType(resumed, 'run_completed')).toHaveLength(1);
    // The planner did not run again; the writer went on from its own transcript and committed.
    expect(model.requests.get('root')).toHaveLength(1);
    const writer = model.requests.get('[resume]')!;
    expect(writer).toHaveLength(3);
    expect(JSON.stringify(writer[1]!.messages)).toContain('# Handoff Brief');
    expect((await service.get(chatId)).messages.at(-1)).toMatchObject({
      mes: 'Resumed reply.',
      extra: { hearth: { profileId: 'writer' } },
    });
  });
});
