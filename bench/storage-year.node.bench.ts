import 'fake-indexeddb/auto';
import { test } from 'vitest';
import { DEFAULT_RETENTION, DAY_MS, type RetentionPolicy } from '$lib/domain/retention';
import type { StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { applyRetention, currentPlan, measureDir } from '$lib/runtime/retention';
import { chatRunWorkspaceKey } from '$lib/runtime/chats';
import { chatHarness } from '../tests/support/chat-harness';

/**
 * A year of daily chatting: `DAYS` days of `PER_DAY` chat replies (spread over five chats), each a
 * real Chat run (prompt assembly, two model turns: write output/main.md, then commit; journal,
 * checkpoints, run workspace), with the automatic retention pass after each day's replies, as
 * `AutoRetention` makes one pass of a burst. The baseline is retention off; as it deletes nothing
 * its storage grows every day by at least the first days' growth (a reply's frozen input grows with
 * the chat until the prompt's budget), so it is simulated for `BASELINE_DAYS` and its year is at
 * least that growth times `DAYS` (a whole year of it would not fit in this process's memory).
 * Stored bytes: every IndexedDB row (UTF-8 JSON, binary fields by length) plus every workspace file.
 * Node with fake-indexeddb and the memory workspace: the bytes are what Hearth writes, not what a
 * browser's storage adds around them.
 */
const DAYS = Number(process.env.HEARTH_BENCH_DAYS ?? 365);
const PER_DAY = 50;
const CHATS = 5;
const BASELINE_DAYS = Math.min(DAYS, 10);

const REPLY = 'The lamp turns and the bay answers with its own small lights. '.repeat(12);
const MESSAGE = 'Tell me about the storm season and the ships you counted last night, please. '.repeat(2);

/** Each reply: the agent writes its answer, then commits it. */
function replyingModel(): ModelGateway {
  let turn = 0;
  const parts = (call: { name: string; args: object }): StreamPart[] => [
    { type: 'turn-start', warnings: [] },
    { type: 'tool-call', callId: `c${turn}`, name: call.name, rawArguments: JSON.stringify(call.args) },
    {
      type: 'finish',
      reason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: { inputTokens: 3000, outputTokens: 200, totalTokens: 3200 },
    },
  ];
  return {
    provider: 'scripted',
    async *stream() {
      turn += 1;
      yield* turn % 2 === 1
        ? parts({ name: 'workspace_write_file', args: { path: 'output/main.md', content: REPLY } })
        : parts({ name: 'workspace_commit', args: { path: 'output/main.md', finish: true } });
    },
  };
}

function rowBytes(value: unknown): number {
  if (value === null || value === undefined) return 4;
  if (typeof value === 'string') return Buffer.byteLength(value) + 2;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value).length;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (value instanceof Blob) return value.size;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + rowBytes(v) + 1, 2);
  return Object.entries(value as object).reduce((n, [k, v]) => n + Buffer.byteLength(k) + 3 + rowBytes(v), 2);
}

async function year(policy: RetentionPolicy | null, days: number) {
  let now = Date.UTC(2026, 0, 1);
  const clock = { now: () => now };
  const h = await chatHarness(replyingModel(), { clock });
  const chats = [];
  for (let i = 0; i < CHATS; i++) chats.push(await h.service.create('c1'));
  const retention = { runs: h.deps.runs, journal: h.deps.journal, workspaces: h.workspaces, clock };
  const started = performance.now();
  for (let day = 0; day < days; day++) {
    for (let r = 0; r < PER_DAY; r++) {
      now = Date.UTC(2026, 0, 1) + day * DAY_MS + r * 60_000;
      const chat = chats[r % CHATS]!;
      for await (const u of h.service.send(chat.id, MESSAGE)) {
        if (u.type === 'event' && u.event.type === 'run_failed')
          throw new Error(JSON.stringify(u.event.payload));
      }
    }
    if (policy) {
      await applyRetention(await currentPlan(policy, retention), retention);
      await h.service.allUnreferencedStates(true);
    }
  }
  const seconds = (performance.now() - started) / 1000;

  const tables: Record<string, number> = {};
  for (const table of h.db.tables) {
    let bytes = 0;
    await table.each((row) => void (bytes += rowBytes(row)));
    tables[table.name] = bytes;
  }
  // The files beside the records (a run's `run/` files are rows of `records`, counted above).
  let files = 0;
  for (const chat of chats) {
    const ws = await h.fileStore.open(`chats/${chat.id}`);
    if (ws.ok) files += (await measureDir(ws.value)).bytes;
  }
  for (const run of await h.deps.runs.listTerminal()) {
    if (run.pruned || run.target.kind !== 'chat') continue;
    const ws = await h.fileStore.open(chatRunWorkspaceKey(run.target.chatId, run.id));
    if (ws.ok) files += (await measureDir(ws.value)).bytes;
  }
  const database = Object.values(tables).reduce((a, b) => a + b, 0);
  const runs = (await h.deps.runs.listTerminal()).length;
  const messages = (await Promise.all(chats.map((c) => h.deps.chats.count(c.id)))).reduce((a, b) => a + b, 0);
  return { seconds, database, files, total: database + files, tables, runs, messages };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const top = (tables: Record<string, number>) =>
  Object.entries(tables)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([k, v]) => `${k} ${mb(v)}`)
    .join(', ');

test(`storage after ${DAYS} days of ${PER_DAY} chat replies, retention defaults vs none`, async () => {
  const kept = await year(DEFAULT_RETENTION, DAYS);
  console.log(
    `RESULT storage-year defaults: ${DAYS} days, ${kept.runs} replies, ${kept.messages} messages: ` +
      `${mb(kept.total)} MB (database ${mb(kept.database)} MB: ${top(kept.tables)}; files ${mb(kept.files)} MB); ` +
      `simulated in ${kept.seconds.toFixed(0)} s`,
  );
  const none = await year(null, BASELINE_DAYS);
  console.log(
    `RESULT storage-year none: ${BASELINE_DAYS} days, ${none.runs} replies: ${mb(none.total)} MB ` +
      `(database ${mb(none.database)} MB: ${top(none.tables)}; files ${mb(none.files)} MB); ` +
      `${DAYS} days at that rate: at least ${mb((none.total / BASELINE_DAYS) * DAYS)} MB`,
  );
}, 7_200_000);
