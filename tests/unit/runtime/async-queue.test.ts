import { describe, expect, it } from 'vitest';
import { AsyncQueue } from '$lib/runtime/run-feed';

describe('AsyncQueue', () => {
  it('hands over what was pushed, in order, until closed', async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    q.push(2);
    setTimeout(() => {
      q.push(3);
      q.close();
    }, 1);
    const got: number[] = [];
    for await (const n of q) got.push(n);
    expect(got).toEqual([1, 2, 3]);
  });

  it('a consumer leaving a quiet queue is let go at once, and its pending read ends', async () => {
    let left = 0;
    const q = new AsyncQueue<number>(() => left++);
    const it = q[Symbol.asyncIterator]();
    const pending = it.next();
    await new Promise((r) => setTimeout(r, 1));
    await it.return!();
    expect(left).toBe(1);
    expect(await pending).toEqual({ value: undefined, done: true });
    // Nothing is taken after leaving, and leaving twice lets go once.
    q.push(1);
    expect(await it.next()).toEqual({ value: undefined, done: true });
    await it.return!();
    expect(left).toBe(1);
  });

  it('throws a failure after the items queued before it; a closed queue never calls onLeave', async () => {
    let left = 0;
    const q = new AsyncQueue<number>(() => left++);
    q.push(1);
    q.fail(new Error('broken'));
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const n of q) got.push(n);
      })(),
    ).rejects.toThrow('broken');
    expect(got).toEqual([1]);
    expect(left).toBe(0);
  });
});
