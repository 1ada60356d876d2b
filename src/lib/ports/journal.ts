import type { NewRunEvent, RunEvent } from '$lib/domain/events';
import type { RunId } from '$lib/domain/run';

export interface ReadEventsOptions {
  /** Events with seq > afterSeq (oldest first). */
  afterSeq?: number;
  /** The newest page of events with seq < beforeSeq (returned oldest first). */
  beforeSeq?: number;
  /** 1..500, default 100. */
  limit?: number;
}

/**
 * The run journal: append-only and ordered, seq per run from 1 without gaps or duplicates.
 * `append` resolves once the events are durable; it rejects (journal.append_failed) otherwise,
 * which the runtime treats as a system failure.
 */
export interface Journal {
  append(runId: RunId, events: NewRunEvent[]): Promise<RunEvent[]>;
  read(runId: RunId, options?: ReadEventsOptions): Promise<RunEvent[]>;
  /** How many events the run's journal holds. */
  count(runId: RunId): Promise<number>;
  /** Deletes every event of a finished run (retention); resolves with how many were deleted. */
  deleteEvents(runId: RunId): Promise<number>;
}
