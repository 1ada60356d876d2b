import { cdp } from 'vitest/browser';
import { afterAll, describe, expect, it } from 'vitest';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import type { WorkspacePath } from '$lib/domain/workspace-path';

const MB = 1024 * 1024;
const origin = location.origin;
const session = cdp();

/** Random bytes: nothing along the way can compress them below their size. */
const noise = (n: number) => {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, i + 65536));
  return out;
};

afterAll(async () => {
  await session.send('Storage.overrideQuotaForOrigin', { origin });
});

describe('OPFS writes under a full quota (Chromium quota made small through CDP)', () => {
  it('a write that does not fit fails with storage.quota_exceeded and damages nothing', async () => {
    const store = new OpfsWorkspaceStore();
    const opened = await store.open(`sessions/quota-${crypto.randomUUID()}`);
    if (!opened.ok) throw new Error(opened.error.message);
    const ws = opened.value;
    const kept = 'work/kept.md' as WorkspacePath;
    expect((await ws.write(kept, new TextEncoder().encode('old content'))).ok).toBe(true);

    const { usage = 0 } = await navigator.storage.estimate();
    await session.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: usage + MB });

    const replaced = await ws.write(kept, noise(3 * MB));
    expect(replaced).toMatchObject({ ok: false, error: { code: 'storage.quota_exceeded' } });
    expect(!replaced.ok && replaced.error.message).toMatch(
      /^Could not save the file work\/kept\.md: this browser's storage for Hearth is full/,
    );
    const read = await ws.read(kept);
    expect(read.ok && new TextDecoder().decode(read.value)).toBe('old content');

    const fresh = 'work/new.bin' as WorkspacePath;
    expect(await ws.write(fresh, noise(3 * MB))).toMatchObject({
      ok: false,
      error: { code: 'storage.quota_exceeded' },
    });
    expect(await ws.stat(fresh)).toEqual({ ok: true, value: null });
    expect(await ws.append(kept, noise(3 * MB))).toMatchObject({
      ok: false,
      error: { code: 'storage.quota_exceeded' },
    });
    const after = await ws.read(kept);
    expect(after.ok && new TextDecoder().decode(after.value)).toBe('old content');
    const listed = await ws.list('work' as WorkspacePath);
    expect(listed.ok && listed.value.map((e) => e.path)).toEqual(['work/kept.md']);
  });
});
