import type { RunUpdate } from '$lib/domain/run-update';

/** What tabs tell each other about runs: live updates, and a Stop for the tab that owns a run. */
export type BusMessage =
  { type: 'update'; runId: string; update: RunUpdate } | { type: 'cancel'; runId: string };

/** A channel between every tab of the origin (BroadcastChannel in browsers). Never echoes to the sender. */
export interface RunBus {
  post(message: BusMessage): void;
  listen(handler: (message: BusMessage) => void): () => void;
}
