import { describe, expect, it } from 'vitest';
import type { ModelMessage } from '$lib/domain/model';
import { pairToolCalls, UNKNOWN_OUTCOME } from '$lib/runtime/history';

const user = (text: string): ModelMessage => ({ role: 'user', parts: [{ type: 'text', text }] });
const calls = (...ids: string[]): ModelMessage => ({
  role: 'assistant',
  parts: ids.map((callId) => ({ type: 'tool-call', callId, name: 'workspace_write_file', input: {} })),
});
const result = (callId: string): ModelMessage => ({
  role: 'tool',
  parts: [
    { type: 'tool-result', callId, name: 'workspace_write_file', content: 'ok', isError: false, images: [] },
  ],
});

describe('pairing tool calls with results', () => {
  it('leaves a complete history unchanged', () => {
    const history = [user('a'), calls('c1', 'c2'), result('c1'), result('c2'), user('b')];
    expect(pairToolCalls(history)).toEqual(history);
  });

  it('reports a call without a result as unknown, right after the turn’s known results', () => {
    const out = pairToolCalls([user('a'), calls('c1', 'c2'), result('c1'), user('b')]);
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(out[3]!.parts[0]).toEqual({
      type: 'tool-result',
      callId: 'c2',
      name: 'workspace_write_file',
      content: UNKNOWN_OUTCOME,
      isError: true,
      images: [],
    });
  });

  it('pairs a trailing turn that was cut off before any result', () => {
    const out = pairToolCalls([user('a'), calls('c1')]);
    expect(out.at(-1)).toMatchObject({ role: 'tool', parts: [{ callId: 'c1', isError: true }] });
  });
});
