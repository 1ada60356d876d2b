import { afterEach, describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import { RpcClient, serveRpc, Transfer, type Endpoint } from '$lib/worker/rpc';

type Methods = {
  echo: (p: { text: string }) => string;
  fail: (p: void) => never;
  wait: (p: void) => string;
  bytes: (p: void) => Uint8Array;
};
type Streams = { count: (p: { to: number }) => number; forever: (p: void) => number };

const channels: MessageChannel[] = [];
afterEach(() => channels.splice(0).forEach((c) => (c.port1.close(), c.port2.close())));

/** MessagePorts stand in for the worker boundary; they expose `start` once listened to. */
function linked() {
  const channel = new MessageChannel();
  channels.push(channel);
  const ports = [channel.port1, channel.port2] as const;
  ports.forEach((p) => p.start());
  return ports as unknown as [Endpoint, Endpoint];
}

function setup() {
  const [clientSide, serverSide] = linked();
  const aborted: string[] = [];
  let streamsReturned = 0;
  const stop = serveRpc<Methods, Streams>(serverSide, {
    methods: {
      echo: async ({ text }) => text,
      fail: async () => {
        throw new HearthFailure({ code: 'agent.not_found', message: 'nope' });
      },
      wait: (_p, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => (aborted.push('wait'), resolve('late'))),
        ),
      bytes: async () => {
        const b = new Uint8Array([1, 2, 3]);
        return new Transfer(b, [b.buffer]);
      },
    },
    streams: {
      async *count({ to }) {
        for (let i = 1; i <= to; i++) yield i;
      },
      async *forever(_p, signal) {
        try {
          for (let i = 0; !signal.aborted; i++) {
            yield i;
            await new Promise((r) => setTimeout(r, 5));
          }
        } finally {
          streamsReturned++;
        }
      },
    },
  });
  return {
    client: new RpcClient<Methods, Streams>(clientSide),
    stop,
    aborted,
    returned: () => streamsReturned,
  };
}

describe('RPC between page and worker', () => {
  it('returns results and transfers bytes', async () => {
    const { client } = setup();
    expect(await client.call('echo', { text: 'hi' })).toBe('hi');
    expect([...(await client.call('bytes', undefined))]).toEqual([1, 2, 3]);
  });

  it('rejects with the coded error the handler raised', async () => {
    const { client } = setup();
    await expect(client.call('fail', undefined)).rejects.toMatchObject({
      code: 'agent.not_found',
      message: 'nope',
    });
  });

  it('settles a cancelled call at once and aborts the handler', async () => {
    const { client, aborted } = setup();
    const controller = new AbortController();
    const pending = client.call('wait', undefined, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'rpc.cancelled' });
    await expect.poll(() => aborted).toEqual(['wait']);
  });

  it('fails every pending call and stream when closed', async () => {
    const { client } = setup();
    const pending = client.call('wait', undefined);
    const iterator = client.stream('forever', undefined)[Symbol.asyncIterator]();
    await iterator.next();
    client.close();
    await expect(pending).rejects.toMatchObject({ code: 'rpc.closed' });
    await expect(drain(iterator)).rejects.toMatchObject({ code: 'rpc.closed' });
    await expect(client.call('echo', { text: 'x' })).rejects.toMatchObject({ code: 'rpc.closed' });
  });

  it('streams items in order and ends', async () => {
    const { client } = setup();
    const items: number[] = [];
    for await (const n of client.stream('count', { to: 5 })) items.push(n);
    expect(items).toEqual([1, 2, 3, 4, 5]);
  });

  it('leaving a stream early stops the producer', async () => {
    const { client, returned } = setup();
    for await (const n of client.stream('forever', undefined)) if (n === 3) break;
    await expect.poll(returned).toBe(1);
  });

  it('answers an unknown method with rpc.unknown_method, never with a prototype property', async () => {
    const { client } = setup();
    const unsafe = client as unknown as RpcClient<{ toString: (p: void) => string }, Streams>;
    await expect(unsafe.call('toString', undefined)).rejects.toMatchObject({ code: 'rpc.unknown_method' });
  });
});

async function drain<T>(it: AsyncIterator<T>) {
  for (;;) if ((await it.next()).done) return;
}
