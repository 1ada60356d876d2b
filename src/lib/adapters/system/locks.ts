import type { Locks } from '$lib/ports/locks';

/** Web Locks: one holder per name across tabs and workers of this origin. */
export const webLocks = (locks: LockManager): Locks => ({
  async tryWithLock(name, fn) {
    let acquired = false;
    let value: Awaited<ReturnType<typeof fn>> | undefined;
    await locks.request(name, { ifAvailable: true }, async (lock) => {
      if (!lock) return;
      acquired = true;
      value = await fn();
    });
    return acquired
      ? { acquired: true, value: value as Awaited<ReturnType<typeof fn>> }
      : { acquired: false };
  },
});

/** The same contract within one process (Node tests). */
export function memoryLocks(): Locks {
  const held = new Set<string>();
  return {
    async tryWithLock(name, fn) {
      if (held.has(name)) return { acquired: false };
      held.add(name);
      try {
        return { acquired: true, value: await fn() };
      } finally {
        held.delete(name);
      }
    },
  };
}
