import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { memoryLocks } from '$lib/adapters/system/locks';
import { SESSION_PROFILE_ID } from '$lib/domain/profile/scope';
import type { Sandbox } from '$lib/ports/sandbox';
import { createRuntimeContext } from '$lib/worker/context';
import { workspaceHandlers } from '$lib/worker/handlers/workspace';
import { prefetchRecordingStore } from '../../support/workspace-override';

let n = 0;

/** A runtime whose workspaces record read-aheads, and whose sandbox records warm-ups. */
function runtime() {
  const prefetched: string[][] = [];
  let warmed = 0;
  const memory = new MemoryWorkspaceStore();
  const opened: string[] = [];
  const workspaces = prefetchRecordingStore(
    { open: (key) => (opened.push(key), memory.open(key)), delete: (key) => memory.delete(key) },
    prefetched,
  );
  const sandbox: Sandbox = {
    run: () => Promise.reject(new Error('not in this test')),
    warm: () => void warmed++,
  };
  const ctx = createRuntimeContext({
    workspaces,
    locks: memoryLocks(),
    databaseName: `workspace-api-${++n}-${Math.random()}`,
    demoDelayMs: 0,
    sandbox,
  });
  const { methods } = workspaceHandlers(ctx);
  const signal = new AbortController().signal;
  return {
    warm: (p: { profileId: string; sessionId?: string }) => methods['workspace.warm'](p, signal),
    newSession: async () => (await ctx.sessions.create()).id,
    prefetched,
    /** Workspaces opened, other than the skill library's. */
    get opened() {
      return opened.filter((key) => !key.startsWith('library/'));
    },
    warmed: () => warmed,
  };
}

describe('workspace.warm', () => {
  it('starts the shell and reads a session’s visible roots ahead', async () => {
    const r = runtime();
    const sessionId = await r.newSession();
    await r.warm({ profileId: SESSION_PROFILE_ID, sessionId });
    expect(r.warmed()).toBe(1);
    expect(r.prefetched).toEqual([[`sessions/${sessionId}`, 'work', 'tmp']]);
  });

  it('refuses a session that does not exist, opening no workspace for it', async () => {
    const r = runtime();
    await expect(r.warm({ profileId: SESSION_PROFILE_ID, sessionId: 'missing' })).rejects.toThrow(
      'This session no longer exists.',
    );
    expect(r.prefetched).toEqual([]);
    expect(r.opened).toEqual([]);
  });

  it('reads nothing ahead for a chat (each chat run has a workspace of its own)', async () => {
    const r = runtime();
    await r.warm({ profileId: SESSION_PROFILE_ID });
    expect(r.warmed()).toBe(1);
    expect(r.prefetched).toEqual([]);
  });
});
