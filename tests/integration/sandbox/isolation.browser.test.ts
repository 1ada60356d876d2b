import { describe, expect, inject, it } from 'vitest';
import { SandboxHost, type FromSandboxHost } from '$lib/adapters/sandbox/sandbox-host';
import { startSandboxHost } from '$lib/client/sandbox-host';
import probe from './escape-probe.js?raw';

/**
 * The boundary itself (docs/architecture.md, "The boundary"): a worker started by the real sandbox
 * host runs the real boot script, which hands it code that already holds the worker's global object
 * and tries every way out. The listener on 127.0.0.1 (tests/support/listener.ts) must hear
 * nothing, no storage may open, and the app's channels must stay silent.
 */
const listener = inject('listener');

describe('the sandbox boundary', () => {
  it(
    'refuses every request and every storage API to code holding the worker’s globals',
    { timeout: 60_000 },
    async () => {
      const hostPort = startSandboxHost(document);
      const fromHost: FromSandboxHost[] = [];
      const host = new SandboxHost(Promise.resolve(hostPort));
      const process = await host.spawn();
      hostPort.addEventListener('message', (e) => fromHost.push(e.data));

      const channel = `probe-${crypto.randomUUID()}`;
      const heard: unknown[] = [];
      for (const name of ['hearth-runs', channel]) {
        new BroadcastChannel(name).onmessage = (e) => heard.push([name, e.data]);
      }

      const report = new Promise<{ origin: string; tried: Record<string, string> }>((resolve, reject) => {
        process.port.onmessage = ({ data }) => {
          if (data.type === 'unprotected') reject(new Error(data.reason));
          else if (data.type === 'ready') process.port.postMessage({ listener, channel });
          else if (data.tried) resolve(data);
        };
      });
      process.port.postMessage({ type: 'boot', bundle: probe, connect: "'none'" });
      const { origin, tried } = await report;
      process.terminate();

      expect(origin).toBe('null');
      const allowed = Object.entries(tried).filter(([, outcome]) => !outcome.startsWith('refused'));
      expect(allowed).toEqual([]);
      expect(Object.keys(tried)).toHaveLength(20);

      // Give anything that slipped out time to arrive before asking the listener.
      await new Promise((r) => setTimeout(r, 500));
      const hits: string[] = await (await fetch(`${listener}/__hits`)).json();
      expect(hits).toEqual([]);
      expect(heard).toEqual([]);
      expect(fromHost).toEqual([]);
    },
  );

  it('a sandbox whose isolation is missing runs nothing and says why', async () => {
    // The same boot script, started the way the runtime would without the host's frame: from the
    // page itself, whose document sets no policy, as a same-origin blob: worker.
    const { default: boot } = await import('$lib/adapters/sandbox/boot.js?raw');
    const worker = new Worker(URL.createObjectURL(new Blob([boot], { type: 'text/javascript' })), {
      type: 'module',
    });
    const channel = new MessageChannel();
    worker.postMessage(channel.port2, [channel.port2]);
    const answer = new Promise<{ type: string; reason: string }>((resolve) => {
      channel.port1.onmessage = ({ data }) => resolve(data);
    });
    channel.port1.postMessage({
      type: 'boot',
      connect: "'none'",
      bundle: 'export function start(port) { port.postMessage({ type: "ran" }) }',
    });
    expect(await answer).toEqual({ type: 'unprotected', reason: expect.stringContaining('origin') });
    worker.terminate();
  });
});
