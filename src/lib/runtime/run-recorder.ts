import type { NewRunEvent, RunEvent } from '$lib/domain/events';
import type { RunRecord, RunStatus } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { Clock } from '$lib/ports/clock';
import type { Journal } from '$lib/ports/journal';
import type { RunStore } from '$lib/ports/stores';

/**
 * Keeps a run's record, its journal and its live feed in step: every change is persisted and
 * journaled before it is published, so anything a page showed can be replayed from storage.
 */
export class RunRecorder {
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

  /** Appends events to the journal, then publishes them; returns them with their seq. */
  async emit(...events: NewRunEvent[]): Promise<RunEvent[]> {
    const stored = await this.deps.journal.append(this.#run.id, events);
    for (const event of stored) this.deps.publish({ type: 'event', event });
    return stored;
  }

  async update(patch: Partial<Omit<RunRecord, 'id' | 'status'>>): Promise<void> {
    this.#run = { ...this.#run, ...patch, updatedAt: this.deps.clock.now() };
    await this.deps.runs.put(this.#run);
    this.deps.publish({ type: 'run', run: this.#run });
  }

  async setStatus(
    status: RunStatus,
    patch: Partial<Omit<RunRecord, 'id' | 'status'>> = {},
    reason?: string,
  ): Promise<void> {
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
}
