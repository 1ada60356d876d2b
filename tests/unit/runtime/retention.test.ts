import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETENTION, parseRetentionPolicy, retentionProblems } from '$lib/domain/retention';
import type { RetentionPolicy } from '$lib/domain/retention';
import type { RunId, RunRecord, RunStatus } from '$lib/domain/run';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';
import {
  allRuns,
  applyRetention,
  fullCandidates,
  planRetention,
  previewRetention,
  restrictPlan,
  type MeasuredItem,
  type PlanContext,
  type RetentionPlan,
} from '$lib/runtime/retention';
import { chatRunWorkspaceKey } from '$lib/runtime/chats';
import { sessionWorkspaceKey } from '$lib/runtime/sessions';
import { chatHarness } from '../../support/chat-harness';
import { collect, openTab, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway, type ScriptedTurn } from '../../support/scripted-gateway';

const run = (n: number, status: RunStatus = 'completed', extra: Partial<RunRecord> = {}): RunRecord => ({
  id: `run_${String(n).padStart(3, '0')}` as RunId,
  target: { kind: 'session', sessionId: n % 2 ? 'odd' : 'even' },
  connectionId: 'demo',
  model: 'demo',
  status,
  rounds: 1,
  usage: {},
  createdAt: 1_000 + n,
  updatedAt: 1_000 + n,
  ...extra,
});

/** Runs 1..n, run n the newest. */
const runs = (n: number) => Array.from({ length: n }, (_, i) => run(i + 1));

/** The count windows alone: no age or size limit. */
const counts = (keepFullRuns: number, keepJournalRuns: number): RetentionPolicy => ({
  keepFullRuns,
  keepJournalRuns,
  maxAgeDays: 0,
  maxFullMB: 0,
  automatic: false,
});

const NOW = 1_800_000_000_000;

const plan = (
  records: RunRecord[],
  policy: RetentionPolicy,
  context: PlanContext = { now: NOW },
): RetentionPlan => {
  const planned = planRetention(records, policy, context);
  if (!planned.ok) throw new Error(planned.error.message);
  return planned.value;
};

/** `run_003:artifacts` / `run_001:journal`, newest first. */
const summary = (p: RetentionPlan) =>
  p.items.map((i) => `${i.runId}:${i.deleteArtifacts ? 'A' : ''}${i.deleteJournal ? 'J' : ''}`);

describe('planRetention', () => {
  const cases: { name: string; records: RunRecord[]; policy: RetentionPolicy; expected: string[] }[] = [
    { name: 'nothing to do under the windows', records: runs(20), policy: counts(20, 100), expected: [] },
    {
      name: 'one past the full window loses its artifacts',
      records: runs(21),
      policy: counts(20, 100),
      expected: ['run_001:A'],
    },
    {
      name: 'between the windows: artifacts; past the journal window: both',
      records: runs(5),
      policy: counts(2, 4),
      expected: ['run_003:A', 'run_002:A', 'run_001:AJ'],
    },
    {
      name: 'equal windows: everything past them loses both',
      records: runs(4),
      policy: counts(2, 2),
      expected: ['run_002:AJ', 'run_001:AJ'],
    },
    {
      name: 'zero windows: every finished run loses both',
      records: runs(2),
      policy: counts(0, 0),
      expected: ['run_002:AJ', 'run_001:AJ'],
    },
    {
      name: 'zero full, journal window exactly the count',
      records: runs(3),
      policy: counts(0, 3),
      expected: ['run_003:A', 'run_002:A', 'run_001:A'],
    },
    {
      name: 'the maximum keeps everything',
      records: runs(30),
      policy: counts(10_000, 10_000),
      expected: [],
    },
    {
      name: 'order is by creation, not by the input order',
      records: runs(4).reverse(),
      policy: counts(3, 3),
      expected: ['run_001:AJ'],
    },
    {
      name: 'every terminal status counts',
      records: [
        run(1, 'failed'),
        run(2, 'cancelled'),
        run(3, 'interrupted'),
        run(4, 'partial_success'),
        run(5, 'completed'),
      ],
      policy: counts(1, 5),
      expected: ['run_004:A', 'run_003:A', 'run_002:A', 'run_001:A'],
    },
    {
      name: 'active runs are never planned and take no place in the windows',
      records: [
        run(1),
        run(2),
        run(3, 'calling_model'),
        run(4, 'created'),
        run(5, 'cancelling'),
        run(6, 'dispatching_tool'),
      ],
      policy: counts(1, 1),
      expected: ['run_001:AJ'],
    },
    {
      name: 'parts already removed are not planned again',
      records: [
        run(1, 'completed', { pruned: 'journal' }),
        run(2, 'completed', { pruned: 'artifacts' }),
        run(3, 'completed', { pruned: 'artifacts' }),
        run(4),
      ],
      policy: counts(0, 2),
      expected: ['run_004:A', 'run_002:J'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(summary(plan(c.records, c.policy))).toEqual(c.expected);
    });
  }

  it('numbers positions among finished runs and counts the active ones', () => {
    const p = plan([run(1), run(2, 'calling_model'), run(3)], counts(1, 1));
    expect(p).toMatchObject({ terminalRuns: 2, activeRuns: 1 });
    expect(p.items).toEqual([
      {
        runId: 'run_001',
        target: { kind: 'session', sessionId: 'odd' },
        status: 'completed',
        createdAt: 1001,
        position: 2,
        prune: 'journal',
        because: 'count',
        deleteArtifacts: true,
        deleteJournal: true,
      },
    ]);
  });

  it('breaks ties in creation time the same way every time', () => {
    const tied = [run(1, 'completed', { createdAt: 5 }), run(2, 'completed', { createdAt: 5 })];
    const a = summary(plan(tied, counts(1, 1)));
    const b = summary(plan([...tied].reverse(), counts(1, 1)));
    expect(a).toEqual(b);
    expect(a).toHaveLength(1);
  });
});

describe('planRetention by age and size', () => {
  const DAY = 86_400_000;
  /** Run n finished `days` before NOW. */
  const aged = (n: number, days: number) => run(n, 'completed', { updatedAt: NOW - days * DAY });

  it('a run older than the days kept loses files and journal, inside the count windows', () => {
    const p = plan([aged(1, 91), aged(2, 89), aged(3, 1)], { ...counts(20, 100), maxAgeDays: 90 });
    expect(summary(p)).toEqual(['run_001:AJ']);
    expect(p.items[0]).toMatchObject({ prune: 'journal', because: 'age' });
    // 0 is no age limit.
    expect(plan([aged(1, 5000)], counts(20, 100)).items).toEqual([]);
  });

  it('the newest runs fill the MB kept; from the first that does not fit, older runs lose their files', () => {
    const MB = 1024 * 1024;
    const records = runs(5);
    const sizes = new Map<RunId, number>([
      ['run_005' as RunId, 40 * MB],
      ['run_004' as RunId, 50 * MB],
      ['run_003' as RunId, 20 * MB],
      ['run_002' as RunId, 1],
      ['run_001' as RunId, 1],
    ]);
    const p = plan(records, { ...counts(20, 100), maxFullMB: 100 }, { now: NOW, sizes });
    expect(summary(p)).toEqual(['run_003:A', 'run_002:A', 'run_001:A']);
    expect(p.items.map((i) => i.because)).toEqual(['size', 'size', 'size']);
    // Exactly at the limit fits; no limit keeps all.
    sizes.set('run_003' as RunId, 10 * MB);
    expect(summary(plan(records, { ...counts(20, 100), maxFullMB: 100 }, { now: NOW, sizes }))).toEqual([
      'run_002:A',
      'run_001:A',
    ]);
    expect(plan(records, counts(20, 100), { now: NOW, sizes }).items).toEqual([]);
  });

  it('weighs only runs that still hold files, and only those within the count', () => {
    const records = [run(1), run(2, 'completed', { pruned: 'artifacts' }), run(3), run(4, 'calling_model')];
    const policy = { ...counts(2, 100), maxFullMB: 1 };
    expect(fullCandidates(records, policy).map((r) => r.id)).toEqual(['run_003']);
    expect(fullCandidates(records, counts(2, 100))).toEqual([]);
  });
});

describe('retention policy validation', () => {
  const valid = { ...DEFAULT_RETENTION };
  const invalid: [string, unknown, string[]][] = [
    ['negative', { ...valid, keepFullRuns: -1 }, ['keepFullRuns']],
    ['over the maximum', { ...valid, keepJournalRuns: 10_001 }, ['keepJournalRuns']],
    ['fractional', { ...valid, keepFullRuns: 1.5 }, ['keepFullRuns']],
    [
      'not a number',
      { ...valid, keepFullRuns: '3', keepJournalRuns: NaN },
      ['keepFullRuns', 'keepJournalRuns'],
    ],
    ['full larger than journal', { ...valid, keepFullRuns: 101, keepJournalRuns: 100 }, ['keepFullRuns']],
    ['days over ten years', { ...valid, maxAgeDays: 3651 }, ['maxAgeDays']],
    ['negative MB', { ...valid, maxFullMB: -5 }, ['maxFullMB']],
  ];
  for (const [name, input, fields] of invalid) {
    it(`rejects ${name}`, () => {
      expect(Object.keys(retentionProblems(input as RetentionPolicy)).sort()).toEqual(fields.sort());
      const parsed = parseRetentionPolicy(input);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error.code).toBe('settings.invalid');
      const planned = planRetention(runs(3), input as RetentionPolicy, { now: NOW });
      expect(planned.ok).toBe(false);
    });
  }

  it('rejects an automatic flag that is not a boolean', () => {
    const parsed = parseRetentionPolicy({ ...valid, automatic: 'yes' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toContain('Automatic');
  });

  it('accepts the bounds, drops unknown keys and fills what an older saved policy lacks', () => {
    const zeros = { keepFullRuns: 0, keepJournalRuns: 0, maxAgeDays: 0, maxFullMB: 0, automatic: false };
    expect(parseRetentionPolicy(zeros)).toEqual({ ok: true, value: zeros });
    const most = {
      keepFullRuns: 10_000,
      keepJournalRuns: 10_000,
      maxAgeDays: 3650,
      maxFullMB: 100_000,
      automatic: true,
    };
    expect(parseRetentionPolicy({ ...most, x: 1 })).toEqual({ ok: true, value: most });
    // What an earlier Hearth saved: the two windows only.
    expect(parseRetentionPolicy({ keepFullRuns: 3, keepJournalRuns: 7 })).toEqual({
      ok: true,
      value: { ...DEFAULT_RETENTION, keepFullRuns: 3, keepJournalRuns: 7 },
    });
    expect(parseRetentionPolicy(null).ok).toBe(false);
    expect(DEFAULT_RETENTION).toEqual({
      keepFullRuns: 20,
      keepJournalRuns: 100,
      maxAgeDays: 90,
      maxFullMB: 100,
      automatic: true,
    });
  });
});

describe('restrictPlan', () => {
  it('keeps only what was previewed, never more than previewed', () => {
    const fresh = plan(runs(4), counts(0, 1));
    expect(summary(fresh)).toEqual(['run_004:A', 'run_003:AJ', 'run_002:AJ', 'run_001:AJ']);
    const narrowed = restrictPlan(fresh, [
      { runId: 'run_004' as RunId, prune: 'artifacts' },
      { runId: 'run_003' as RunId, prune: 'artifacts' },
      { runId: 'run_001' as RunId, prune: 'journal' },
    ]);
    expect(summary(narrowed)).toEqual(['run_004:A', 'run_003:A', 'run_001:AJ']);
    expect(narrowed.items[1]!.prune).toBe('artifacts');
  });

  it('drops a run previewed for artifacts that only has its journal left to lose', () => {
    const fresh = plan([run(1, 'completed', { pruned: 'artifacts' }), run(2)], counts(1, 1));
    expect(summary(fresh)).toEqual(['run_001:J']);
    expect(restrictPlan(fresh, [{ runId: 'run_001' as RunId, prune: 'artifacts' }]).items).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Real runs: the Session runtime on fake-indexeddb and the memory workspace.

const p = (raw: string): WorkspacePath => {
  const r = parseWorkspacePath(raw);
  if (!r.ok) throw new Error(raw);
  return r.value;
};

/** Every file under the workspace: path -> bytes. */
async function files(ws: Workspace, dir?: WorkspacePath, out = new Map<string, number>()) {
  const listed = await ws.list(dir);
  if (!listed.ok) throw new Error(listed.error.message);
  for (const e of listed.value) {
    if (e.kind === 'directory') await files(ws, e.path, out);
    else {
      const s = await ws.stat(e.path);
      out.set(e.path, s.ok ? (s.value?.size ?? 0) : 0);
    }
  }
  return out;
}
const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** A run that writes a file (tool arguments, result, checkpoint, two model responses) and answers. */
const writeTurns = (name: string): ScriptedTurn[] => [
  {
    text: `Writing ${name}.`,
    toolCalls: [
      {
        callId: `call_${name}`,
        name: 'workspace_write_file',
        arguments: JSON.stringify({ path: `work/${name}.md`, content: `${name} `.repeat(50) }),
      },
    ],
  },
  { text: `Wrote work/${name}.md.` },
];

async function setup(names: string[], extraTurns: ScriptedTurn[] = []) {
  const model = scriptedGateway([...names.flatMap(writeTurns), ...extraTurns]);
  const h = runtimeHarness(model.gateway);
  await h.ready;
  // A clock that moves so runs are strictly ordered by creation.
  let now = 1_700_000_000_000;
  const clock = { now: () => (now += 1000) };
  const { service, runService } = openTab({ ...h.deps, clock });
  const session = await service.create();
  const ids: RunId[] = [];
  for (const name of names) {
    const updates = await collect(service.send(session.id, `write ${name}`));
    const first = updates.find((u) => u.type === 'run');
    if (first?.type !== 'run') throw new Error('no run');
    ids.push(first.run.id);
  }
  const opened = await h.workspaces.open(sessionWorkspaceKey(session.id));
  if (!opened.ok) throw new Error('open');
  const deps = { runs: h.runs, journal: h.journal, workspaces: h.workspaces, clock };
  return { h, service, runService, session, ids, ws: opened.value, deps };
}

describe('previewRetention and applyRetention on real runs', () => {
  it('deletes exactly the old runs’ directories and journals, keeps records and conversation', async () => {
    const { h, session, ids, ws, deps } = await setup(['one', 'two', 'three', 'four']);
    const [one, two, three, four] = ids as [RunId, RunId, RunId, RunId];
    const before = await files(ws);
    const messagesBefore = await h.sessions.messages(session.id);
    const eventsOf = async (id: RunId) => (await h.journal.read(id, { limit: 500 })).length;
    const eventsBefore = await Promise.all(ids.map(eventsOf));
    for (const id of ids) {
      expect([...before.keys()].some((k) => k.startsWith(`runs/${id}/model-responses/`))).toBe(true);
      expect([...before.keys()].some((k) => k.startsWith(`runs/${id}/checkpoints/`))).toBe(true);
      expect([...before.keys()].some((k) => k.startsWith(`tool-results/${id}/`))).toBe(true);
    }

    const planned = plan(await allRuns(h.runs), counts(1, 2));
    expect(summary(planned)).toEqual([`${three}:A`, `${two}:AJ`, `${one}:AJ`]);

    const preview = await previewRetention(planned, deps);
    // The dry run deletes nothing.
    expect(await files(ws)).toEqual(before);
    const under = (id: RunId) =>
      [...before.entries()].filter(
        ([k]) => k.startsWith(`runs/${id}/`) || k.startsWith(`tool-results/${id}/`),
      );
    for (const item of preview.items) {
      const own = under(item.runId);
      expect(item.files).toBe(own.length);
      expect(item.bytes).toBe(own.reduce((a, [, b]) => a + b, 0));
      expect(item.events).toBe(item.deleteJournal ? eventsBefore[ids.indexOf(item.runId)] : 0);
    }
    expect(preview.totals.runs).toBe(3);
    expect(preview.totals.events).toBe(eventsBefore[0]! + eventsBefore[1]!);

    const progress: [number, number][] = [];
    const result = await applyRetention(planned, deps, { onProgress: (d, t) => progress.push([d, t]) });
    expect(progress).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(result.failed).toBe(0);
    expect(result.skipped).toBe(0);
    // What the dry run promised is what applying freed.
    expect(result.totals).toEqual(preview.totals);
    const footprint = ({ runId, files, bytes, events }: MeasuredItem) => ({ runId, files, bytes, events });
    expect(result.outcomes.map((o) => (o.outcome === 'pruned' ? footprint(o) : o))).toEqual(
      preview.items.map(footprint),
    );

    const after = await files(ws);
    expect(total(before) - total(after)).toBe(preview.totals.bytes);
    // Exactly the planned directories went; the newest run and the person's files stay.
    const gone = [...before.keys()].filter((k) => !after.has(k)).sort();
    expect(gone).toEqual([...under(one), ...under(two), ...under(three)].map(([k]) => k).sort());
    expect(after.get('work/one.md')).toBeGreaterThan(0);
    expect(await ws.stat(p(`runs/${one}`))).toEqual({ ok: true, value: null });
    expect(await ws.stat(p(`tool-results/${three}`))).toEqual({ ok: true, value: null });

    // Journals: the two oldest gone, the others intact.
    expect(await Promise.all(ids.map(eventsOf))).toEqual([0, 0, eventsBefore[2], eventsBefore[3]]);
    expect(four).toBeDefined();
    // Records stay, marked.
    const records = await Promise.all(ids.map((id) => h.runs.get(id)));
    expect(records.map((r) => r?.pruned)).toEqual(['journal', 'journal', 'artifacts', undefined]);
    expect(records.map((r) => r?.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(records[0]!.prunedAt).toBeGreaterThan(0);
    expect(records[3]!.prunedAt).toBeUndefined();
    // The conversation is untouched.
    expect(await h.sessions.messages(session.id)).toEqual(messagesBefore);

    // Running it again finds nothing more to do.
    expect(plan(await allRuns(h.runs), counts(1, 2)).items).toEqual([]);
  });

  it('a second pass removes only what is left (the journal of a run already pruned)', async () => {
    const { h, ids, deps } = await setup(['a', 'b']);
    const first = plan(await allRuns(h.runs), counts(1, 2));
    await applyRetention(first, deps);
    const second = plan(await allRuns(h.runs), counts(1, 1));
    expect(summary(second)).toEqual([`${ids[0]}:J`]);
    const preview = await previewRetention(second, deps);
    expect(preview.totals.bytes).toBe(0);
    expect(preview.totals.events).toBeGreaterThan(0);
    const result = await applyRetention(second, deps);
    expect(result.totals).toEqual(preview.totals);
    expect((await h.runs.get(ids[0]!))?.pruned).toBe('journal');
  });

  it('never touches an active run, and refuses a run that became active since planning', async () => {
    const { h, service, runService, session, ids, ws, deps } = await setup(
      ['old'],
      [{ hangAfter: 'thinking about it' }],
    );
    // A second session's run is working right now.
    const busy = await service.create();
    const iterator = service.send(busy.id, 'hang')[Symbol.asyncIterator]();
    let activeId: RunId | undefined;
    // Follow it until it is streaming (its journal and files exist).
    for (let streaming = false; !streaming;) {
      const next = await iterator.next();
      if (next.done) throw new Error('the run ended');
      if (next.value.type === 'run') activeId = next.value.run.id;
      streaming = next.value.type === 'part';
    }
    if (!activeId) throw new Error('no run');

    const planned = plan(await allRuns(h.runs), counts(0, 0));
    expect(planned.activeRuns).toBe(1);
    expect(planned.items.map((i) => i.runId)).toEqual([ids[0]]);

    // Forge a plan that names the active run: applying re-reads the record and skips it.
    const forged: RetentionPlan = {
      ...planned,
      items: [
        ...planned.items,
        {
          ...planned.items[0]!,
          runId: activeId,
          target: { kind: 'session', sessionId: busy.id },
          position: 2,
        },
      ],
    };
    const activeEvents = (await h.journal.read(activeId, { limit: 500 })).length;
    const result = await applyRetention(forged, deps);
    expect(result.outcomes.map((o) => [o.runId, o.outcome])).toEqual([
      [ids[0], 'pruned'],
      [activeId, 'skipped'],
    ]);
    const skipped = result.outcomes[1]!;
    expect(skipped.outcome === 'skipped' && skipped.reason).toMatch(/active/);
    expect((await h.journal.read(activeId, { limit: 500 })).length).toBeGreaterThanOrEqual(activeEvents);
    const busyWs = await h.workspaces.open(sessionWorkspaceKey(busy.id));
    if (!busyWs.ok) throw new Error('open');
    expect(await busyWs.value.stat(p(`runs/${activeId}/input/resolved_profile.json`))).toMatchObject({
      ok: true,
      value: { kind: 'file' },
    });
    expect((await h.runs.get(activeId))?.pruned).toBeUndefined();

    await runService.cancel(activeId);
    await iterator.return?.();
    expect(session.id).not.toBe(busy.id);
    expect((await files(ws)).size).toBeGreaterThan(0);
  });

  it('skips a run deleted since planning, and stops between runs when aborted', async () => {
    const { h, ids, deps } = await setup(['x', 'y', 'z']);
    const planned = plan(await allRuns(h.runs), counts(0, 3));
    await h.db.runs.delete(ids[2]!);
    const controller = new AbortController();
    const result = await applyRetention(planned, deps, {
      signal: controller.signal,
      onProgress: (done) => done === 2 && controller.abort(),
    });
    expect(result.outcomes.map((o) => o.outcome)).toEqual(['skipped', 'pruned']);
    expect((await h.runs.get(ids[0]!))?.pruned).toBeUndefined();
  });
});

describe('retention of chat replies', () => {
  const call = (callId: string, name: string, args: object) => ({
    callId,
    name,
    arguments: JSON.stringify(args),
  });
  const reply = (n: string, text: string): ScriptedTurn[] => [
    {
      toolCalls: [
        call(`p${n}`, 'workspace_write_file', { path: 'persist/notes.md', content: `note ${n}` }),
        call(`w${n}`, 'workspace_write_file', { path: 'output/main.md', content: text }),
      ],
    },
    { toolCalls: [call(`c${n}`, 'workspace_commit', { path: 'output/main.md', finish: true })] },
  ];

  it('removes an old reply’s run workspace and journal, keeping its message, swipe and persistent state', async () => {
    const model = scriptedGateway([...reply('1', 'First reply.'), ...reply('2', 'Second reply.')]);
    const { service, deps, workspaces } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    await collect(service.send(chat.id, 'one'));
    await collect(service.send(chat.id, 'two'));
    const before = await service.get(chat.id);
    const [older, newer] = [...before.runs].sort((a, b) => a.createdAt - b.createdAt);
    const runWs = async (runId: RunId) => {
      const opened = await workspaces.open(chatRunWorkspaceKey(chat.id, runId));
      if (!opened.ok) throw new Error('open');
      return files(opened.value);
    };
    const olderFiles = await runWs(older!.id);
    expect([...olderFiles.keys()]).toContain('output/main.md');
    const stateOf = (i: number) =>
      (before.messages[i]!.extra as { hearth: { persistStateId?: string } }).hearth.persistStateId!;
    const chatWs = await workspaces.open(`chats/${chat.id}`);
    if (!chatWs.ok) throw new Error('open');
    const statesBefore = [...(await files(chatWs.value)).keys()].filter((k) =>
      k.startsWith('persistent-states/'),
    );
    expect(statesBefore.some((k) => k.includes(stateOf(2)))).toBe(true);

    const retention = { runs: deps.runs, journal: deps.journal, workspaces, clock: deps.clock };
    const planned = plan(await allRuns(deps.runs), counts(1, 1));
    expect(summary(planned)).toEqual([`${older!.id}:AJ`]);
    expect(planned.items[0]!.target).toEqual({ kind: 'chat', chatId: chat.id });
    const preview = await previewRetention(planned, retention);
    expect(preview.items[0]).toMatchObject({ files: olderFiles.size, bytes: total(olderFiles) });
    expect(preview.items[0]!.events).toBeGreaterThan(0);

    const result = await applyRetention(planned, retention);
    expect(result.totals).toEqual(preview.totals);
    expect((await runWs(older!.id)).size).toBe(0);
    expect((await runWs(newer!.id)).size).toBeGreaterThan(0);
    expect(await deps.journal.count(older!.id)).toBe(0);
    expect((await deps.runs.get(older!.id))?.pruned).toBe('journal');

    // The chat reads as before: messages, swipes and the states they refer to.
    const after = await service.get(chat.id);
    expect(after.messages).toEqual(before.messages);
    const statesAfter = [...(await files(chatWs.value)).keys()].filter((k) =>
      k.startsWith('persistent-states/'),
    );
    expect(statesAfter).toEqual(statesBefore);
  });
});

describe('persistent states no message refers to', () => {
  const call = (callId: string, name: string, args: object) => ({
    callId,
    name,
    arguments: JSON.stringify(args),
  });
  const reply = (n: string): ScriptedTurn[] => [
    {
      toolCalls: [
        call(`p${n}`, 'workspace_write_file', { path: `persist/note-${n}.md`, content: `note ${n}` }),
        call(`w${n}`, 'workspace_write_file', { path: 'output/main.md', content: `Reply ${n}.` }),
      ],
    },
    { toolCalls: [call(`c${n}`, 'workspace_commit', { path: 'output/main.md', finish: true })] },
  ];
  const stateDirs = async (ws: Workspace) => {
    const listed = await ws.list(p('persistent-states'));
    return listed.ok ? listed.value.map((e) => e.path.split('/')[1]!).sort() : [];
  };

  it('are measured, then deleted; the states messages use stay, and a busy chat is left alone', async () => {
    const model = scriptedGateway([...reply('1'), ...reply('2'), ...reply('3'), { hangAfter: 'working' }]);
    const { service, workspaces } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    await collect(service.send(chat.id, 'one'));
    await collect(service.regenerate(chat.id));
    await collect(service.send(chat.id, 'two'));
    const chatWs = await workspaces.open(`chats/${chat.id}`);
    if (!chatWs.ok) throw new Error('open');
    const all = await stateDirs(chatWs.value);
    expect(all).toHaveLength(3);
    const kept = (await service.get(chat.id)).messages.at(-1)!;
    const keptState = (kept.extra as { hearth: { persistStateId: string } }).hearth.persistStateId;

    // Nothing is unused yet.
    expect(await service.allUnreferencedStates(false)).toEqual({
      states: 0,
      files: 0,
      bytes: 0,
      busyChats: 0,
    });
    // The first reply, with both of its swipes' states, is deleted: its two states are unused.
    await service.deleteMessage(chat.id, 2);
    const measured = await service.allUnreferencedStates(false);
    expect(measured).toMatchObject({ states: 2, busyChats: 0 });
    expect(measured.files).toBeGreaterThanOrEqual(4);
    expect(measured.bytes).toBeGreaterThan(0);
    expect(await stateDirs(chatWs.value)).toEqual(all);

    expect(await service.allUnreferencedStates(true)).toEqual(measured);
    expect(await stateDirs(chatWs.value)).toEqual([keptState]);
    expect(await service.allUnreferencedStates(false)).toMatchObject({ states: 0 });

    // A chat with a reply in progress is not swept, though its last state is unused now.
    await service.deleteMessage(chat.id, 3);
    const updates = service.send(chat.id, 'three')[Symbol.asyncIterator]();
    for (let streaming = false; !streaming;) {
      const next = await updates.next();
      if (next.done) throw new Error('the run ended');
      streaming = next.value.type === 'part';
    }
    expect(await service.allUnreferencedStates(true)).toEqual({
      states: 0,
      files: 0,
      bytes: 0,
      busyChats: 1,
    });
    expect(await stateDirs(chatWs.value)).toEqual([keptState]);
    await updates.return?.();
  });
});
