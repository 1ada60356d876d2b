import { describe, expect, it } from 'vitest';
import { SettledCallsRpc, type SettledCall } from '$lib/client/settled-calls';
import type { Endpoint } from '$lib/worker/rpc';

/** An endpoint whose other side never answers; it records what the client posts. */
function silentEndpoint() {
  const posted: { t: string; id: number }[] = [];
  const endpoint = {
    postMessage: (m: { t: string; id: number }) => posted.push(m),
    addEventListener: () => {},
    removeEventListener: () => {},
  } as unknown as Endpoint;
  return { endpoint, posted };
}

type Streams = { 'work.silent': (p: void) => number };

describe('the page client that tells when calls settle', () => {
  it('leaving a stream that sends nothing cancels it at once and reports it settled', async () => {
    const { endpoint, posted } = silentEndpoint();
    const rpc = new SettledCallsRpc<Record<never, never>, Streams>(endpoint);
    const settled: SettledCall[] = [];
    rpc.subscribe((c) => settled.push(c));
    const it = rpc.stream('work.silent', undefined)[Symbol.asyncIterator]();
    const pending = it.next();
    // Stop while next() waits: the cancel must reach the other side now, not when the stream ends.
    await it.return!();
    expect(posted.map((m) => m.t)).toEqual(['stream', 'cancel']);
    expect(settled).toEqual([{ method: 'work.silent', ok: false }]);
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
  });
});
