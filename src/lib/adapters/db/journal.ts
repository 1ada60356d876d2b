import { defaultLevel, type NewRunEvent, type RunEvent } from '$lib/domain/events';
import { HearthFailure } from '$lib/domain/errors';
import type { RunId } from '$lib/domain/run';
import type { Clock } from '$lib/ports/clock';
import type { Journal, ReadEventsOptions } from '$lib/ports/journal';
import type { HearthDatabase } from './database';

interface Pending {
  events: RunEvent[];
  resolve: (events: RunEvent[]) => void;
  reject: (e: unknown) => void;
}

/**
 * The journal in IndexedDB. Appends made in the same task are written in one transaction
 * (one transaction per event is far slower). A run is owned by one tab, so the next seq is
 * kept in memory after the first append reads the stored maximum.
 */
export class DexieJournal implements Journal {
  readonly #nextSeq = new Map<string, number>();
  #queue: Pending[] = [];
  #flushScheduled = false;

  constructor(
    private readonly db: HearthDatabase,
    private readonly clock: Clock,
  ) {}

  async append(runId: RunId, newEvents: NewRunEvent[]): Promise<RunEvent[]> {
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
    return new Promise((resolve, reject) => {
      this.#queue.push({ events, resolve, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        queueMicrotask(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#queue;
    this.#queue = [];
    this.#flushScheduled = false;
    try {
      await this.db.events.bulkAdd(batch.flatMap((p) => p.events));
      for (const p of batch) p.resolve(p.events);
    } catch (e) {
      const failure = new HearthFailure({
        code: 'journal.append_failed',
        message: `The run journal could not be written: ${e instanceof Error ? e.message : String(e)}`,
      });
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
      throw new HearthFailure({
        code: 'storage.failed',
        message: `Could not ${what}: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
  }
}
