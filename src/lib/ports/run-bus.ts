import type { JsonObject } from '$lib/domain/json';
import type { RunUpdate } from '$lib/domain/run-update';

/**
 * What tabs tell each other about runs: live updates; and, for the tab that owns a run, a Stop or
 * the person's answer to a call waiting for approval.
 */
export type BusMessage =
  | { type: 'update'; runId: string; update: RunUpdate }
  | { type: 'cancel'; runId: string }
  | {
      type: 'decide';
      runId: string;
      approvalId: string;
      answer: { decision: 'approve' | 'deny' | 'always'; arguments?: JsonObject };
    };

/** A channel between every tab of the origin (BroadcastChannel in browsers). Never echoes to the sender. */
export interface RunBus {
  post(message: BusMessage): void;
  listen(handler: (message: BusMessage) => void): () => void;
}
