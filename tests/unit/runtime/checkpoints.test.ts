import 'fake-indexeddb/auto';
import { beforeEach, describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import { sha256Hex } from '$lib/domain/hash';
import { err } from '$lib/domain/result';
import type { RunId, RunRecord } from '$lib/domain/run';
import type { Workspace } from '$lib/ports/workspace';
import {
  checkpointer,
  checkpointId,
  listCheckpoints,
  readCheckpointFile,
  type Checkpointer,
  type CheckpointReason,
} from '$lib/runtime/checkpoints';
import { RunRecorder } from '$lib/runtime/run-recorder';
import { callTool, getText, memoryToolContext, putText, wp } from '../../support/tool-context';
import { overrideWorkspace } from '../../support/workspace-override';
import { listFilesTool } from '$lib/tools/workspace/list-files';
import { searchFilesTool } from '$lib/tools/workspace/search-files';

let ws: Workspace;
let recorder: RunRecorder;
let take: Checkpointer;
let now: number;
const runDir = wp('runs/run_1');
const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const clock = { now: () => now };
/** The checkpointer of a run (a new one: a resumed run's). */
const keeper = (workspace: Workspace = ws) => checkpointer({ workspace, runDir, runId: 'run_1', clock });

/** Takes a checkpoint and records it in one step, as a run does. */
const create = async (
  paths: string[],
  extra: { reason?: CheckpointReason; now?: number } = {},
  using: Checkpointer = take,
) => {
  if (extra.now !== undefined) now = extra.now;
  const taken = await using(extra.reason ?? 'tool_workspace_write', paths);
  const [change, ...events] = await recorder.step((s) => {
    const [written] = s.emit({
      type: 'workspace_file_written',
      payload: { invocationId: 'inv_root', path: paths[0]!, mode: 'replace', chars: 0, words: 0, sha256: '' },
    });
    taken.record(s, written!);
  });
  return { ...taken, changeSeq: change!.seq, events };
};

beforeEach(async () => {
  const db = openHearthDatabase(`hearth-cp-${Math.random()}`);
  const store = new TieredWorkspaceStore(new MemoryWorkspaceStore(), new DexieRecordStore(db));
  const opened = await store.open('sessions/s1');
  if (!opened.ok) throw new Error(opened.error.message);
  ws = opened.value;
  now = NOW;
  const run: RunRecord = {
    id: 'run_1' as RunId,
    target: { kind: 'session', sessionId: 's1' },
    connectionId: 'demo',
    model: 'm',
    status: 'dispatching_tool',
    rounds: 1,
    usage: {},
    createdAt: NOW,
    updatedAt: NOW,
  };
  recorder = new RunRecorder(run, {
    journal: new DexieJournal(db, clock),
    clock,
    publish: () => {},
    workspaceKey: ws.key,
  });
  take = keeper();
});

describe('checkpointer', () => {
  it('writes checkpoint.json and a copy of each affected file under cp_000001, with its event', async () => {
    const sha = await putText(ws, 'work/a.md', 'hello 世界');
    const created = await create(['work/a.md']);
    const files = [{ path: 'work/a.md', sha256: sha, bytes: 12 }];
    expect(created).toMatchObject({ checkpointId: 'cp_000001', seq: 1, files });
    expect(created.events.map((e) => e.type)).toEqual(['status_changed', 'checkpoint_created']);
    expect(recorder.run.status).toBe('creating_checkpoint');
    expect(JSON.parse(await getText(ws, 'runs/run_1/checkpoints/cp_000001/checkpoint.json'))).toEqual({
      id: 'cp_000001',
      seq: 1,
      runId: 'run_1',
      createdAt: '2026-11-30T12:00:00.000Z',
      reason: 'tool_workspace_write',
      // The seq of the change it keeps, journaled in the same step.
      eventSeq: created.changeSeq,
      files,
    });
    expect(created.changeSeq).toBe(1);
    expect(await getText(ws, 'runs/run_1/checkpoints/cp_000001/files/work/a.md')).toBe('hello 世界');
  });

  it('copies exactly the affected files, byte for byte, once each', async () => {
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
    await ws.write(wp('work/bin.dat'), bytes);
    await putText(ws, 'work/other.md', 'not affected');
    await putText(ws, 'tmp/b.md', 'b');
    const created = await create(['work/bin.dat', 'tmp/b.md', 'work/bin.dat'], { reason: 'chat_commit' });
    expect(created.files.map((f) => f.path)).toEqual(['work/bin.dat', 'tmp/b.md']);
    const copy = await ws.read(wp('runs/run_1/checkpoints/cp_000001/files/work/bin.dat'));
    expect(copy.ok && copy.value).toEqual(bytes);
    const listed = await ws.list(wp('runs/run_1/checkpoints/cp_000001/files/work'));
    expect(listed.ok && listed.value.map((e) => e.path)).toEqual([
      'runs/run_1/checkpoints/cp_000001/files/work/bin.dat',
    ]);
  });

  it('numbers checkpoints one after another, and a resumed run on from the highest existing one', async () => {
    await putText(ws, 'work/a.md', 'v1');
    expect((await create(['work/a.md'])).checkpointId).toBe('cp_000001');
    await putText(ws, 'work/a.md', 'v2');
    expect((await create(['work/a.md'], { reason: 'tool_workspace_patch' })).seq).toBe(2);
    await putText(ws, 'runs/run_1/checkpoints/notes.txt', 'not a checkpoint');
    await putText(ws, 'runs/run_1/checkpoints/cp_000005/checkpoint.json', '{}');
    expect((await create(['work/a.md'], {}, keeper())).checkpointId).toBe('cp_000006');
    expect(checkpointId(1_234_567)).toBe('cp_1234567');
  });

  it('gives concurrent checkpoints distinct ids, each with its own files', async () => {
    for (let i = 0; i < 10; i++) await putText(ws, `work/f${i}.md`, `content ${i}`);
    const created = await Promise.all(Array.from({ length: 10 }, (_, i) => create([`work/f${i}.md`])));
    expect(new Set(created.map((c) => c.checkpointId)).size).toBe(10);
    expect(created.map((c) => c.seq).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const [i, c] of created.entries()) {
      const copy = await readCheckpointFile(ws, runDir, c.checkpointId, wp(`work/f${i}.md`));
      expect(copy.ok && new TextDecoder().decode(copy.value.data)).toBe(`content ${i}`);
    }
  });

  it('fails without taking an id when an affected file is missing', async () => {
    await expect(take('tool_workspace_write', ['work/none.md'])).rejects.toMatchObject({
      error: { code: 'workspace.file_not_found' },
    });
    await putText(ws, 'work/a.md', 'a');
    expect((await create(['work/a.md'])).checkpointId).toBe('cp_000001');
  });

  it('a storage failure is a system failure of the run', async () => {
    await putText(ws, 'work/a.md', 'x');
    const unreadable = overrideWorkspace(ws, {
      read: async () => err({ code: 'workspace.storage_failed', message: 'disk on fire' }),
    });
    await expect(keeper(unreadable)('tool_workspace_write', ['work/a.md'])).rejects.toMatchObject({
      error: { code: 'workspace.storage_failed' },
    });
    const unlistable = overrideWorkspace(ws, {
      list: async () => err({ code: 'workspace.storage_failed', message: 'disk on fire' }),
    });
    await expect(keeper(unlistable)('tool_workspace_write', ['work/a.md'])).rejects.toMatchObject({
      error: { code: 'workspace.storage_failed' },
    });
    expect(await listCheckpoints(ws, runDir)).toEqual({ ok: true, value: [] });
  });

  it('stays hidden from model tools', async () => {
    const ctx = await memoryToolContext();
    ctx.workspace = ws;
    await putText(ws, 'work/a.md', 'secret checkpoint words');
    await create(['work/a.md']);
    const listed = await callTool(listFilesTool, { depth: 4 }, ctx);
    expect(listed.content).not.toContain('checkpoint');
    const found = await callTool(searchFilesTool, { query: 'secret checkpoint words' }, ctx);
    expect(found.resourceRefs).toEqual(['workspace:work/a.md#L1-L1']);
  });
});

describe('listCheckpoints', () => {
  it('lists nothing for a run without checkpoints', async () => {
    expect(await listCheckpoints(ws, runDir)).toEqual({ ok: true, value: [] });
  });

  it('lists every checkpoint by seq with its metadata', async () => {
    await putText(ws, 'work/a.md', 'a');
    let last = 0;
    for (let i = 0; i < 11; i++) last = (await create(['work/a.md'], { now: NOW + i * 1000 })).changeSeq;
    const listed = await listCheckpoints(ws, runDir);
    if (!listed.ok) throw new Error(listed.error.message);
    expect(listed.value.map((c) => c.id)).toEqual(Array.from({ length: 11 }, (_, i) => checkpointId(i + 1)));
    expect(listed.value[10]).toEqual({
      id: 'cp_000011',
      seq: 11,
      runId: 'run_1',
      createdAt: '2026-11-30T12:00:10.000Z',
      reason: 'tool_workspace_write',
      eventSeq: last,
      files: [{ path: 'work/a.md', sha256: await sha256Hex('a'), bytes: 1 }],
    });
  });

  it('reports a damaged checkpoint.json as checkpoint.corrupt', async () => {
    await putText(ws, 'runs/run_1/checkpoints/cp_000001/checkpoint.json', '{ not json');
    expect(await listCheckpoints(ws, runDir)).toMatchObject({
      ok: false,
      error: { code: 'checkpoint.corrupt' },
    });
    await putText(
      ws,
      'runs/run_1/checkpoints/cp_000001/checkpoint.json',
      JSON.stringify({ id: 'cp_000001' }),
    );
    expect(await listCheckpoints(ws, runDir)).toMatchObject({
      ok: false,
      error: { code: 'checkpoint.corrupt' },
    });
  });
});

describe('readCheckpointFile', () => {
  it('returns the copy as it was, after the live file changed', async () => {
    const sha = await putText(ws, 'work/a.md', 'v1');
    const { checkpointId: id } = await create(['work/a.md']);
    await putText(ws, 'work/a.md', 'v2');
    const copy = await readCheckpointFile(ws, runDir, id, wp('work/a.md'));
    if (!copy.ok) throw new Error(copy.error.message);
    expect(copy.value.sha256).toBe(sha);
    expect(new TextDecoder().decode(copy.value.data)).toBe('v1');
  });

  it.each([
    ['cp_000009', 'work/a.md'],
    ['../cp_000001', 'work/a.md'],
    ['cp_1', 'work/a.md'],
    ['cp_000001', 'work/b.md'],
  ])('reports checkpoint %j file %j as checkpoint.not_found', async (id, path) => {
    await putText(ws, 'work/a.md', 'a');
    await putText(ws, 'work/b.md', 'b');
    await create(['work/a.md']);
    expect(await readCheckpointFile(ws, runDir, id, wp(path))).toMatchObject({
      ok: false,
      error: { code: 'checkpoint.not_found' },
    });
  });

  it('reports a copy that does not match its hash, or is gone, as checkpoint.corrupt', async () => {
    await putText(ws, 'work/a.md', 'a');
    const { checkpointId: id } = await create(['work/a.md']);
    await putText(ws, `runs/run_1/checkpoints/${id}/files/work/a.md`, 'tampered');
    expect(await readCheckpointFile(ws, runDir, id, wp('work/a.md'))).toMatchObject({
      ok: false,
      error: { code: 'checkpoint.corrupt' },
    });
    await ws.remove(wp(`runs/run_1/checkpoints/${id}/files`));
    expect(await readCheckpointFile(ws, runDir, id, wp('work/a.md'))).toMatchObject({
      ok: false,
      error: { code: 'checkpoint.corrupt' },
    });
  });
});
