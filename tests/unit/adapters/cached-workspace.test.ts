import { describe, expect, it } from 'vitest';
import {
  CachedWorkspaceStore,
  type WorkspaceWrite,
  type WorkspaceWrites,
} from '$lib/adapters/cached-workspace';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';
import { workspaceContract } from '../../support/workspace-contract';

const p = (raw: string) => (parseWorkspacePath(raw) as { ok: true; value: WorkspacePath }).value;
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (r: { ok: boolean; value?: Uint8Array }) => new TextDecoder().decode(r.value);

/** Tabs on one bus: what one publishes, the others hear at once (a BroadcastChannel, synchronously). */
function bus() {
  const listeners: { from: number; listener: (w: WorkspaceWrite) => void }[] = [];
  let n = 0;
  return (): WorkspaceWrites => {
    const me = ++n;
    return {
      publish: (w) => listeners.filter((l) => l.from !== me).forEach((l) => l.listener(w)),
      subscribe: (listener) => listeners.push({ from: me, listener }),
    };
  };
}

/** Counts what reaches the store below the cache. */
function counting(inner: WorkspaceStore) {
  const reads: string[] = [];
  const store: WorkspaceStore = {
    delete: (key) => inner.delete(key),
    async open(key) {
      const opened = await inner.open(key);
      if (!opened.ok) return opened;
      const ws = opened.value;
      const wrapped: Workspace = {
        key: ws.key,
        stat: (path) => ws.stat(path),
        read: (path) => (reads.push(path), ws.read(path)),
        write: (path, data, guard) => ws.write(path, data, guard),
        append: (path, data) => ws.append(path, data),
        list: (dir) => (reads.push(`list:${dir ?? ''}`), ws.list(dir)),
        remove: (path) => ws.remove(path),
      };
      return { ok: true, value: wrapped };
    },
  };
  return { store, reads };
}

workspaceContract(
  'cached (memory)',
  async () => new CachedWorkspaceStore(new MemoryWorkspaceStore(), bus()()),
);

describe('the workspace cache', () => {
  async function setup(budget?: number) {
    const memory = new MemoryWorkspaceStore();
    const { store, reads } = counting(memory);
    const tabs = bus();
    const a = new CachedWorkspaceStore(store, tabs(), budget);
    const b = new CachedWorkspaceStore(store, tabs(), budget);
    const wa = (await a.open('sessions/s')) as { ok: true; value: Workspace };
    const wb = (await b.open('sessions/s')) as { ok: true; value: Workspace };
    return { a, wa: wa.value, wb: wb.value, reads };
  }

  it('reads a file and a listing once, and again after a write', async () => {
    const { wa, reads } = await setup();
    await wa.write(p('work/a.md'), enc('one'));
    expect(dec(await wa.read(p('work/a.md')))).toBe('one');
    expect(dec(await wa.read(p('work/a.md')))).toBe('one');
    await wa.list(p('work'));
    await wa.list(p('work'));
    expect(reads).toEqual(['work/a.md', 'list:work']);
    await wa.write(p('work/b.md'), enc('two'));
    expect((await wa.list(p('work'))).ok && (await wa.list(p('work')))).toMatchObject({ ok: true });
    expect(reads.filter((r) => r === 'list:work')).toHaveLength(2);
    await wa.write(p('work/a.md'), enc('changed'));
    expect(dec(await wa.read(p('work/a.md')))).toBe('changed');
  });

  it('hands out copies: changing what a read returned changes nothing cached', async () => {
    const { wa } = await setup();
    await wa.write(p('work/a.md'), enc('abc'));
    const first = await wa.read(p('work/a.md'));
    (first as { value: Uint8Array }).value[0] = 120;
    expect(dec(await wa.read(p('work/a.md')))).toBe('abc');
  });

  it('another tab’s write, append or removal is never read stale', async () => {
    const { wa, wb } = await setup();
    await wa.write(p('work/a.md'), enc('one'));
    expect(dec(await wa.read(p('work/a.md')))).toBe('one');
    await wb.write(p('work/a.md'), enc('two'));
    expect(dec(await wa.read(p('work/a.md')))).toBe('two');
    await wb.append(p('work/a.md'), enc('+'));
    expect(dec(await wa.read(p('work/a.md')))).toBe('two+');
    await wb.remove(p('work'));
    expect((await wa.read(p('work/a.md'))).ok).toBe(false);
    expect((await wa.list()).ok && (await wa.list())).toMatchObject({ ok: true, value: [] });
  });

  it('does not keep what a read returned if the file changed while it ran', async () => {
    const { wa, wb } = await setup();
    await wa.write(p('work/a.md'), enc('old'));
    const reading = wa.read(p('work/a.md'));
    await wb.write(p('work/a.md'), enc('new'));
    await reading;
    expect(dec(await wa.read(p('work/a.md')))).toBe('new');
  });

  it('keeps at most its budget, the least recently used out first', async () => {
    const { wa, reads } = await setup(4096);
    for (const n of [1, 2, 3]) await wa.write(p(`work/${n}.bin`), new Uint8Array(1000));
    for (const n of [1, 2, 3]) await wa.read(p(`work/${n}.bin`));
    await wa.read(p('work/1.bin'));
    await wa.write(p('work/4.bin'), new Uint8Array(1000));
    await wa.read(p('work/4.bin'));
    await wa.write(p('work/5.bin'), new Uint8Array(1000));
    await wa.read(p('work/5.bin'));
    reads.length = 0;
    // 2 was the least recently used: it went; 1, 4 and 5 are still held.
    for (const n of [1, 4, 5, 2]) await wa.read(p(`work/${n}.bin`));
    expect(reads).toEqual(['work/2.bin']);
  });

  it('forgets a workspace changed behind its back, here and in the other tabs', async () => {
    const { a, wa, wb, reads } = await setup();
    await wa.write(p('work/a.md'), enc('one'));
    await wa.read(p('work/a.md'));
    await wb.read(p('work/a.md'));
    reads.length = 0;
    a.changedOutside('sessions/s');
    await wa.read(p('work/a.md'));
    await wb.read(p('work/a.md'));
    expect(reads).toEqual(['work/a.md', 'work/a.md']);
  });

  it('prefetches the files under the folders it is given, once, so reads after it are from memory', async () => {
    const { wa, reads } = await setup();
    await wa.write(p('work/a.md'), enc('a'));
    await wa.write(p('work/deep/b.md'), enc('b'));
    await wa.write(p('tmp/c.md'), enc('c'));
    await wa.write(p('runs/r1/journal.jsonl'), enc('{}'));
    await Promise.all([wa.prefetch!([p('work'), p('tmp')]), wa.prefetch!([p('work'), p('tmp')])]);
    expect(reads.filter((r) => !r.startsWith('list:')).sort()).toEqual([
      'tmp/c.md',
      'work/a.md',
      'work/deep/b.md',
    ]);
    const before = reads.length;
    expect(dec(await wa.read(p('work/deep/b.md')))).toBe('b');
    expect(await wa.list(p('work'))).toMatchObject({ ok: true });
    expect(reads).toHaveLength(before);
    // A missing folder is nothing to read, not a failure.
    await expect(wa.prefetch!([p('nothing')])).resolves.toBeUndefined();
  });

  it('prefetches no more than half its budget', async () => {
    const { wa, reads } = await setup(1_000);
    for (let i = 0; i < 20; i++)
      await wa.write(p(`work/f${String(i).padStart(2, '0')}.md`), enc('x'.repeat(100)));
    await wa.prefetch!([p('work')]);
    const read = reads.filter((r) => !r.startsWith('list:')).length;
    // Eight reads in flight may each start just before the half is reached.
    expect(read).toBeGreaterThanOrEqual(5);
    expect(read).toBeLessThanOrEqual(5 + 7);
  });
});
