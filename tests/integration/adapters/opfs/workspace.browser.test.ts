import { afterEach, describe, expect, it } from 'vitest';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { workspaceContract } from '../../../support/workspace-contract';
import type { WriterRequest } from './opfs-writer.worker';

describe('environment', () => {
  it('runs in a browser with OPFS and Web Locks', () => {
    expect(typeof navigator.storage.getDirectory).toBe('function');
    expect(typeof navigator.locks.request).toBe('function');
  });
});

// One store for every test: its only state is the directories it walked to, and each test uses fresh keys.
const store = new OpfsWorkspaceStore();
workspaceContract('opfs', async () => store);

const enc = (s: string) => new TextEncoder().encode(s);
const p = (raw: string) => parseWorkspacePath(raw) as { ok: true; value: WorkspacePath };

describe('opfs: serialization across workers', () => {
  const key = `sessions/workers-${crypto.randomUUID()}`;
  const workers: Worker[] = [];

  afterEach(async () => {
    for (const w of workers.splice(0)) w.terminate();
    await store.delete(key);
  });

  /** Starts a worker with a prepared request; `go()` runs it and resolves with its outcome. */
  const prepareInWorker = (req: WriterRequest) =>
    new Promise<() => Promise<{ ok: boolean; code?: string }>>((ready, reject) => {
      const worker = new Worker(new URL('./opfs-writer.worker.ts', import.meta.url), { type: 'module' });
      workers.push(worker);
      worker.onerror = (e) => reject(new Error(e.message));
      worker.onmessage = () =>
        ready(
          () =>
            new Promise((resolve) => {
              worker.onmessage = (e) => resolve(e.data);
              worker.postMessage('go');
            }),
        );
      worker.postMessage(req);
    });

  it('lets exactly one guarded write win when a page and workers race', async () => {
    const opened = await store.open(key);
    if (!opened.ok) throw new Error(opened.error.message);
    const ws = opened.value;
    const path = p('work/race.txt').value;
    const written = await ws.write(path, enc('original'));
    if (!written.ok) throw new Error(written.error.message);
    const guard = { kind: 'sha256', sha256: written.value.sha256 } as const;
    const racers = await Promise.all(
      [0, 1, 2].map((i) => prepareInWorker({ op: 'write', key, path, data: enc(`worker ${i}`), guard })),
    );
    const results = await Promise.all([
      ...racers.map((go) => go()),
      ws
        .write(path, enc('page'), guard)
        .then((r) => (r.ok ? { ok: true } : { ok: false, code: r.error.code })),
    ]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => r.code)).toEqual(Array(3).fill('workspace.conflict'));
    const content = await ws.read(path);
    expect(content.ok && new TextDecoder().decode(content.value)).toMatch(/^(worker [0-2]|page)$/);
  });

  it('loses no bytes when a page and workers append to one file', async () => {
    const opened = await store.open(key);
    if (!opened.ok) throw new Error(opened.error.message);
    const path = p('work/log.txt').value;
    const chunks = Array.from({ length: 8 }, (_, i) => `<chunk ${i}>`);
    const racers = await Promise.all(
      chunks.map(async (c, i) =>
        i % 2 === 0
          ? await prepareInWorker({ op: 'append', key, path, data: enc(c) })
          : () => opened.value.append(path, enc(c)).then((r) => ({ ok: r.ok })),
      ),
    );
    const results = await Promise.all(racers.map((go) => go()));
    expect(results.every((r) => r.ok)).toBe(true);
    const content = await opened.value.read(path);
    const text = content.ok ? new TextDecoder().decode(content.value) : '';
    expect(text.length).toBe(chunks.join('').length);
    for (const c of chunks) expect(text).toContain(c);
  });
});

describe('opfs: layout', () => {
  it('stores files under workspaces/<key>/ and hides the swap file of an in-flight write', async () => {
    const key = `sessions/layout-${crypto.randomUUID()}`;
    const opened = await store.open(key);
    if (!opened.ok) throw new Error(opened.error.message);
    await opened.value.write(p('work/a.txt').value, enc('x'));
    let dir = await navigator.storage.getDirectory();
    for (const segment of ['workspaces', ...key.split('/'), 'work'])
      dir = await dir.getDirectoryHandle(segment);
    const stream = await (await dir.getFileHandle('a.txt')).createWritable();
    try {
      const listed = await opened.value.list(p('work').value);
      expect(listed).toEqual({ ok: true, value: [{ path: 'work/a.txt', kind: 'file' }] });
    } finally {
      await stream.abort();
      await store.delete(key);
    }
  });
});

describe('opfs: a refused guarded write', () => {
  it('leaves the file and nothing beside it (the stream it opened is aborted)', async () => {
    const key = `sessions/refused-${crypto.randomUUID()}`;
    const opened = await store.open(key);
    if (!opened.ok) throw new Error(opened.error.message);
    const ws = opened.value;
    try {
      const first = await ws.write(p('work/a.txt').value, enc('v1'));
      if (!first.ok) throw new Error(first.error.message);
      await ws.write(p('work/a.txt').value, enc('v1 changed elsewhere'));
      const refused = await ws.write(p('work/a.txt').value, enc('v2'), {
        kind: 'sha256',
        sha256: first.value.sha256,
      });
      expect(refused.ok ? 'written' : refused.error.code).toBe('workspace.conflict');
      let dir = await navigator.storage.getDirectory();
      for (const segment of ['workspaces', ...key.split('/'), 'work'])
        dir = await dir.getDirectoryHandle(segment);
      const names: string[] = [];
      for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
      expect(names).toEqual(['a.txt']);
      const file = await (await dir.getFileHandle('a.txt')).getFile();
      expect(await file.text()).toBe('v1 changed elsewhere');
    } finally {
      await store.delete(key);
    }
  });
});

describe('opfs: directories changed behind a store', () => {
  // Another tab's store: its changes never pass through `store`, which keeps handles it walked to.
  const other = new OpfsWorkspaceStore();
  const keys: string[] = [];
  afterEach(async () => {
    for (const key of keys.splice(0)) await store.delete(key);
  });

  const bothOpen = async (key = `sessions/kept-${crypto.randomUUID()}`) => {
    keys.push(key);
    const mine = await store.open(key);
    const theirs = await other.open(key);
    if (!mine.ok || !theirs.ok) throw new Error('cannot open');
    return { key, mine: mine.value, theirs: theirs.value };
  };

  it('sees a folder another store removed as gone, and writes into it again', async () => {
    const { mine, theirs } = await bothOpen();
    await mine.write(p('work/deep/dir/a.txt').value, enc('a'));
    expect(await theirs.remove(p('work/deep').value)).toEqual({ ok: true, value: undefined });

    expect(await mine.read(p('work/deep/dir/a.txt').value)).toMatchObject({
      ok: false,
      error: { code: 'workspace.file_not_found' },
    });
    expect(await mine.stat(p('work/deep/dir/a.txt').value)).toEqual({ ok: true, value: null });
    expect(await mine.list(p('work/deep/dir').value)).toMatchObject({
      ok: false,
      error: { code: 'workspace.file_not_found' },
    });
    expect((await mine.write(p('work/deep/dir/b.txt').value, enc('b'))).ok).toBe(true);
    expect((await mine.append(p('work/deep/other/c.txt').value, enc('c'))).ok).toBe(true);
    expect(await theirs.list(p('work/deep').value)).toEqual({
      ok: true,
      value: [
        { path: 'work/deep/dir', kind: 'directory' },
        { path: 'work/deep/other', kind: 'directory' },
      ],
    });
  });

  it('reads a folder another store removed and made again as it is now', async () => {
    const { mine, theirs } = await bothOpen();
    await mine.write(p('work/d/old.txt').value, enc('old'));
    await theirs.remove(p('work/d').value);
    await theirs.write(p('work/d/new.txt').value, enc('new'));
    expect(await mine.list(p('work/d').value)).toEqual({
      ok: true,
      value: [{ path: 'work/d/new.txt', kind: 'file' }],
    });
    expect(await mine.read(p('work/d/new.txt').value)).toEqual({ ok: true, value: enc('new') });
  });

  it('sees a file that took a folder’s place as a file, as a fresh store does', async () => {
    const { mine, theirs } = await bothOpen();
    await mine.write(p('work/x/inner.txt').value, enc('inner'));
    await theirs.remove(p('work/x').value);
    await theirs.write(p('work/x').value, enc('now a file'));
    const fresh = await new OpfsWorkspaceStore().open(keys[0]!);
    if (!fresh.ok) throw new Error(fresh.error.message);
    for (const ws of [mine, fresh.value]) {
      expect(await ws.read(p('work/x/inner.txt').value)).toMatchObject({
        ok: false,
        error: { code: 'workspace.not_a_directory' },
      });
      expect(await ws.stat(p('work/x/inner.txt').value)).toEqual({ ok: true, value: null });
      expect(await ws.write(p('work/x/inner.txt').value, enc('again'))).toMatchObject({
        ok: false,
        error: { code: 'workspace.not_a_directory' },
      });
      expect(await ws.read(p('work/x').value)).toEqual({ ok: true, value: enc('now a file') });
    }
  });

  it('shares what one workspace removed with a workspace nested in it (a chat and its run)', async () => {
    const { key, mine: chat } = await bothOpen();
    const run = await store.open(`${key}/runs/r1`);
    if (!run.ok) throw new Error(run.error.message);
    await chat.write(p('runs/r1/work/f.txt' as string).value, enc('f'));
    expect(await run.value.read(p('work/f.txt').value)).toEqual({ ok: true, value: enc('f') });
    await chat.remove(p('runs/r1/work').value);
    expect(await run.value.read(p('work/f.txt').value)).toMatchObject({
      ok: false,
      error: { code: 'workspace.file_not_found' },
    });
    expect((await run.value.write(p('work/g.txt').value, enc('g'))).ok).toBe(true);
  });
});

describe('opfs: storage failures', () => {
  it('returns workspace.storage_failed instead of throwing when OPFS is unavailable', async () => {
    const broken = new OpfsWorkspaceStore(() => Promise.reject(new DOMException('denied', 'SecurityError')));
    const opened = await broken.open('sessions/x');
    expect(opened).toMatchObject({ ok: false, error: { code: 'workspace.storage_failed' } });
    expect(!opened.ok && opened.error.message).toContain('SecurityError');
    expect(await broken.delete('sessions/x')).toMatchObject({
      ok: false,
      error: { code: 'workspace.storage_failed' },
    });
  });

  it('returns workspace.storage_failed when a directory handle fails mid-operation', async () => {
    const root = await navigator.storage.getDirectory();
    const failing = new Proxy(root, {
      get(target, prop) {
        if (prop === 'getDirectoryHandle') {
          return () => Promise.reject(new DOMException('disk gone', 'InvalidStateError'));
        }
        const v = Reflect.get(target, prop);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const opened = await new OpfsWorkspaceStore(async () => failing).open('sessions/x');
    expect(opened).toMatchObject({ ok: false, error: { code: 'workspace.storage_failed' } });
  });
});
