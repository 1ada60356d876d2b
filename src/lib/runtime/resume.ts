import type { RunEvent } from '$lib/domain/events';
import type { ModelMessage } from '$lib/domain/model';
import type { ModelToolCall } from './model-turn';

/**
 * The calls a run left unstarted (D10): those of its last turn that have no result and never
 * started, such as a call that was waiting for approval when the tab closed. They never ran, so a
 * resumed run makes them again (and asks again). A call that started without a recorded result is
 * not among them: its outcome is unknown, and the model is told so instead.
 */
export function unstartedCalls(
  messages: readonly ModelMessage[],
  events: readonly RunEvent[],
): { round: number; calls: ModelToolCall[] } | null {
  let at = messages.length - 1;
  while (at >= 0 && messages[at]!.role === 'tool') at--;
  const turn = messages[at];
  if (!turn || turn.role !== 'assistant') return null;
  const answered = new Set(
    messages
      .slice(at + 1)
      .flatMap((m) => m.parts.flatMap((p) => (p.type === 'tool-result' ? [p.callId] : []))),
  );
  const started = new Set(
    events.flatMap((e) =>
      e.type === 'tool_call_started' || e.type === 'tool_result_stored' ? [e.payload.callId] : [],
    ),
  );
  const calls = turn.parts.flatMap((p) =>
    p.type === 'tool-call' && !answered.has(p.callId) && !started.has(p.callId)
      ? [{ callId: p.callId, name: p.name, rawArguments: JSON.stringify(p.input) }]
      : [],
  );
  const round = events.findLast((e) => e.type === 'model_completed')?.payload;
  if (calls.length === 0 || !round || !('round' in round)) return null;
  return { round: round.round, calls };
}
