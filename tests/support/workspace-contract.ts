import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '$lib/domain/hash';
import type { Result } from '$lib/domain/result';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

const p = (raw: string): WorkspacePath => {
  const r = parseWorkspacePath(raw);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

function value<T, E>(r: Result<T, E>): T {
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.error)}`);
  return r.value;
}

const errorCode = <T, E extends { code: string }>(r: Result<T, E>) => (r.ok ? 'ok' : r.error.code);

/**
 * The behaviour every `WorkspaceStore` adapter must have. Each test opens workspaces under fresh
 * random keys and deletes them afterwards, so runs against persistent storage (OPFS) never meet.
 *
 * Documented choices where the port leaves room:
 * - a `sha256` guard on a missing file fails with `workspace.file_not_found` (not `conflict`), so
 *   callers can tell "changed" from "vanished";
 * - any path that passes through a file (`a.txt/b`) gives `workspace.not_a_directory` for
 *   read/write/append/list, `null` for stat, and success for remove (nothing to remove);
 * - listing a missing directory gives `workspace.file_not_found`; directories exist only as
 *   parents of files written (there is no mkdir), and survive the removal of their files.
 */
export function workspaceContract(label: string, makeStore: () => Promise<WorkspaceStore>): void {
  describe(`${label}: WorkspaceStore contract`, () => {
    let store: WorkspaceStore;
    let keys: string[];
    let ws: Workspace;

    const freshKey = (kind = 'sessions') => {
      const key = `${kind}/contract-${crypto.randomUUID()}`;
      keys.push(key);
      return key;
    };

    beforeEach(async () => {
      store = await makeStore();
      keys = [];
      ws = value(await store.open(freshKey()));
    });

    afterEach(async () => {
      for (const key of keys) expect(errorCode(await store.delete(key))).toBe('ok');
    });

    describe('read and write', () => {
      it('round-trips UTF-8 text with multi-byte characters and returns its sha256', async () => {
        const data = enc('héllo 世界 🎉\nline two\r\n');
        const written = value(await ws.write(p('work/notes.md'), data));
        expect(written.sha256).toBe(await sha256Hex(data));
        const read = value(await ws.read(p('work/notes.md')));
        expect(read).toEqual(data);
        expect(dec(read)).toBe('héllo 世界 🎉\nline two\r\n');
      });

      it('round-trips arbitrary binary data byte for byte', async () => {
        const data = Uint8Array.from({ length: 512 }, (_, i) => (i * 7) % 256);
        value(await ws.write(p('work/blob.bin'), data));
        expect(value(await ws.read(p('work/blob.bin')))).toEqual(data);
      });

      it('round-trips an empty file', async () => {
        const written = value(await ws.write(p('work/empty.txt'), new Uint8Array()));
        expect(written.sha256).toBe(await sha256Hex(new Uint8Array()));
        expect(value(await ws.read(p('work/empty.txt'))).byteLength).toBe(0);
        expect(value(await ws.stat(p('work/empty.txt')))).toEqual({ kind: 'file', size: 0 });
      });

      it('writes only the bytes of a view, not its whole buffer', async () => {
        const buffer = enc('0123456789');
        value(await ws.write(p('work/view.txt'), buffer.subarray(2, 5)));
        expect(dec(value(await ws.read(p('work/view.txt'))))).toBe('234');
      });

      it('replaces the whole content, truncating a longer previous file', async () => {
        value(await ws.write(p('work/a.txt'), enc('a much longer first version')));
        value(await ws.write(p('work/a.txt'), enc('short')));
        expect(dec(value(await ws.read(p('work/a.txt'))))).toBe('short');
      });

      it('keeps stored bytes independent of the caller’s arrays', async () => {
        const data = enc('abc');
        value(await ws.write(p('work/a.txt'), data));
        data[0] = 0x7a;
        const first = value(await ws.read(p('work/a.txt')));
        first[1] = 0x7a;
        expect(dec(value(await ws.read(p('work/a.txt'))))).toBe('abc');
      });

      it('creates missing parent directories', async () => {
        value(await ws.write(p('work/deep/er/file.txt'), enc('x')));
        expect(value(await ws.stat(p('work')))).toEqual({ kind: 'directory', size: 0 });
        expect(value(await ws.stat(p('work/deep')))).toEqual({ kind: 'directory', size: 0 });
        expect(value(await ws.stat(p('work/deep/er')))).toEqual({ kind: 'directory', size: 0 });
        expect(value(await ws.list(p('work/deep')))).toEqual([{ path: 'work/deep/er', kind: 'directory' }]);
      });

      it('reports a missing file as workspace.file_not_found', async () => {
        expect(errorCode(await ws.read(p('work/missing.txt')))).toBe('workspace.file_not_found');
        expect(errorCode(await ws.read(p('nowhere/at/all.txt')))).toBe('workspace.file_not_found');
      });

      it('refuses to read or write a directory (workspace.path_is_directory)', async () => {
        value(await ws.write(p('work/dir/file.txt'), enc('x')));
        expect(errorCode(await ws.read(p('work/dir')))).toBe('workspace.path_is_directory');
        expect(errorCode(await ws.write(p('work/dir'), enc('y')))).toBe('workspace.path_is_directory');
        expect(errorCode(await ws.append(p('work/dir'), enc('y')))).toBe('workspace.path_is_directory');
        expect(dec(value(await ws.read(p('work/dir/file.txt'))))).toBe('x');
      });

      it('refuses paths that pass through a file (workspace.not_a_directory)', async () => {
        value(await ws.write(p('work/a.txt'), enc('x')));
        expect(errorCode(await ws.write(p('work/a.txt/b.txt'), enc('y')))).toBe('workspace.not_a_directory');
        expect(errorCode(await ws.write(p('work/a.txt/b/c.txt'), enc('y')))).toBe(
          'workspace.not_a_directory',
        );
        expect(errorCode(await ws.append(p('work/a.txt/b.txt'), enc('y')))).toBe('workspace.not_a_directory');
        expect(errorCode(await ws.read(p('work/a.txt/b.txt')))).toBe('workspace.not_a_directory');
        expect(errorCode(await ws.list(p('work/a.txt')))).toBe('workspace.not_a_directory');
        expect(value(await ws.stat(p('work/a.txt/b.txt')))).toBeNull();
        expect(dec(value(await ws.read(p('work/a.txt'))))).toBe('x');
      });
    });

    describe('stat and list', () => {
      it('stats files by byte size, directories as size 0, missing paths as null', async () => {
        value(await ws.write(p('work/é.txt'), enc('日本')));
        expect(value(await ws.stat(p('work/é.txt')))).toEqual({ kind: 'file', size: 6 });
        expect(value(await ws.stat(p('work')))).toEqual({ kind: 'directory', size: 0 });
        expect(value(await ws.stat(p('work/none.txt')))).toBeNull();
        expect(value(await ws.stat(p('none/none.txt')))).toBeNull();
      });

      it('lists an empty workspace root as no entries', async () => {
        expect(value(await ws.list())).toEqual([]);
      });

      it('lists immediate children of the root and of a directory, sorted by path, with kinds', async () => {
        for (const f of ['b.txt', 'a/x.txt', 'c/d/e.txt', 'A.txt', 'a/y/z.txt', 'a/b.md']) {
          value(await ws.write(p(f), enc(f)));
        }
        expect(value(await ws.list())).toEqual([
          { path: 'A.txt', kind: 'file' },
          { path: 'a', kind: 'directory' },
          { path: 'b.txt', kind: 'file' },
          { path: 'c', kind: 'directory' },
        ]);
        expect(value(await ws.list(p('a')))).toEqual([
          { path: 'a/b.md', kind: 'file' },
          { path: 'a/x.txt', kind: 'file' },
          { path: 'a/y', kind: 'directory' },
        ]);
        expect(value(await ws.list(p('c/d')))).toEqual([{ path: 'c/d/e.txt', kind: 'file' }]);
      });

      it('reports listing a missing directory as workspace.file_not_found', async () => {
        expect(errorCode(await ws.list(p('missing')))).toBe('workspace.file_not_found');
      });
    });

    describe('guards', () => {
      const path = p('work/guarded.txt');

      it('absent: creates a missing file, refuses an existing one with workspace.conflict', async () => {
        value(await ws.write(path, enc('first'), { kind: 'absent' }));
        expect(errorCode(await ws.write(path, enc('second'), { kind: 'absent' }))).toBe('workspace.conflict');
        expect(dec(value(await ws.read(path)))).toBe('first');
      });

      it('sha256: writes when the current content matches', async () => {
        const { sha256 } = value(await ws.write(path, enc('v1')));
        const next = value(await ws.write(path, enc('v2'), { kind: 'sha256', sha256 }));
        expect(next.sha256).toBe(await sha256Hex(enc('v2')));
        expect(dec(value(await ws.read(path)))).toBe('v2');
      });

      it('sha256: refuses changed content with workspace.conflict and leaves it unchanged', async () => {
        const { sha256 } = value(await ws.write(path, enc('v1')));
        value(await ws.write(path, enc('v1 changed elsewhere')));
        expect(errorCode(await ws.write(path, enc('v2'), { kind: 'sha256', sha256 }))).toBe(
          'workspace.conflict',
        );
        expect(dec(value(await ws.read(path)))).toBe('v1 changed elsewhere');
      });

      it('sha256: a missing file fails with workspace.file_not_found and creates nothing', async () => {
        const sha256 = await sha256Hex(enc('v1'));
        expect(errorCode(await ws.write(path, enc('v2'), { kind: 'sha256', sha256 }))).toBe(
          'workspace.file_not_found',
        );
        expect(errorCode(await ws.write(p('new/dir/f.txt'), enc('v2'), { kind: 'sha256', sha256 }))).toBe(
          'workspace.file_not_found',
        );
        expect(value(await ws.stat(path))).toBeNull();
        expect(value(await ws.stat(p('new')))).toBeNull();
      });

      it('none (the default): overwrites whatever is there', async () => {
        value(await ws.write(path, enc('v1')));
        value(await ws.write(path, enc('v2'), { kind: 'none' }));
        expect(dec(value(await ws.read(path)))).toBe('v2');
      });
    });

    describe('append', () => {
      it('creates a missing file (and its parents) with previousSha256 null', async () => {
        const out = value(await ws.append(p('work/log/a.txt'), enc('one')));
        expect(out).toEqual({ sha256: await sha256Hex(enc('one')), created: true, previousSha256: null });
        expect(dec(value(await ws.read(p('work/log/a.txt'))))).toBe('one');
      });

      it('appends exactly at the end and reports the previous sha256', async () => {
        value(await ws.write(p('work/a.txt'), enc('héllo')));
        const out = value(await ws.append(p('work/a.txt'), enc(' wörld')));
        expect(out).toEqual({
          sha256: await sha256Hex(enc('héllo wörld')),
          created: false,
          previousSha256: await sha256Hex(enc('héllo')),
        });
        expect(dec(value(await ws.read(p('work/a.txt'))))).toBe('héllo wörld');
      });

      it('appends empty data without changing the content', async () => {
        value(await ws.write(p('work/a.txt'), enc('x')));
        const out = value(await ws.append(p('work/a.txt'), new Uint8Array()));
        expect(out.sha256).toBe(out.previousSha256);
      });
    });

    describe('remove', () => {
      it('removes a file', async () => {
        value(await ws.write(p('work/a.txt'), enc('x')));
        value(await ws.remove(p('work/a.txt')));
        expect(value(await ws.stat(p('work/a.txt')))).toBeNull();
        expect(errorCode(await ws.read(p('work/a.txt')))).toBe('workspace.file_not_found');
        expect(value(await ws.list(p('work')))).toEqual([]);
      });

      it('removes a directory tree', async () => {
        value(await ws.write(p('work/d/a.txt'), enc('x')));
        value(await ws.write(p('work/d/e/b.txt'), enc('y')));
        value(await ws.write(p('work/keep.txt'), enc('z')));
        value(await ws.remove(p('work/d')));
        expect(value(await ws.stat(p('work/d')))).toBeNull();
        expect(value(await ws.stat(p('work/d/e/b.txt')))).toBeNull();
        expect(value(await ws.list(p('work')))).toEqual([{ path: 'work/keep.txt', kind: 'file' }]);
      });

      it('succeeds for a missing path', async () => {
        value(await ws.remove(p('work/missing.txt')));
        value(await ws.remove(p('missing/dir/file.txt')));
      });

      it('lets a removed path be written again', async () => {
        value(await ws.write(p('work/a.txt'), enc('x')));
        value(await ws.remove(p('work/a.txt')));
        value(await ws.write(p('work/a.txt'), enc('y'), { kind: 'absent' }));
        expect(dec(value(await ws.read(p('work/a.txt'))))).toBe('y');
      });
    });

    describe('stores and keys', () => {
      it('isolates workspaces under different keys', async () => {
        const other = value(await store.open(freshKey('chats')));
        value(await ws.write(p('work/a.txt'), enc('session')));
        value(await other.write(p('work/a.txt'), enc('chat')));
        expect(dec(value(await ws.read(p('work/a.txt'))))).toBe('session');
        expect(dec(value(await other.read(p('work/a.txt'))))).toBe('chat');
        expect(value(await other.list())).toEqual([{ path: 'work', kind: 'directory' }]);
      });

      it('opens the same workspace again under the same key', async () => {
        const key = freshKey();
        value(await value(await store.open(key)).write(p('work/a.txt'), enc('kept')));
        const again = value(await store.open(key));
        expect(dec(value(await again.read(p('work/a.txt'))))).toBe('kept');
      });

      it('deletes a workspace without touching others; a deleted key reopens empty', async () => {
        const key = freshKey();
        const doomed = value(await store.open(key));
        value(await doomed.write(p('work/a.txt'), enc('x')));
        value(await ws.write(p('work/a.txt'), enc('stays')));
        value(await store.delete(key));
        expect(value(await value(await store.open(key)).list())).toEqual([]);
        expect(dec(value(await ws.read(p('work/a.txt'))))).toBe('stays');
      });

      it('deletes a missing workspace successfully', async () => {
        value(await store.delete(`sessions/never-${crypto.randomUUID()}`));
      });

      it.each([
        '',
        '/sessions/x',
        'sessions/../x',
        'sessions//x',
        'sessions/.',
        'sessions/x/',
        'a\\b',
        'a/b c',
      ])('rejects the key %j with workspace.storage_failed', async (key) => {
        expect(errorCode(await store.open(key))).toBe('workspace.storage_failed');
        expect(errorCode(await store.delete(key))).toBe('workspace.storage_failed');
      });
    });

    describe('concurrency', () => {
      it('lets exactly one of N racing sha256-guarded writes win', async () => {
        const path = p('work/race.txt');
        const { sha256 } = value(await ws.write(path, enc('original')));
        const payloads = Array.from({ length: 8 }, (_, i) => enc(`writer ${i} `.repeat(i + 1)));
        const results = await Promise.all(payloads.map((d) => ws.write(path, d, { kind: 'sha256', sha256 })));
        const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        for (const r of results) if (!r.ok) expect(r.error.code).toBe('workspace.conflict');
        expect(value(await ws.read(path))).toEqual(payloads[winners[0]!]);
      });

      it('lets exactly one of N racing must-not-exist writes create the file', async () => {
        const path = p('work/created.txt');
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => ws.write(path, enc(`creator ${i}`), { kind: 'absent' })),
        );
        const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(dec(value(await ws.read(path)))).toBe(`creator ${winners[0]}`);
      });

      it('loses no bytes under concurrent appends, which form one chain of hashes', async () => {
        const path = p('work/log.txt');
        const chunks = Array.from({ length: 20 }, (_, i) => `<${i}:${'é'.repeat(i)}>`);
        const outcomes = (await Promise.all(chunks.map((c) => ws.append(path, enc(c))))).map(value);
        const content = dec(value(await ws.read(path)));
        expect(content.length).toBe(chunks.join('').length);
        for (const c of chunks) expect(content.split(c)).toHaveLength(2);
        expect(outcomes.filter((o) => o.created)).toHaveLength(1);
        const previous = new Set(outcomes.map((o) => o.previousSha256));
        const last = outcomes.filter((o) => !previous.has(o.sha256));
        expect(last).toHaveLength(1);
        expect(last[0]!.sha256).toBe(await sha256Hex(enc(content)));
      });
    });
  });
}
