import type { RunEvent } from '$lib/domain/events';

export interface RequestNote {
  text: string;
  /** The rounds whose request it was about, in order. */
  rounds: number[];
}

/** Each distinct note of a run's requests (`model_request_notes`), with the rounds it applied to. */
export function requestNotes(events: readonly RunEvent[]): RequestNote[] {
  const byText = new Map<string, RequestNote>();
  for (const e of events) {
    if (e.type !== 'model_request_notes') continue;
    for (const text of e.payload.notes) {
      const note = byText.get(text) ?? { text, rounds: [] };
      if (!note.rounds.includes(e.payload.round)) note.rounds.push(e.payload.round);
      byText.set(text, note);
    }
  }
  return [...byText.values()];
}

/** `[1, 2, 3, 5]` → "rounds 1–3, 5". */
export function roundsText(rounds: readonly number[]): string {
  const sorted = [...rounds].sort((a, b) => a - b);
  const spans: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    spans.push(i === j ? `${sorted[i]}` : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return `${sorted.length === 1 ? 'round' : 'rounds'} ${spans.join(', ')}`;
}
