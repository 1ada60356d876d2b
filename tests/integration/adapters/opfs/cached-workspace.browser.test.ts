import { describe, expect, it } from 'vitest';
import { broadcastWorkspaceWrites, CachedWorkspaceStore } from '$lib/adapters/cached-workspace';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';
import { workspaceContract } from '../../../support/workspace-contract';

const p = (raw: string) => (parseWorkspacePath(raw) as { ok: true; value: WorkspacePath }).value;
const enc = (s: string) => new TextEncoder().encode(s);
const text = (r: { ok: boolean; value?: Uint8Array }) => (r.ok ? new TextDecoder().decode(r.value) : null);

workspaceContract(
  'cached (OPFS)',
  async () =>
    new CachedWorkspaceStore(
      new OpfsWorkspaceStore(),
      broadcastWorkspaceWrites(`contract-${crypto.randomUUID()}`),
    ),
);

describe('the workspace cache over OPFS', () => {
  const open = async (store: CachedWorkspaceStore, key: string) =>
    ((await store.open(key)) as { ok: true; value: Workspace }).value;

  it('two tabs: what one writes, the other reads fresh once the write is announced', async () => {
    const channel = `tabs-${crypto.randomUUID()}`;
    const key = `sessions/cache-${crypto.randomUUID()}`;
    // Two stores on two channels of one name: two tabs' runtime workers, as far as the cache knows.
    const first = await open(
      new CachedWorkspaceStore(new OpfsWorkspaceStore(), broadcastWorkspaceWrites(channel)),
      key,
    );
    const second = await open(
      new CachedWorkspaceStore(new OpfsWorkspaceStore(), broadcastWorkspaceWrites(channel)),
      key,
    );
    await first.write(p('work/a.md'), enc('one'));
    expect(text(await first.read(p('work/a.md')))).toBe('one');
    expect(text(await second.read(p('work/a.md')))).toBe('one');
    await second.write(p('work/a.md'), enc('two'));
    await expect.poll(async () => text(await first.read(p('work/a.md')))).toBe('two');
    await second.remove(p('work'));
    await expect.poll(async () => text(await first.read(p('work/a.md')))).toBeNull();
    await new OpfsWorkspaceStore().delete(key);
  });

  it('a chat and its run’s workspace are one place on disk: a write through either is read by both', async () => {
    const store = new CachedWorkspaceStore(
      new OpfsWorkspaceStore(),
      broadcastWorkspaceWrites(`nested-${crypto.randomUUID()}`),
    );
    const chat = `chats/cache-${crypto.randomUUID()}`;
    const parent = await open(store, chat);
    const run = await open(store, `${chat}/runs/r1`);
    await run.write(p('work/draft.md'), enc('draft'));
    expect(text(await parent.read(p('runs/r1/work/draft.md')))).toBe('draft');
    await parent.write(p('runs/r1/work/draft.md'), enc('edited'));
    expect(text(await run.read(p('work/draft.md')))).toBe('edited');
    expect((await parent.list(p('runs/r1/work'))).ok).toBe(true);
    await run.write(p('work/second.md'), enc('2'));
    const listed = await parent.list(p('runs/r1/work'));
    expect(listed.ok && listed.value.map((e) => e.path)).toEqual([
      'runs/r1/work/draft.md',
      'runs/r1/work/second.md',
    ]);
    await store.delete(chat);
  });
});
