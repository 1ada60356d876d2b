import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';
import { workspaceContract } from '../../../support/workspace-contract';

let n = 0;
const db = () => openHearthDatabase(`hearth-records-${++n}-${Math.random()}`);

workspaceContract('records (IndexedDB)', async () => new DexieRecordStore(db()));
workspaceContract('tiered (memory files, IndexedDB records)', async () => {
  return new TieredWorkspaceStore(new MemoryWorkspaceStore(), new DexieRecordStore(db()));
});

const p = (raw: string): WorkspacePath => {
  const r = parseWorkspacePath(raw);
  if (!r.ok) throw new Error(raw);
  return r.value;
};
const enc = (s: string) => new TextEncoder().encode(s);
const text = async (ws: Workspace, path: string) => {
  const r = await ws.read(p(path));
  return r.ok ? new TextDecoder().decode(r.value) : r.error.code;
};
const open = async (store: { open(k: string): Promise<unknown> }, key: string) =>
  ((await store.open(key)) as { ok: true; value: Workspace }).value;

describe('tiered workspace', () => {
  async function setup() {
    const files = new MemoryWorkspaceStore();
    const records = new DexieRecordStore(db());
    const tiered = new TieredWorkspaceStore(files, records);
    const key = 'sessions/s1';
    return {
      files: await open(files, key),
      records: await open(records, key),
      ws: await open(tiered, key),
      tiered,
      key,
    };
  }

  it('keeps records in the record store and everything else in the file store', async () => {
    const { files, records, ws } = await setup();
    await ws.write(p('work/a.md'), enc('person'));
    await ws.write(p('runs/r1/model-responses/round-001.json'), enc('{}'));
    await ws.write(p('tool-results/r1/x.json'), enc('[]'));
    expect(await text(files, 'work/a.md')).toBe('person');
    expect(await text(files, 'runs/r1/model-responses/round-001.json')).toBe('workspace.file_not_found');
    expect(await text(records, 'runs/r1/model-responses/round-001.json')).toBe('{}');
    expect(await text(records, 'tool-results/r1/x.json')).toBe('[]');
    expect(await text(records, 'work/a.md')).toBe('workspace.file_not_found');
    const root = await ws.list();
    expect(root.ok && root.value).toEqual([
      { path: 'runs', kind: 'directory' },
      { path: 'tool-results', kind: 'directory' },
      { path: 'work', kind: 'directory' },
    ]);
  });

  it('still reads, lists, extends and removes records older runs left in the file store', async () => {
    const { files, records, ws } = await setup();
    await files.write(p('runs/old/input/resolved_profile.json'), enc('{"id":"old"}'));
    await files.write(p('run/transcript.jsonl'), enc('1\n'));
    await ws.write(p('runs/new/input/resolved_profile.json'), enc('{"id":"new"}'));

    expect(await text(ws, 'runs/old/input/resolved_profile.json')).toBe('{"id":"old"}');
    expect((await ws.stat(p('runs/old/input/resolved_profile.json'))).ok).toBe(true);
    const runs = await ws.list(p('runs'));
    expect(runs.ok && runs.value.map((e) => e.path)).toEqual(['runs/new', 'runs/old']);

    // An append moves the old record over first: one file, nothing lost, nothing split.
    const appended = await ws.append(p('run/transcript.jsonl'), enc('2\n'));
    expect(appended.ok && appended.value.created).toBe(false);
    expect(await text(records, 'run/transcript.jsonl')).toBe('1\n2\n');
    expect(await text(files, 'run/transcript.jsonl')).toBe('workspace.file_not_found');

    await ws.remove(p('runs/old'));
    expect(await text(ws, 'runs/old/input/resolved_profile.json')).toBe('workspace.file_not_found');
    expect(await text(ws, 'runs/new/input/resolved_profile.json')).toBe('{"id":"new"}');
  });

  it('deleting a workspace deletes both its files and its records, and no other workspace', async () => {
    const { ws, tiered, key } = await setup();
    const other = await open(tiered, 'sessions/s1-other');
    await ws.write(p('work/a.md'), enc('a'));
    await ws.write(p('runs/r1/x.json'), enc('x'));
    await other.write(p('runs/r2/y.json'), enc('y'));
    await tiered.delete(key);
    const again = await open(tiered, key);
    expect((await again.list()).ok && ((await again.list()) as { value: unknown[] }).value).toEqual([]);
    expect(await text(other, 'runs/r2/y.json')).toBe('y');
  });
});
