import { describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import { toInvocations, toRounds, type InvocationView } from '$lib/ui/run/timeline';
import { journal } from './run-events';

const ROOT = 'inv_root';

/** A Session run whose root delegates to two children that work at the same time. */
function twoChildren(): RunEvent[] {
  const { ev, round, registered, invocation, toolCall } = journal();
  return [
    ev('run_created', { target: {}, connectionId: 'c', model: 'm' }),
    ev('status_changed', { status: 'assembling_context', from: 'created' }),
    invocation('agent_invocation_created', ROOT, null, 'session'),
    invocation('agent_invocation_started', ROOT, null, 'session'),
    ev('context_assembled', {
      invocationId: ROOT,
      tools: ['agent_delegate'],
      messageCount: 1,
      withheld: [{ toolId: 'builtin:x', code: 'tool.denied', message: 'root only' }],
    }),
    ...round(ROOT, 1),
    ...toolCall(ROOT, 1, 'd1', 'agent_delegate', 'agent.delegate').slice(0, 1),
    registered('task_a', ROOT, 'inv_a', 'researcher', 'Look up embers'),
    ev('agent_delegate_started', { taskId: 'task_a', agentId: 'researcher', invocationId: ROOT }, ROOT),
    ...toolCall(ROOT, 1, 'd2', 'agent_delegate', 'agent.delegate').slice(0, 1),
    registered('task_b', ROOT, 'inv_b', 'editor', null),
    ev('agent_task_started', { taskId: 'task_a', childInvocationId: 'inv_a' }, 'inv_a'),
    invocation('agent_invocation_created', 'inv_a', ROOT, 'researcher'),
    ev('agent_task_started', { taskId: 'task_b', childInvocationId: 'inv_b' }, 'inv_b'),
    invocation('agent_invocation_created', 'inv_b', ROOT, 'editor'),
    ev(
      'context_assembled',
      {
        invocationId: 'inv_a',
        tools: ['task_return'],
        messageCount: 1,
        withheld: [
          { toolId: 'builtin:agent.delegate', code: 'tool.denied', message: 'children do not delegate' },
        ],
      },
      'inv_a',
    ),
    // Interleaved: both children at round 1, then the root's round 2, then more of each.
    ...round('inv_a', 1, ['workspace_read_file']),
    ...round('inv_b', 1, ['workspace_list_files']),
    ...round(ROOT, 2, ['agent_await']),
    ...round('inv_a', 2, ['task_return']),
    ev(
      'task_return_completed',
      {
        taskId: 'task_a',
        childInvocationId: 'inv_a',
        status: 'completed',
        resultRef: 'agent-results/inv_a.json',
      },
      'inv_a',
    ),
    invocation('agent_invocation_completed', 'inv_a', ROOT, 'researcher'),
    ...round('inv_b', 2),
    ev(
      'agent_child_invocation_failed',
      {
        taskId: 'task_b',
        childInvocationId: 'inv_b',
        message: 'The agent ended without calling `task_return`.',
      },
      'inv_b',
    ),
    ...round(ROOT, 3),
    ev('run_completed', null),
  ];
}

const summary = (v: InvocationView): unknown => ({
  id: v.invocationId,
  profile: v.profileId,
  status: v.task?.status ?? null,
  rounds: v.rounds.map((r) => [r.round, r.calls.map((c) => c.callName)]),
  children: v.children.map(summary),
});

describe('toInvocations', () => {
  it('puts each child under its caller with its own rounds, apart from the root’s', () => {
    const tree = toInvocations(twoChildren());
    expect(summary(tree)).toEqual({
      id: ROOT,
      profile: 'session',
      status: null,
      rounds: [
        [1, ['agent_delegate', 'agent_delegate']],
        [2, ['agent_await']],
        [3, []],
      ],
      children: [
        {
          id: 'inv_a',
          profile: 'researcher',
          status: 'completed',
          rounds: [
            [1, ['workspace_read_file']],
            [2, ['task_return']],
          ],
          children: [],
        },
        {
          id: 'inv_b',
          profile: 'editor',
          status: 'failed',
          rounds: [
            [1, ['workspace_list_files']],
            [2, []],
          ],
          children: [],
        },
      ],
    });
  });

  it('keeps each task’s title, result and failure, and which round delegated it', () => {
    const tree = toInvocations(twoChildren());
    const [a, b] = tree.children;
    expect(a!.task).toEqual({
      taskId: 'task_a',
      agentId: 'researcher',
      title: 'Look up embers',
      workspaceKey: 'researcher',
      callerInvocationId: ROOT,
      status: 'completed',
      result: { status: 'completed', resultRef: 'agent-results/inv_a.json' },
    });
    expect(a!.status).toBe('completed');
    expect(b!.task).toMatchObject({
      title: null,
      status: 'failed',
      error: 'The agent ended without calling `task_return`.',
    });
    expect(b!.task!.result).toBeUndefined();
    expect(tree.rounds[0]!.delegated).toEqual([
      { taskId: 'task_a', agentId: 'researcher', title: 'Look up embers' },
      { taskId: 'task_b', agentId: 'editor', title: null },
    ]);
    expect(tree.rounds[1]!.delegated).toEqual([]);
  });

  it('lists the tools left out per invocation', () => {
    const tree = toInvocations(twoChildren());
    expect(tree.withheld.map((w) => w.toolId)).toEqual(['builtin:x']);
    expect(tree.children[0]!.withheld.map((w) => w.toolId)).toEqual(['builtin:agent.delegate']);
    expect(tree.children[1]!.withheld).toEqual([]);
  });

  it('tells queued, running and cancelled tasks apart', () => {
    const { ev, registered, round } = journal();
    const events = [
      registered('t1', ROOT, 'inv_1', 'r', 'one'),
      registered('t2', ROOT, 'inv_2', 'r', 'two'),
      registered('t3', ROOT, 'inv_3', 'r', 'three'),
      ev('agent_task_started', { taskId: 't1', childInvocationId: 'inv_1' }, 'inv_1'),
      ...round('inv_1', 1, ['workspace_read_file']),
      ev('agent_task_cancelled', { taskId: 't3', reason: 'the run stopped' }, 'inv_3'),
    ];
    const tree = toInvocations(events);
    expect(tree.children.map((c) => [c.invocationId, c.task!.status, c.rounds.length])).toEqual([
      ['inv_1', 'running', 1],
      ['inv_2', 'queued', 0],
      ['inv_3', 'cancelled', 0],
    ]);
    expect(tree.children[2]!.task!.error).toBe('the run stopped');
    // The child falls back to the task's agent until its invocation is journaled.
    expect(tree.children[0]!.profileId).toBe('r');
  });

  it('groups a run without children exactly as toRounds does', () => {
    const events = twoChildren().filter((e) => e.invocationId === undefined || e.invocationId === ROOT);
    const withoutTasks = events.filter((e) => e.type !== 'agent_task_registered');
    const tree = toInvocations(withoutTasks);
    expect(tree.children).toEqual([]);
    expect(tree.rounds).toEqual(toRounds(withoutTasks));
  });

  it('keeps events of runs journaled before invocations were stamped in the root', () => {
    const { ev, round } = journal();
    const stamped = round(ROOT, 1, ['workspace_write_file']);
    const legacy = stamped.map(({ invocationId: _, ...e }) => e as RunEvent);
    const tree = toInvocations([ev('run_created', { target: {}, connectionId: 'c', model: 'm' }), ...legacy]);
    expect(tree.children).toEqual([]);
    expect(tree.rounds.map((r) => r.calls.map((c) => c.callName))).toEqual([['workspace_write_file']]);
  });

  it('nests a child’s own children, and puts an invocation of unknown parent under the root', () => {
    const { registered, round, invocation } = journal();
    const events = [
      registered('t1', ROOT, 'inv_1', 'planner', 'plan'),
      ...round('inv_1', 1),
      registered('t2', 'inv_1', 'inv_2', 'helper', 'help'),
      ...round('inv_2', 1),
      ...round('inv_stray', 1),
      invocation('agent_invocation_created', 'inv_loop', 'inv_loop', 'x'),
    ];
    const tree = toInvocations(events);
    expect(tree.children.map((c) => c.invocationId)).toEqual(['inv_1', 'inv_stray', 'inv_loop']);
    expect(tree.children[0]!.children.map((c) => c.invocationId)).toEqual(['inv_2']);
    expect(tree.children[0]!.children[0]!.rounds).toHaveLength(1);
  });
});
