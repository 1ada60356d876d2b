import { describe, expect, it } from 'vitest';
import { requestNotes, roundsText } from '$lib/ui/run/request-notes';
import { journal } from './run-events';

describe('the run viewer’s request notes', () => {
  it('lists each distinct note once with the rounds it applied to', () => {
    const { ev } = journal();
    const topK = 'Top-k was not sent: OpenAI does not take it.';
    const image = 'An image in an assistant message was not sent.';
    const events = [
      ev('model_request_notes', { round: 1, invocationId: 'root', notes: [topK] }),
      ev('model_request_notes', { round: 2, invocationId: 'root', notes: [topK, image] }),
      ev('model_request_notes', { round: 3, invocationId: 'root', notes: [topK] }),
      ev('model_request_notes', { round: 1, invocationId: 'child', notes: [topK] }),
      ev('model_request_notes', { round: 5, invocationId: 'root', notes: [topK] }),
    ];
    expect(requestNotes(events)).toEqual([
      { text: topK, rounds: [1, 2, 3, 5] },
      { text: image, rounds: [2] },
    ]);
    expect(requestNotes([])).toEqual([]);
  });

  it('names the rounds in spans', () => {
    expect(roundsText([1, 2, 3, 5])).toBe('rounds 1–3, 5');
    expect(roundsText([4])).toBe('round 4');
    expect(roundsText([7, 2, 1])).toBe('rounds 1–2, 7');
  });
});
