import type { HearthError } from '$lib/domain/errors';
import type { NewRunEvent, RunEvent } from '$lib/domain/events';
import type { InvocationId, RunRecord, RunStatus } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { SessionMessage } from '$lib/domain/session';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import { isRecordPath } from '$lib/domain/workspace-roots';
import type { Clock } from '$lib/ports/clock';
import type { Journal, JournalWrite } from '$lib/ports/journal';

type RecordPatch = Partial<Omit<RunRecord, 'id' | 'status'>>;

/** An event of a step, by its place in the step. */
export type StepEvent = number & { readonly __stepEvent: true };

/** What one step of a run records; nothing of it is durable or visible before the step ends. */
export interface RunStep {
  /** Returns the events' places, for a record of the same step that names their seq. */
  emit(...events: NewRunEvent[]): StepEvent[];
  /** A `status_changed` event in its place among the step's events, and the record's status. */
  status(status: RunStatus, reason?: string): void;
  update(patch: RecordPatch): void;
  /**
   * A record file the step's events point at (JSON unless bytes), written once. A function gets
   * the seq each of the step's events was stored under.
   */
  keep(path: WorkspacePath, value: unknown | ((seqOf: (event: StepEvent) => number) => unknown)): void;
  /** A message the step adds to the Session's history. */
  message(message: SessionMessage): void;
  /** A live update to publish once the step is durable, after its events. */
  publish(update: RunUpdate): void;
}

/** What code working on a run writes to: its journal, its record and its live feed. */
export interface RunLog {
  readonly run: RunRecord;
  /**
   * One step: its events, record files and record changes are durable together (one journal
   * transaction), then published in order. Returns the events with their seq.
   */
  step(build: (step: RunStep) => void): Promise<RunEvent[]>;
  /** A step of just these events. */
  emit(...events: NewRunEvent[]): Promise<RunEvent[]>;
  update(patch: RecordPatch): Promise<void>;
  setStatus(status: RunStatus, patch?: RecordPatch, reason?: string): Promise<void>;
  /** Live only (stream parts, progress): never journaled. */
  publish(update: RunUpdate): void;
}

const encode = (value: unknown): Uint8Array =>
  value instanceof Uint8Array ? value : new TextEncoder().encode(JSON.stringify(value, null, 2));

/**
 * Keeps a run's record, its journal and its live feed in step: every change is persisted and
 * journaled before it is published, so anything a page showed can be replayed from storage.
 */
export class RunRecorder implements RunLog {
  #run: RunRecord;
  /** The seq of the last event this recorder stored. */
  #lastSeq = 0;

  constructor(
    run: RunRecord,
    private readonly deps: {
      journal: Journal;
      clock: Clock;
      publish: (update: RunUpdate) => void;
      /** The workspace the run's record files belong to. */
      workspaceKey?: string;
    },
  ) {
    this.#run = run;
  }

  get run(): RunRecord {
    return this.#run;
  }

  async step(build: (step: RunStep) => void): Promise<RunEvent[]> {
    const events: NewRunEvent[] = [];
    const files: NonNullable<JournalWrite['files']> = [];
    const messages: SessionMessage[] = [];
    const after: RunUpdate[] = [];
    let next = this.#run;
    build({
      emit: (...e) => e.map((event) => (events.push(event) - 1) as StepEvent),
      status: (status, reason) => {
        if (next.status === status) return;
        events.push({
          type: 'status_changed',
          payload: { status, from: next.status, ...(reason ? { reason } : {}) },
        });
        next = { ...next, status };
      },
      update: (patch) => void (next = { ...next, ...patch }),
      keep: (path, value) => {
        const workspace = this.deps.workspaceKey;
        if (!workspace || !isRecordPath(path))
          throw new Error(`internal: ${path} is not a record of this run`);
        files.push({
          workspace,
          path,
          bytes:
            typeof value === 'function'
              ? (stored) => encode(value((e: StepEvent) => stored[e]!.seq))
              : encode(value),
        });
      },
      message: (m) => void messages.push(m),
      publish: (u) => void after.push(u),
    });
    const changed = next !== this.#run;
    if (!changed && events.length === 0 && files.length === 0 && messages.length === 0) {
      for (const u of after) this.deps.publish(u);
      return [];
    }
    const record = changed ? { ...next, updatedAt: this.deps.clock.now() } : undefined;
    const stored = await this.deps.journal.append(this.#run.id, events, { record, files, messages });
    this.#lastSeq = stored.at(-1)?.seq ?? this.#lastSeq;
    // The record first: a run's terminal event ends its watchers' streams.
    if (record) {
      this.#run = record;
      this.deps.publish({ type: 'run', run: record });
    }
    for (const event of stored) this.deps.publish({ type: 'event', event });
    for (const u of after) this.deps.publish(u);
    return stored;
  }

  emit(...events: NewRunEvent[]): Promise<RunEvent[]> {
    return this.step((s) => s.emit(...events));
  }

  async update(patch: RecordPatch): Promise<void> {
    await this.step((s) => s.update(patch));
  }

  async setStatus(status: RunStatus, patch: RecordPatch = {}, reason?: string): Promise<void> {
    if (this.#run.status === status && Object.keys(patch).length === 0) return;
    await this.step((s) => {
      s.update(patch);
      s.status(status, reason);
    });
  }

  publish(update: RunUpdate): void {
    this.deps.publish(update);
  }

  /**
   * The run's failure when not even that can be stored (the browser's storage is full): the
   * failed record and its `run_failed` event are published live only, so the page still shows
   * why the run ended. The stored run stays unfinished; start-up marks it interrupted.
   */
  publishUnrecorded(error: HearthError): void {
    const now = this.deps.clock.now();
    this.#run = { ...this.#run, status: 'failed', error, updatedAt: now };
    this.deps.publish({ type: 'run', run: this.#run });
    this.deps.publish({
      type: 'event',
      event: {
        runId: this.#run.id,
        seq: this.#lastSeq + 1,
        timestamp: new Date(now).toISOString(),
        level: 'error',
        type: 'run_failed',
        payload: { code: error.code, message: error.message, retryable: false, userRetryable: false },
      },
    });
  }

  /**
   * The log an invocation writes to: its events carry its id. Only the foreground chain moves the
   * run's status (runtime.md §1.3); a return-mode child's status changes are not the run's.
   */
  invocation(invocationId: InvocationId, foreground: boolean): RunLog {
    const current = () => this.run;
    const stamp = (events: NewRunEvent[]) => events.map((e) => ({ ...e, invocationId }));
    return {
      get run() {
        return current();
      },
      step: (build) =>
        this.step((s) =>
          build({
            emit: (...events) => s.emit(...stamp(events)),
            status: foreground ? (status, reason) => s.status(status, reason) : () => {},
            update: (patch) => s.update(patch),
            keep: (path, value) => s.keep(path, value),
            message: (m) => s.message(m),
            publish: (u) => s.publish(u),
          }),
        ),
      emit: (...events) => this.emit(...stamp(events)),
      update: (patch) => this.update(patch),
      setStatus: foreground
        ? (status, patch, reason) => this.setStatus(status, patch, reason)
        : async () => {},
      publish: (update) => this.publish(update),
    };
  }
}
