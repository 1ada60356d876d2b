import type { ContentPart, ModelMessage } from '$lib/domain/model';

type ToolResultPart = Extract<ContentPart, { type: 'tool-result' }>;

export const UNKNOWN_OUTCOME =
  'The outcome of this call is unknown: the run stopped before its result was recorded. It may or may not have taken effect. Check the current state (for example, read the file) before repeating it.';

/**
 * Keeps every tool call paired with a result (tools.md §9 item 6): a call left without one by a
 * stopped or interrupted run gets an error result saying its outcome is unknown, placed with the
 * turn's other results. Providers reject unpaired calls, and the model must not assume either way.
 */
export function pairToolCalls(messages: readonly ModelMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    out.push(message);
    if (message.role !== 'assistant') continue;
    const calls = message.parts.filter((p) => p.type === 'tool-call');
    if (calls.length === 0) continue;
    // The turn's results are the tool messages that directly follow it.
    const answered = new Set<string>();
    while (messages[i + 1]?.role === 'tool') {
      const next = messages[++i]!;
      for (const p of next.parts) if (p.type === 'tool-result') answered.add(p.callId);
      out.push(next);
    }
    for (const call of calls) {
      if (answered.has(call.callId)) continue;
      const result: ToolResultPart = {
        type: 'tool-result',
        callId: call.callId,
        name: call.name,
        content: UNKNOWN_OUTCOME,
        isError: true,
        images: [],
      };
      out.push({ role: 'tool', parts: [result] });
    }
  }
  return out;
}
