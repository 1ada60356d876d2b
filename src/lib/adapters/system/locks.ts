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
  withLock: (name, fn) => locks.request(name, () => fn()),
});

/** The same contract within one process (Node tests): a FIFO queue of waiters per name. */
export function memoryLocks(): Locks {
  const tails = new Map<string, Promise<void>>();
  const held = new Set<string>();
  async function withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = tails.get(name) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => mine);
    tails.set(name, tail);
    await previous;
    held.add(name);
    try {
      return await fn();
    } finally {
      held.delete(name);
      release();
      if (tails.get(name) === tail) tails.delete(name);
    }
  }
  return {
    async tryWithLock(name, fn) {
      if (held.has(name) || tails.has(name)) return { acquired: false };
      return { acquired: true, value: await withLock(name, fn) };
    },
    withLock,
  };
}
