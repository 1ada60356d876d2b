import { describe, expect, it } from 'vitest';
import { memoryLocks } from '$lib/adapters/system/locks';
import { DEFAULT_RETENTION, type AutoRetentionReport } from '$lib/domain/retention';
import { AutoRetention, type AutoRetentionDeps } from '$lib/runtime/auto-retention';

const freed = { runs: 1, bytes: 10, events: 2, states: 0, failed: 0 };

function harness(over: Partial<AutoRetentionDeps> = {}) {
  const passes: number[] = [];
  const reports: AutoRetentionReport[] = [];
  let release: (() => void) | null = null;
  const deps: AutoRetentionDeps = {
    policy: async () => DEFAULT_RETENTION,
    prune: async () => {
      passes.push(passes.length + 1);
      if (release === null && passes.length === 1) await new Promise<void>((r) => (release = r));
      return freed;
    },
    report: async (r) => void reports.push(r),
    locks: memoryLocks(),
    clock: { now: () => 42 },
    delayMs: 5,
    ...over,
  };
  return { auto: new AutoRetention(deps), passes, reports, release: () => release?.() };
}

describe('AutoRetention', () => {
  it('makes one pass of a burst of pokes, and another for pokes during a pass', async () => {
    const h = harness();
    h.auto.poke();
    h.auto.poke();
    h.auto.poke();
    await new Promise((r) => setTimeout(r, 20));
    expect(h.passes).toEqual([1]);
    // Poked while the first pass runs: one more pass follows it.
    h.auto.poke();
    h.auto.poke();
    h.release();
    await h.auto.settled();
    expect(h.passes).toEqual([1, 2]);
    expect(h.reports).toEqual([
      { at: 42, ...freed },
      { at: 42, ...freed },
    ]);
  });

  it('does nothing when the policy is not automatic or another tab holds the lock', async () => {
    const off = harness({ policy: async () => ({ ...DEFAULT_RETENTION, automatic: false }) });
    off.auto.poke();
    await off.auto.settled();
    expect(off.passes).toEqual([]);

    const locks = memoryLocks();
    let held!: () => void;
    void locks.withLock('hearth-retention', () => new Promise<void>((r) => (held = r)));
    const busy = harness({ locks });
    busy.auto.poke();
    await busy.auto.settled();
    expect(busy.passes).toEqual([]);
    held();
  });

  it('remembers a failed pass with its error', async () => {
    const h = harness({
      prune: async () => {
        throw new Error('disk gone');
      },
    });
    h.auto.poke();
    await h.auto.settled();
    expect(h.reports).toHaveLength(1);
    expect(h.reports[0]).toMatchObject({ runs: 0, failed: 1, error: { code: 'storage.failed' } });
    expect(h.reports[0]!.error!.message).toContain('disk gone');
  });
});
