import { describe, expect, it } from 'vitest';
import type { ChatSwipe } from '$lib/chat/chat-jsonl';
import type { ChatMessageRow } from '$lib/chat/records';
import type { HearthClient } from '$lib/client/hearth';
import type { RunEvent } from '$lib/domain/events';
import {
  delegateInputs,
  foldHandoff,
  handoffLine,
  writtenBy,
  type LiveHandoff,
} from '$lib/ui/chat/chat-model';
import { ChatState } from '$lib/ui/chat/chat-state.svelte';
import { journal } from './run-events';

const swipe = (text: string, profileId?: string): ChatSwipe => ({
  text,
  sendDate: null,
  extra: profileId ? { hearth: { runId: 'run_1', profileId } } : {},
  info: {},
});

function reply(swipes: ChatSwipe[], swipeId = 0, who: 'user' | 'char' | 'system' = 'char'): ChatMessageRow {
  return {
    chatId: 'c',
    index: 1,
    name: 'Orrin',
    isUser: who === 'user',
    isSystem: who === 'system',
    sendDate: null,
    mes: swipes[swipeId]?.text ?? 'text',
    extra: {},
    swipes,
    swipeId,
    unknown: {},
  };
}

describe('writtenBy', () => {
  it("names the shown swipe's agent profile when it is not the chat's", () => {
    const m = reply([swipe('a', 'default-writer'), swipe('b', 'editor')], 1);
    expect(writtenBy(m, 'default-writer')).toBe('editor');
    m.swipeId = 0;
    expect(writtenBy(m, 'default-writer')).toBeNull();
    // The chat's own profile changed since: the earlier reply was written by another one.
    expect(writtenBy(m, 'narrator')).toBe('default-writer');
  });

  it("falls back to the message's extra.hearth, and says nothing without a profile", () => {
    const m = reply([]);
    expect(writtenBy(m, 'default-writer')).toBeNull();
    m.extra = { hearth: { runId: 'run_1', profileId: 'editor' } };
    expect(writtenBy(m, 'default-writer')).toBe('editor');
    m.extra = { hearth: { runId: 'run_1', profileId: '' } };
    expect(writtenBy(m, 'default-writer')).toBeNull();
    m.extra = { hearth: { profileId: 7 } };
    expect(writtenBy(m, 'default-writer')).toBeNull();
    expect(writtenBy(reply([swipe('imported')]), 'default-writer')).toBeNull();
  });

  it("never labels the person's or system messages", () => {
    expect(writtenBy(reply([swipe('hi', 'editor')], 0, 'user'), 'default-writer')).toBeNull();
    expect(writtenBy(reply([swipe('note', 'editor')], 0, 'system'), 'default-writer')).toBeNull();
  });
});

function handoff(ev: ReturnType<typeof journal>['ev'], agentId: string, depth: number): RunEvent {
  return ev(
    'agent_handoff_accepted',
    { handoffId: `h${depth}`, agentId, invocationId: 'inv_root', targetInvocationId: `inv_h${depth}`, depth },
    'inv_root',
  );
}

describe('the live handoff line', () => {
  it('is empty until a handoff, then names the last agent handed to', () => {
    const { ev, round } = journal();
    const events = [...round('inv_root', 1, ['workspace_read_file']), handoff(ev, 'editor', 1)];
    const before = round('inv_root', 1).reduce(foldHandoff, null);
    expect(before).toBeNull();
    expect(handoffLine(before)).toBe('');
    const after = events.reduce(foldHandoff, null);
    expect(after).toEqual({ agentId: 'editor', depth: 1 });
    expect(handoffLine(after)).toBe('Handed to editor');
    const again = [...events, ...round('inv_h1', 1), handoff(ev, 'critic', 2)].reduce(foldHandoff, null);
    expect(handoffLine(again)).toBe('Handed to critic');
  });

  it('keeps the same value for events that tell no handoff', () => {
    const { round } = journal();
    const state: LiveHandoff = { agentId: 'editor', depth: 1 };
    expect(round('inv_h1', 1, ['workspace_read_file']).reduce(foldHandoff, state)).toBe(state);
  });
});

describe('delegateInputs', () => {
  it('keeps whole streamed arguments that name an objective, by call id', () => {
    const objective = { agentId: 'editor', task: { objective: 'Tighten the stanza.' } };
    expect(
      delegateInputs([
        { callId: 'd1', argumentsPreview: JSON.stringify(objective) },
        { callId: 'd2', argumentsPreview: '{"agentId":"critic","task":{"objec' },
        { callId: 'r1', argumentsPreview: '{"path":"notes.md"}' },
        { callId: 'x', argumentsPreview: '[1,2]' },
        { callId: 'e', argumentsPreview: '' },
      ]),
    ).toEqual({ d1: objective });
  });
});

describe('ChatState while a run works', () => {
  it('lists delegated tasks named by their streamed objective, shows the handoff, and clears both', async () => {
    const { ev, toolCall, registered } = journal();
    const client = {
      chats: {
        send: async function* () {},
        get: async () => ({ messages: [], runs: [] }),
      },
    } as unknown as HearthClient;
    const chat = new ChatState(client, 'c');
    const args = JSON.stringify({
      agentId: 'researcher',
      task: { objective: 'Find every mention of the lighthouse in the old logs, with dates.' },
    });
    chat.apply({
      type: 'part',
      round: 1,
      part: { type: 'tool-input-start', blockId: 'b1', callId: 'd1', name: 'agent_delegate' },
    });
    chat.apply({ type: 'part', round: 1, part: { type: 'tool-input-delta', blockId: 'b1', delta: args } });
    const [requested, completed] = toolCall('inv_root', 1, 'd1', 'agent_delegate', 'agent.delegate');
    for (const event of [
      requested!,
      registered('t1', 'inv_root', 'inv_1', 'researcher', null),
      completed!,
      ev('agent_task_started', { taskId: 't1', childInvocationId: 'inv_1' }, 'inv_1'),
    ])
      chat.apply({ type: 'event', event });
    // The child's own round replaces the working preview; the objective is kept.
    chat.apply({ type: 'part', round: 2, part: { type: 'text-delta', blockId: 't1', delta: 'Reading.' } });
    expect(chat.delegatedTasks.map((t) => [t.agentId, t.title, t.statusText])).toEqual([
      ['researcher', 'Find every mention of the lighthouse in the…', 'Running'],
    ]);
    expect(chat.handoff).toBeNull();
    chat.apply({ type: 'event', event: handoff(ev, 'editor', 1) });
    expect(handoffLine(chat.handoff)).toBe('Handed to editor');

    await chat.send('next');
    expect(chat.delegatedTasks).toEqual([]);
    expect(chat.handoff).toBeNull();
  });
});
