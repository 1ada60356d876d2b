import { describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import type { JsonObject } from '$lib/domain/json';
import {
  delegatedTaskItems,
  firstWords,
  foldDelegation,
  NO_DELEGATION,
  type DelegationProgress,
} from '$lib/ui/session/delegated-tasks';
import { journal } from './run-events';

const ROOT = 'inv_root';
const fold = (events: RunEvent[]): DelegationProgress => events.reduce(foldDelegation, NO_DELEGATION);

/** The root delegates three tasks; the first two start, the third waits its turn. */
function live() {
  const { ev, round, toolCall, registered } = journal();
  const delegateCall = (callId: string) => toolCall(ROOT, 1, callId, 'agent_delegate', 'agent.delegate');
  const [req1, done1] = delegateCall('d1');
  const [req2, done2] = delegateCall('d2');
  const [req3, done3] = delegateCall('d3');
  return [
    ev('run_created', { target: {}, connectionId: 'c', model: 'm' }),
    ...round(ROOT, 1),
    req1!,
    registered('t1', ROOT, 'inv_1', 'researcher', 'Look up embers'),
    done1!,
    req2!,
    registered('t2', ROOT, 'inv_2', 'editor', null),
    done2!,
    req3!,
    registered('t3', ROOT, 'inv_3', 'critic', '  '),
    done3!,
    ev('agent_task_started', { taskId: 't1', childInvocationId: 'inv_1' }, 'inv_1'),
    ev('agent_task_started', { taskId: 't2', childInvocationId: 'inv_2' }, 'inv_2'),
    ...round('inv_1', 1, ['workspace_read_file', 'workspace_search_files']),
    ...round('inv_2', 1),
  ];
}

const inputs: Record<string, JsonObject> = {
  d2: {
    agentId: 'editor',
    task: { objective: 'Tighten the second stanza of the haiku about embers, keeping its meter.' },
  },
  d3: { agentId: 'critic', task: { objective: 'Judge it.', title: null } },
};

describe('delegated tasks of the live run', () => {
  it('lists each task with its agent, title, status and last tool', () => {
    const items = delegatedTaskItems(fold(live()), (id) => inputs[id]);
    expect(items).toEqual([
      {
        taskId: 't1',
        agentId: 'researcher',
        title: 'Look up embers',
        status: 'running',
        statusText: 'Running',
        progress: 'last tool: workspace_search_files',
      },
      {
        taskId: 't2',
        agentId: 'editor',
        title: 'Tighten the second stanza of the haiku about…',
        status: 'running',
        statusText: 'Running',
        progress: 'starting',
      },
      {
        taskId: 't3',
        agentId: 'critic',
        title: 'Judge it.',
        status: 'queued',
        statusText: 'Queued',
        progress: 'waiting to start',
      },
    ]);
  });

  it('calls a task without a title or a known objective "Task"', () => {
    const items = delegatedTaskItems(fold(live()));
    expect(items.map((i) => i.title)).toEqual(['Look up embers', 'Task', 'Task']);
  });

  it('follows tasks to their end: returned, failed, cancelled', () => {
    const { ev } = journal();
    const events = [
      ...live(),
      ev(
        'task_return_completed',
        {
          taskId: 't1',
          childInvocationId: 'inv_1',
          status: 'completed',
          resultRef: 'agent-results/inv_1.json',
        },
        'inv_1',
      ),
      ev(
        'agent_child_invocation_failed',
        { taskId: 't2', childInvocationId: 'inv_2', message: 'The model is unreachable.' },
        'inv_2',
      ),
      ev('agent_task_cancelled', { taskId: 't3', reason: 'the run stopped' }, 'inv_3'),
    ];
    expect(delegatedTaskItems(fold(events)).map((i) => [i.status, i.statusText, i.progress])).toEqual([
      ['completed', 'Completed', 'returned its result (last tool: workspace_search_files)'],
      ['failed', 'Failed', 'The model is unreachable.'],
      ['cancelled', 'Cancelled', 'stopped: the run stopped'],
    ]);
  });

  it('does not count the root’s own tool calls as a child’s progress', () => {
    const { round } = journal();
    const state = fold([...live(), ...round(ROOT, 2, ['agent_await'])]);
    expect(state.tasks.map((t) => t.lastTool)).toEqual(['workspace_search_files', null, null]);
  });

  it('changes nothing for events that say nothing about tasks', () => {
    const state = fold(live());
    const { round } = journal();
    for (const e of round(ROOT, 2)) expect(foldDelegation(state, e)).toBe(state);
    expect(fold([])).toBe(NO_DELEGATION);
    expect(delegatedTaskItems(NO_DELEGATION)).toEqual([]);
  });

  it('a delegate call the runtime refused opens no task and is forgotten', () => {
    const { toolCall } = journal();
    const state = fold(toolCall(ROOT, 1, 'dx', 'agent_delegate', 'agent.delegate'));
    expect(state).toEqual({ tasks: [], openCalls: [] });
  });
});

describe('firstWords', () => {
  it('keeps short text and cuts long text with an ellipsis', () => {
    expect(firstWords('  Judge   it. ')).toBe('Judge it.');
    expect(firstWords('one two three four five', 3)).toBe('one two three…');
  });
});
