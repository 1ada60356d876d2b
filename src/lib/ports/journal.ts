import type { NewRunEvent, RunEvent } from '$lib/domain/events';
import type { RunId, RunRecord } from '$lib/domain/run';
import type { SessionMessage } from '$lib/domain/session';
import type { WorkspacePath } from '$lib/domain/workspace-path';

export interface ReadEventsOptions {
  /** Events with seq > afterSeq (oldest first). */
  afterSeq?: number;
  /** The newest page of events with seq < beforeSeq (returned oldest first). */
  beforeSeq?: number;
  /** 1..500, default 100. */
  limit?: number;
}

/** What is stored in the same transaction as a step's events. */
export interface JournalWrite {
  /** The run's record as it stands after these events. */
  record?: RunRecord;
  /**
   * Record files the events point at (paths under `RECORD_ROOTS` of the workspace `workspace`),
   * written once: the same bytes again are a no-op, different bytes fail the append. Content
   * given as a function is made from the stored events (a record that names an event's seq).
   */
  files?: {
    workspace: string;
    path: WorkspacePath;
    bytes: Uint8Array | ((events: readonly RunEvent[]) => Uint8Array);
  }[];
  /** A Session's messages the step adds to its history (stored by `[sessionId+index]`, replacing). */
  messages?: SessionMessage[];
}

/**
 * The run journal: append-only and ordered, seq per run from 1 without gaps or duplicates.
 * `append` resolves once the events, and whatever `write` adds, are durable together; it
 * rejects (journal.append_failed) otherwise, which the runtime treats as a system failure.
 */
export interface Journal {
  append(runId: RunId, events: NewRunEvent[], write?: JournalWrite): Promise<RunEvent[]>;
  read(runId: RunId, options?: ReadEventsOptions): Promise<RunEvent[]>;
  /** How many events the run's journal holds. */
  count(runId: RunId): Promise<number>;
  /** Deletes every event of a finished run (retention); resolves with how many were deleted. */
  deleteEvents(runId: RunId): Promise<number>;
}
