import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { memoryLocks } from '$lib/adapters/system/locks';
import { HearthFailure } from '$lib/domain/errors';
import { DEFAULT_RETENTION, type RetentionPolicy } from '$lib/domain/retention';
import type { RunId } from '$lib/domain/run';
import { createRuntimeContext, type RuntimeContext } from '$lib/worker/context';
import { RETENTION_KEY } from '$lib/runtime/retention';
import { settingsHandlers } from '$lib/worker/handlers/settings';
import type { RetentionApplyUpdate } from '$lib/worker/protocol';
import { Transfer } from '$lib/worker/rpc';

let ctx: RuntimeContext;
let n = 0;

const fakeStorage = (withPersist: boolean) => {
  let persisted = false;
  const calls: string[] = [];
  const storage = {
    estimate: async () => ({
      usage: 1234,
      quota: 10_000,
      usageDetails: { indexedDB: 1000, fileSystem: 234 },
    }),
    persisted: async () => persisted,
    ...(withPersist
      ? {
          persist: async () => {
            calls.push('persist');
            persisted = true;
            return true;
          },
        }
      : {}),
  };
  return { storage: storage as unknown as StorageManager, calls };
};

const api = (storage?: StorageManager, autoRetentionDelayMs?: number) => {
  ctx = createRuntimeContext({
    workspaces: new MemoryWorkspaceStore(),
    locks: memoryLocks(),
    databaseName: `settings-api-${++n}-${Math.random()}`,
    demoDelayMs: 0,
    storage,
    autoRetentionDelayMs,
  });
  const { methods, streams } = settingsHandlers(ctx);
  const signal = new AbortController().signal;
  const plain = async <T>(p: Promise<T | Transfer<T>>): Promise<T> => {
    const v = await p;
    return v instanceof Transfer ? v.value : v;
  };
  return {
    estimate: () => plain(methods['storage.estimate'](undefined, signal)),
    use: () => plain(methods['storage.use'](undefined, signal)),
    persist: (pageAnswer?: boolean) => plain(methods['storage.persist']({ pageAnswer }, signal)),
    get: () => plain(methods['settings.retention.get'](undefined, signal)),
    set: (policy: unknown) => plain(methods['settings.retention.set'](policy as RetentionPolicy, signal)),
    lastAuto: () => plain(methods['settings.retention.lastAuto'](undefined, signal)),
    preview: (policy?: RetentionPolicy) => plain(methods['settings.retention.preview']({ policy }, signal)),
    apply: async (policy?: RetentionPolicy, only?: { runId: RunId; prune: 'artifacts' | 'journal' }[]) => {
      const out: RetentionApplyUpdate[] = [];
      for await (const u of streams['settings.retention.apply']({ policy, only }, signal)) out.push(u);
      return out;
    },
  };
};

/** Demo runs in one session, one after the other (a haiku: a write, a read, an answer). */
async function demoRuns(topics: string[]) {
  const session = await ctx.sessions.create({ connectionId: 'demo' });
  const ids: RunId[] = [];
  for (const topic of topics) {
    for await (const u of ctx.sessions.send(session.id, `write a haiku about ${topic}`)) {
      if (u.type === 'run' && !ids.includes(u.run.id)) ids.push(u.run.id);
    }
    await new Promise((r) => setTimeout(r, 3));
  }
  return { session, ids };
}

afterEach(async () => {
  ctx.db.close();
  await ctx.db.delete();
});

describe('settings API: retention', () => {
  it('reads the defaults, saves a valid policy and rejects an invalid one', async () => {
    const s = api();
    expect(await s.get()).toEqual(DEFAULT_RETENTION);
    const mine = { ...DEFAULT_RETENTION, keepFullRuns: 1, keepJournalRuns: 5, automatic: false };
    expect(await s.set({ ...mine, extra: true })).toEqual(mine);
    expect(await s.get()).toEqual(mine);
    const rejected = await s.set({ ...mine, keepFullRuns: 6 }).catch((e) => e);
    expect(rejected).toBeInstanceOf(HearthFailure);
    expect((rejected as HearthFailure).error.code).toBe('settings.invalid');
    expect(await s.get()).toEqual(mine);
    // A damaged stored value reads as the defaults.
    await ctx.stores.settings.set(RETENTION_KEY, { keepFullRuns: 'lots' });
    expect(await s.get()).toEqual(DEFAULT_RETENTION);
  });

  it('previews the saved or a given policy, then applies only what was previewed', async () => {
    const s = api();
    const { session, ids } = await demoRuns(['moss', 'rain', 'snow']);
    expect(ids).toHaveLength(3);
    expect((await s.preview()).items).toEqual([]);

    const preview = await s.preview({ ...DEFAULT_RETENTION, keepFullRuns: 1 });
    expect(preview.items.map((i) => i.runId)).toEqual([ids[1], ids[0]]);
    expect(preview.totals.bytes).toBeGreaterThan(0);
    expect(preview.totals.events).toBe(0);
    const title = 'Session: write a haiku about moss';
    expect(preview.titles).toEqual({ [ids[1]!]: title, [ids[0]!]: title });

    // A run finished after the preview is not deleted: only the previewed runs go.
    const later = await demoRuns(['fog']);
    const updates = await s.apply(
      { ...DEFAULT_RETENTION, keepFullRuns: 1 },
      preview.items.map((i) => ({ runId: i.runId, prune: i.prune })),
    );
    expect(updates[0]).toEqual({ type: 'progress', done: 0, total: 2 });
    const done = updates.at(-1)!;
    if (done.type !== 'done') throw new Error('no result');
    expect(done.result.totals).toEqual(preview.totals);
    expect(done.result.outcomes.map((o) => o.runId)).toEqual([ids[1], ids[0]]);
    expect((await ctx.stores.runs.get(ids[2]!))?.pruned).toBeUndefined();
    expect((await ctx.stores.runs.get(later.ids[0]!))?.pruned).toBeUndefined();
    // The run view's journal stays; the conversation is whole.
    expect((await ctx.stores.journal.read(ids[0]!)).length).toBeGreaterThan(0);
    expect((await ctx.sessions.get(session.id)).messages.filter((m) => m.role === 'user')).toHaveLength(3);
  });

  it('rejects an invalid policy for preview and apply', async () => {
    const s = api();
    const bad = { ...DEFAULT_RETENTION, keepFullRuns: -1 };
    expect(((await s.preview(bad).catch((e) => e)) as HearthFailure).error.code).toBe('settings.invalid');
    expect(((await s.apply(bad).catch((e) => e)) as HearthFailure).error.code).toBe('settings.invalid');
  });
});

describe('automatic retention', () => {
  const policy = { ...DEFAULT_RETENTION, keepFullRuns: 1, keepJournalRuns: 1 };

  it('prunes by itself after runs finish when the policy says so, and says what it freed', async () => {
    const s = api(undefined, 10);
    await s.set(policy);
    const { ids } = await demoRuns(['moss', 'rain', 'snow']);
    await ctx.retention!.settled();
    const pruned = await Promise.all(ids.map(async (id) => (await ctx.stores.runs.get(id))?.pruned));
    expect(pruned).toEqual(['journal', 'journal', undefined]);
    expect(await ctx.stores.journal.count(ids[0]!)).toBe(0);
    const report = await s.lastAuto();
    expect(report).toMatchObject({ runs: expect.any(Number), failed: 0 });
    expect(report!.runs).toBeGreaterThan(0);
    expect(report!.bytes).toBeGreaterThan(0);
  });

  it('leaves everything when the policy is not automatic', async () => {
    const s = api(undefined, 10);
    await s.set({ ...policy, automatic: false });
    const { ids } = await demoRuns(['moss', 'rain']);
    await ctx.retention!.settled();
    expect((await ctx.stores.runs.get(ids[0]!))?.pruned).toBeUndefined();
    expect(await s.lastAuto()).toBeNull();
  });

  it('is off in a context without a delay (tests, tools)', () => {
    api();
    expect(ctx.retention).toBeNull();
  });
});

describe('settings API: storage', () => {
  it('reports usage, quota, details and persistence', async () => {
    const { storage } = fakeStorage(false);
    expect(await api(storage).estimate()).toEqual({
      usage: 1234,
      quota: 10_000,
      persisted: false,
      details: { indexedDB: 1000, fileSystem: 234 },
    });
  });

  it('reports zeros without a StorageManager', async () => {
    expect(await api().estimate()).toEqual({ usage: 0, quota: 0, persisted: false });
    expect(await api().persist()).toMatchObject({ granted: false, askedBy: 'none' });
  });

  it('passes the page’s answer on, or asks itself where the worker can', async () => {
    const page = fakeStorage(false);
    expect(await api(page.storage).persist(false)).toMatchObject({ granted: false, askedBy: 'page' });
    const worker = fakeStorage(true);
    const s = api(worker.storage);
    expect(await s.persist()).toMatchObject({
      granted: true,
      askedBy: 'worker',
      estimate: { persisted: true },
    });
    expect(worker.calls).toEqual(['persist']);
    // The page asked already: the worker does not ask again.
    expect(await s.persist(true)).toMatchObject({ granted: true, askedBy: 'page' });
    expect(worker.calls).toEqual(['persist']);
  });

  it('remembers that it asked and what the browser answered; nothing when nobody could ask', async () => {
    const nobody = api();
    await nobody.persist();
    expect((await nobody.estimate()).persistAsked).toBeUndefined();

    const { storage } = fakeStorage(false);
    const s = api(storage);
    expect((await s.estimate()).persistAsked).toBeUndefined();
    const answered = await s.persist(false);
    expect(answered.estimate.persistAsked).toEqual({ at: expect.any(Number), granted: false });
    expect((await s.estimate()).persistAsked).toEqual(answered.estimate.persistAsked);
  });
});

describe('settings API: what takes the space', () => {
  it('lists each session and chat with its messages and files, the largest first', async () => {
    const s = api();
    expect((await s.use()).users).toEqual([]);
    const { session } = await demoRuns(['moss', 'rain']);
    await ctx.chats.seedExample();
    const chat = await ctx.chats.create('chr_example');
    await ctx.chats.update(chat.id, { connectionId: 'demo' });
    for await (const _ of ctx.chats.send(chat.id, 'Hello there, tell me about the lighthouse.')) void _;

    const { users } = await s.use();
    expect(users.map((u) => [u.kind, u.id])).toEqual(
      expect.arrayContaining([
        ['session', session.id],
        ['chat', chat.id],
      ]),
    );
    expect(users).toHaveLength(2);
    const totals = users.map((u) => u.messageBytes + u.bytes);
    expect(totals).toEqual([...totals].sort((a, b) => b - a));
    const sessionUse = users.find((u) => u.kind === 'session')!;
    const chatUse = users.find((u) => u.kind === 'chat')!;
    expect(sessionUse.label).toBe('write a haiku about moss');
    expect(chatUse.label).toMatch(/^Brindle: /);
    // Messages as stored, and the files: the session's haiku and run records; the chat reply's run workspace.
    const messages = await ctx.stores.sessions.messages(session.id);
    expect(sessionUse.messageBytes).toBe(
      messages.reduce((n, m) => n + new TextEncoder().encode(JSON.stringify(m)).byteLength, 0),
    );
    expect(sessionUse.files).toBeGreaterThan(5);
    expect(sessionUse.bytes).toBeGreaterThan(0);
    expect(chatUse.messageBytes).toBeGreaterThan(0);
    expect(chatUse.files).toBeGreaterThan(0);
  });
});
