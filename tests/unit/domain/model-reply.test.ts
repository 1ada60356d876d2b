import { describe, expect, it } from 'vitest';
import type { StreamPart } from '$lib/domain/model';
import { assembleReply, createReplyAssembler } from '$lib/domain/model-reply';

describe('assembleReply', () => {
  it('keeps block order, signatures, provider metadata and native parts', () => {
    const parts: StreamPart[] = [
      { type: 'turn-start', warnings: [] },
      { type: 'response-metadata', id: 'msg_1' },
      { type: 'reasoning-start', blockId: 'r1' },
      { type: 'reasoning-delta', blockId: 'r1', delta: 'Think ' },
      { type: 'reasoning-delta', blockId: 'r1', delta: 'hard.' },
      { type: 'reasoning-end', blockId: 'r1', signature: 'SIG' },
      { type: 'native', provider: 'anthropic', value: { type: 'redacted_thinking', data: 'R' } },
      { type: 'text-start', blockId: 't1' },
      { type: 'text-delta', blockId: 't1', delta: 'Hi.' },
      { type: 'text-end', blockId: 't1', providerMetadata: { gemini: { thoughtSignature: 'T' } } },
      { type: 'tool-input-start', blockId: 'c1', callId: 'call_1', name: 'ls' },
      { type: 'tool-input-delta', blockId: 'c1', delta: '{"dir":"work"}' },
      { type: 'tool-input-start', blockId: 'c2', callId: 'call_2', name: 'read' },
      { type: 'tool-input-delta', blockId: 'c2', delta: '{"path":' },
      { type: 'tool-input-end', blockId: 'c1' },
      { type: 'tool-input-end', blockId: 'c2' },
      { type: 'tool-call', callId: 'call_1', name: 'ls', rawArguments: '{"dir":"work"}' },
      {
        type: 'tool-call',
        callId: 'call_2',
        name: 'read',
        rawArguments: '{"path":',
        providerMetadata: { gemini: { thoughtSignature: 'C' } },
      },
      { type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_use' }, usage: {} },
    ];
    expect(assembleReply(parts)).toEqual([
      { type: 'reasoning', text: 'Think hard.', signature: 'SIG' },
      { type: 'native', provider: 'anthropic', value: { type: 'redacted_thinking', data: 'R' } },
      { type: 'text', text: 'Hi.', providerMetadata: { gemini: { thoughtSignature: 'T' } } },
      { type: 'tool-call', callId: 'call_1', name: 'ls', input: { dir: 'work' } },
      {
        type: 'tool-call',
        callId: 'call_2',
        name: 'read',
        // Replayed as `{}`; the text as sent is kept to show the person.
        input: {},
        rawArguments: '{"path":',
        providerMetadata: { gemini: { thoughtSignature: 'C' } },
      },
    ]);
  });

  it('leaves out unfinished and empty blocks, keeps an empty signed one', () => {
    const a = createReplyAssembler();
    a.push({ type: 'text-start', blockId: 'a' });
    a.push({ type: 'text-end', blockId: 'a' });
    a.push({ type: 'reasoning-start', blockId: 'b' });
    a.push({ type: 'reasoning-end', blockId: 'b', signature: 'S' });
    a.push({ type: 'text-start', blockId: 'c' });
    a.push({ type: 'text-delta', blockId: 'c', delta: 'cut off' });
    a.push({ type: 'tool-input-start', blockId: 'd', callId: 'x', name: 'ls' });
    expect(a.parts()).toEqual([{ type: 'reasoning', text: '', signature: 'S' }]);
  });
});
