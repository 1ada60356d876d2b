import { defaultLevel, type NewRunEvent, type RunEvent } from '$lib/domain/events';
import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { quotaExceeded } from '$lib/domain/storage-quota';
import type { RunId, RunRecord } from '$lib/domain/run';
import type { SessionMessage } from '$lib/domain/session';
import type { Clock } from '$lib/ports/clock';
import type { Journal, JournalWrite, ReadEventsOptions } from '$lib/ports/journal';
import type { HearthDatabase } from './database';
import { putRecordFiles } from './record-files';
import { isQuotaExceeded, storageFailure } from '../storage-failure';

interface Pending {
  events: RunEvent[];
  record?: RunRecord;
  files: { workspace: string; path: string; bytes: Uint8Array }[];
  messages: SessionMessage[];
  resolve: (events: RunEvent[]) => void;
  reject: (e: unknown) => void;
}

/**
 * The journal in IndexedDB. An append and what it carries (the run record, record files) are
 * one transaction, and appends made in the same task share it (one transaction per event is
 * far slower). A run is owned by one tab, so the next seq is kept in memory after the first
 * append reads the stored maximum.
 */
export class DexieJournal implements Journal {
  readonly #nextSeq = new Map<string, number>();
  #queue: Pending[] = [];
  #flushScheduled = false;
  /** Batches are written one after another, so events are durable in seq order. */
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: HearthDatabase,
    private readonly clock: Clock,
  ) {}

  async append(runId: RunId, newEvents: NewRunEvent[], write: JournalWrite = {}): Promise<RunEvent[]> {
    if (!this.#nextSeq.has(runId)) {
      const last = await this.db.events.where('[runId+seq]').between([runId, 0], [runId, Infinity]).last();
      if (!this.#nextSeq.has(runId)) this.#nextSeq.set(runId, (last?.seq ?? 0) + 1);
    }
    const timestamp = new Date(this.clock.now()).toISOString();
    const events = newEvents.map((e) => {
      const seq = this.#nextSeq.get(runId)!;
      this.#nextSeq.set(runId, seq + 1);
      const stamp = e.invocationId === undefined ? {} : { invocationId: e.invocationId };
      return {
        runId,
        seq,
        timestamp,
        level: defaultLevel(e),
        type: e.type,
        ...stamp,
        payload: e.payload,
      } as RunEvent;
    });
    const files = (write.files ?? []).map((f) => ({
      ...f,
      bytes: typeof f.bytes === 'function' ? f.bytes(events) : f.bytes,
    }));
    return new Promise((resolve, reject) => {
      this.#queue.push({
        events,
        record: write.record,
        files,
        messages: write.messages ?? [],
        resolve,
        reject,
      });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        queueMicrotask(() => {
          const batch = this.#queue;
          this.#queue = [];
          this.#flushScheduled = false;
          this.#flushing = this.#flushing.then(() => this.#flush(batch));
        });
      }
    });
  }

  async #flush(batch: Pending[]): Promise<void> {
    try {
      // Hashed before the transaction: it may not wait on anything but the database.
      const hashed = await Promise.all(
        batch.flatMap((p) => p.files).map(async (f) => ({ ...f, sha256: await sha256Hex(f.bytes) })),
      );
      const tables = [this.db.events, this.db.runs, this.db.records, this.db.sessionMessages];
      await this.db.transaction('rw', tables, async () => {
        const records = new Map(batch.flatMap((p) => (p.record ? [[p.record.id, p.record]] : [])));
        const messages = batch.flatMap((p) => p.messages);
        // Issued together: the database pipelines them within the transaction.
        const [files] = await Promise.all([
          putRecordFiles(this.db.records, hashed, 'once'),
          this.db.events.bulkAdd(batch.flatMap((p) => p.events)),
          records.size > 0 ? this.db.runs.bulkPut([...records.values()]) : undefined,
          messages.length > 0 ? this.db.sessionMessages.bulkPut(messages) : undefined,
        ]);
        if (!files.ok) throw new Error(files.error.message);
      });
      for (const p of batch) p.resolve(p.events);
    } catch (e) {
      const failure = new HearthFailure(
        isQuotaExceeded(e)
          ? quotaExceeded('save the run journal')
          : {
              code: 'journal.append_failed',
              message: `The run journal could not be written: ${e instanceof Error ? e.message : String(e)}`,
            },
      );
      for (const p of batch) p.reject(failure);
    }
  }

  async read(runId: RunId, options: ReadEventsOptions = {}): Promise<RunEvent[]> {
    const limit = Math.min(500, Math.max(1, options.limit ?? 100));
    const range = this.db.events.where('[runId+seq]');
    if (options.beforeSeq !== undefined) {
      const page = await range
        .between([runId, 0], [runId, options.beforeSeq])
        .reverse()
        .limit(limit)
        .toArray();
      return page.reverse();
    }
    return range
      .between([runId, (options.afterSeq ?? 0) + 1], [runId, Infinity])
      .limit(limit)
      .toArray();
  }

  count(runId: RunId): Promise<number> {
    return this.#guarded('count the journal', () =>
      this.db.events.where('[runId+seq]').between([runId, 0], [runId, Infinity]).count(),
    );
  }

  /**
   * Deletes the run's events in one transaction. The seq counter of this tab is kept, so an
   * event appended afterwards never reuses a seq.
   */
  deleteEvents(runId: RunId): Promise<number> {
    return this.#guarded('delete the journal', () =>
      this.db.events.where('[runId+seq]').between([runId, 0], [runId, Infinity]).delete(),
    );
  }

  async #guarded<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e) {
      throw new HearthFailure(storageFailure(what, e));
    }
  }
}
