import type { NewRunEvent, RunEvent } from '$lib/domain/events';
import type { InvocationId, RunRecord, RunStatus } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { Clock } from '$lib/ports/clock';
import type { Journal } from '$lib/ports/journal';
import type { RunStore } from '$lib/ports/stores';

type RecordPatch = Partial<Omit<RunRecord, 'id' | 'status'>>;

/** What code working on a run writes to: its journal, its record and its live feed. */
export interface RunLog {
  readonly run: RunRecord;
  /** Appends events to the journal, then publishes them; returns them with their seq. */
  emit(...events: NewRunEvent[]): Promise<RunEvent[]>;
  update(patch: RecordPatch): Promise<void>;
  setStatus(status: RunStatus, patch?: RecordPatch, reason?: string): Promise<void>;
  /** Live only (stream parts, progress): never journaled. */
  publish(update: RunUpdate): void;
}

/**
 * Keeps a run's record, its journal and its live feed in step: every change is persisted and
 * journaled before it is published, so anything a page showed can be replayed from storage.
 */
export class RunRecorder implements RunLog {
  #run: RunRecord;

  constructor(
    run: RunRecord,
    private readonly deps: {
      runs: RunStore;
      journal: Journal;
      clock: Clock;
      publish: (update: RunUpdate) => void;
    },
  ) {
    this.#run = run;
  }

  get run(): RunRecord {
    return this.#run;
  }

  async emit(...events: NewRunEvent[]): Promise<RunEvent[]> {
    const stored = await this.deps.journal.append(this.#run.id, events);
    for (const event of stored) this.deps.publish({ type: 'event', event });
    return stored;
  }

  async update(patch: RecordPatch): Promise<void> {
    this.#run = { ...this.#run, ...patch, updatedAt: this.deps.clock.now() };
    await this.deps.runs.put(this.#run);
    this.deps.publish({ type: 'run', run: this.#run });
  }

  async setStatus(status: RunStatus, patch: RecordPatch = {}, reason?: string): Promise<void> {
    const from = this.#run.status;
    if (from === status && Object.keys(patch).length === 0) return;
    this.#run = { ...this.#run, ...patch, status, updatedAt: this.deps.clock.now() };
    await this.deps.runs.put(this.#run);
    await this.emit({ type: 'status_changed', payload: { status, from, ...(reason ? { reason } : {}) } });
    this.deps.publish({ type: 'run', run: this.#run });
  }

  publish(update: RunUpdate): void {
    this.deps.publish(update);
  }

  /**
   * The log an invocation writes to: its events carry its id. Only the foreground chain moves the
   * run's status (runtime.md §1.3); a return-mode child's status changes are not the run's.
   */
  invocation(invocationId: InvocationId, foreground: boolean): RunLog {
    const current = () => this.run;
    return {
      get run() {
        return current();
      },
      emit: (...events) => this.emit(...events.map((e) => ({ ...e, invocationId }))),
      update: (patch) => this.update(patch),
      setStatus: foreground
        ? (status, patch, reason) => this.setStatus(status, patch, reason)
        : async () => {},
      publish: (update) => this.publish(update),
    };
  }
}
