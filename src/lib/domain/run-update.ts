import type { RunEvent } from './events';
import type { StreamPart } from './model';
import type { RunRecord } from './run';
import type { SessionMessage } from './session';

/**
 * What a page sees of a run as it happens: journal events (durable), stream parts (live only,
 * never journaled: D14), messages as they are saved, and the run record after each change.
 */
export type RunUpdate =
  | { type: 'event'; event: RunEvent }
  | { type: 'part'; round: number; part: StreamPart }
  /** The round's streamed output is void (the request is being retried). */
  | { type: 'round-reset'; round: number }
  | { type: 'message'; message: SessionMessage }
  | { type: 'run'; run: RunRecord };
