import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import { systemClock } from '$lib/adapters/system/clock';
import { defaultLevel, type NewRunEvent, type RunEvent } from '$lib/domain/events';
import type { RunId } from '$lib/domain/run';
import { median } from './loop';

/**
 * Issue 6, the run journal: append throughput and paged reads, on whatever IndexedDB the
 * environment has (real in Chromium, fake-indexeddb in Node). Shared by both benchmarks.
 */

/** The events of one tool round, in the order the runtime journals them (about 300-600 bytes each). */
function roundEvents(round: number): NewRunEvent[] {
  const invocationId = 'inv_01JDZ8Q4W7M3X5K2N9P6R1T0VB';
  const callId = `call_${round}_Xy9aB3cD`;
  const ids = {
    round,
    invocationId,
    callId,
    toolId: 'builtin:workspace.write_file',
    name: 'workspace.write_file',
    callName: 'workspace_write_file',
  };
  return [
    { type: 'status_changed', payload: { status: 'calling_model', from: 'dispatching_tool' } },
    {
      type: 'model_request_created',
      payload: {
        round,
        invocationId,
        request: { provider: 'openai-chat', model: 'gpt-4o', messageCount: 2 * round + 2, toolCount: 5 },
      },
    },
    {
      type: 'model_response_stored',
      payload: {
        round,
        invocationId,
        path: `runs/run_bench/model-responses/round-${String(round).padStart(3, '0')}.json`,
        responseId: `chatcmpl-${round}AbC123xyz`,
        model: 'gpt-4o-2024-08-06',
      },
    },
    {
      type: 'model_completed',
      payload: {
        round,
        invocationId,
        modelResponsePath: `runs/run_bench/model-responses/round-${String(round).padStart(3, '0')}.json`,
        toolCallCount: 1,
        textChars: 120,
        textWords: 21,
        hasReasoning: false,
        reasoningChars: 0,
        finishReason: 'tool-calls',
        usage: { inputTokens: 1200 + round * 40, outputTokens: 60, totalTokens: 1260 + round * 40 },
      },
    },
    {
      type: 'tool_call_requested',
      payload: {
        ...ids,
        snapshotId: 'snapshot_run_bench',
        argumentsRef: `runs/run_bench/tool-args/round-${round}-${callId}.json`,
      },
    },
    { type: 'tool_call_started', payload: ids },
    {
      type: 'workspace_file_written',
      payload: {
        invocationId,
        path: `work/r${round}.md`,
        mode: 'replace',
        chars: 812,
        words: 140,
        sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      },
    },
    {
      type: 'tool_result_stored',
      payload: { round, invocationId, callId, path: `tool-results/run_bench/round-${round}-${callId}.json` },
    },
    {
      type: 'tool_call_completed',
      payload: {
        ...ids,
        isError: false,
        errorCode: null,
        message: '',
        elapsedMs: 4,
        resourceRefs: [`work/r${round}.md`],
      },
    },
  ];
}

export function benchEvents(n: number): NewRunEvent[] {
  const out: NewRunEvent[] = [];
  for (let round = 1; out.length < n; round++) out.push(...roundEvents(round));
  return out.slice(0, n);
}

const eventsPerSecond = (n: number, ms: number) => Math.round(n / (ms / 1000));

/** Append modes, each on a fresh run id; returns events/s. */
const appendModes = {
  /** `batch` appends issued in the same task: DexieJournal writes them in one transaction. */
  batched:
    (batch: number) =>
    async (journal: DexieJournal, _db: HearthDatabase, runId: RunId, evs: NewRunEvent[]) => {
      for (let i = 0; i < evs.length; i += batch)
        await Promise.all(evs.slice(i, i + batch).map((e) => journal.append(runId, [e])));
    },
  /** One awaited append at a time: how RunRecorder.emit uses the journal today. */
  sequential: async (journal: DexieJournal, _db: HearthDatabase, runId: RunId, evs: NewRunEvent[]) => {
    for (const e of evs) await journal.append(runId, [e]);
  },
  /** Baseline: one transaction per event, straight into the table. */
  plainAdd: async (_journal: DexieJournal, db: HearthDatabase, runId: RunId, evs: NewRunEvent[]) => {
    let seq = 1;
    const timestamp = new Date().toISOString();
    for (const e of evs)
      await db.events.add({
        runId,
        seq: seq++,
        timestamp,
        level: defaultLevel(e),
        type: e.type,
        payload: e.payload,
      } as RunEvent);
  },
};

export async function measureAppends(label: string, events: number, trials: number): Promise<string> {
  const db = openHearthDatabase(`hearth-bench-journal-${Date.now()}`);
  const journal = new DexieJournal(db, systemClock);
  const evs = benchEvents(events);
  const modes = {
    batched_10: appendModes.batched(10),
    batched_100: appendModes.batched(100),
    sequential: appendModes.sequential,
    baseline_plain_add: appendModes.plainAdd,
  };
  const rates: Record<string, number[]> = {};
  try {
    // One warm-up trial, then `trials` measured ones; modes interleaved so load hits them alike.
    for (let t = 0; t <= trials; t++) {
      for (const [name, run] of Object.entries(modes)) {
        const runId = `run_${name}_${t}` as RunId;
        const start = performance.now();
        await run(journal, db, runId, evs);
        const ms = performance.now() - start;
        const stored = await db.events.where('[runId+seq]').between([runId, 0], [runId, Infinity]).count();
        if (stored !== events) throw new Error(`${name}: stored ${stored} of ${events}`);
        if (t > 0) (rates[name] ??= []).push(eventsPerSecond(events, ms));
      }
    }
  } finally {
    await db.delete();
  }
  const m = (name: string) => median(rates[name]!);
  return (
    `RESULT journal-append-${label} events=${events} trials=${trials} ` +
    `batched_10_per_task_events_per_s=${m('batched_10')} batched_100_per_task_events_per_s=${m('batched_100')} ` +
    `sequential_awaited_events_per_s=${m('sequential')} baseline_add_per_event_events_per_s=${m('baseline_plain_add')}`
  );
}

/** Raw IndexedDB: `getAll` over the key range, the floor for a forward page. */
function rawForward(idb: IDBDatabase, runId: string, afterSeq: number, limit: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const req = idb
      .transaction('events', 'readonly')
      .objectStore('events')
      .getAll(IDBKeyRange.bound([runId, afterSeq + 1], [runId, Infinity]), limit);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** Raw IndexedDB: a `prev` cursor collecting `limit` values, the floor for a backward page. */
function rawBackward(idb: IDBDatabase, runId: string, beforeSeq: number, limit: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const out: unknown[] = [];
    const req = idb
      .transaction('events', 'readonly')
      .objectStore('events')
      .openCursor(IDBKeyRange.bound([runId, 0], [runId, beforeSeq], false, true), 'prev');
    req.onsuccess = () => {
      const cursor = req.result;
      if (cursor && out.length < limit) {
        out.push(cursor.value);
        cursor.continue();
      } else resolve(out.reverse());
    };
    req.onerror = () => reject(req.error);
  });
}

export async function measurePagedReads(label: string, events: number, passes: number): Promise<string> {
  const db = openHearthDatabase(`hearth-bench-journal-read-${Date.now()}`);
  const journal = new DexieJournal(db, systemClock);
  const runId = 'run_read_bench' as RunId;
  const PAGE = 500;
  const evs = benchEvents(events);
  try {
    // A neighbour run on each side in key order, so ranges are not the whole store.
    for (const other of ['run_read_bench_a', runId, 'run_read_bench_z'] as RunId[])
      for (let i = 0; i < evs.length; i += PAGE) await journal.append(other, evs.slice(i, i + PAGE));
    const idb = db.backendDB();
    const forward: number[] = [];
    const forwardRaw: number[] = [];
    const backward: number[] = [];
    const backwardRaw: number[] = [];
    const backwardRange: number[] = [];
    const check = (page: { length: number }) => {
      if (page.length !== PAGE) throw new Error(`page of ${page.length}`);
    };
    for (let p = 0; p <= passes; p++) {
      for (let afterSeq = 0; afterSeq < events; afterSeq += PAGE) {
        let t = performance.now();
        check(await journal.read(runId, { afterSeq, limit: PAGE }));
        const a = performance.now() - t;
        t = performance.now();
        check(await rawForward(idb, runId, afterSeq, PAGE));
        const b = performance.now() - t;
        t = performance.now();
        const last = await journal.read(runId, { beforeSeq: events + 1, limit: PAGE });
        const c = performance.now() - t;
        check(last);
        if (last[0]!.seq !== events - PAGE + 1) throw new Error('wrong last page');
        t = performance.now();
        check(await rawBackward(idb, runId, events + 1, PAGE));
        const d = performance.now() - t;
        // seq has no gaps, so the last page is also a known forward range.
        t = performance.now();
        check(await rawForward(idb, runId, events - PAGE, PAGE));
        const e = performance.now() - t;
        if (p === 0) continue; // warm-up pass
        forward.push(a);
        forwardRaw.push(b);
        backward.push(c);
        backwardRaw.push(d);
        backwardRange.push(e);
      }
    }
    return (
      `RESULT journal-read-${label} run_events=${events} page=${PAGE} samples=${forward.length} ` +
      `after_seq_page_median_ms=${median(forward).toFixed(2)} baseline_raw_getall_median_ms=${median(forwardRaw).toFixed(2)} ` +
      `before_seq_last_page_median_ms=${median(backward).toFixed(2)} baseline_raw_prev_cursor_median_ms=${median(backwardRaw).toFixed(2)} ` +
      `baseline_raw_getall_known_range_median_ms=${median(backwardRange).toFixed(2)}`
    );
  } finally {
    await db.delete();
  }
}
