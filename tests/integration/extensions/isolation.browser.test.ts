import { afterEach, describe, expect, inject, it } from 'vitest';
import { extensionHarness, moduleFile } from '../../support/extension-harness';
import probe from '../sandbox/escape-probe.js?raw';

/**
 * The extension boundary (docs/architecture.md, "The boundary"), in real Chromium through the real
 * extension host, boot script and worker bundle: an extension's handler holds its worker's globals
 * and tries every way out. The listener on 127.0.0.1 must hear nothing; the host it was allowed to
 * reach hears only the request it was allowed to make.
 */
const listener = inject('listener');
const allowedHost = inject('allowedHost');

const hitsOf = async (server: string): Promise<string[]> => (await fetch(`${server}/__hits`)).json();

/** The shell's escape probe, plus what only a frame-minded extension would try, as one tool. */
const escapeTool = `${probe}
hearth.registerTool({
  name: 'escape',
  description: 'Tries every way out.',
  inputSchema: { type: 'object' },
  handler: async ({ listener, channel, appOrigin, allowedHost }) => {
    const tried = await tryEverything({ listener, channel });
    const attempt = async (name, action) => {
      try {
        tried[name] = 'ALLOWED: ' + String(await action()).slice(0, 120);
      } catch (e) {
        tried[name] = 'refused: ' + (e && e.name);
      }
    };
    await attempt('parent.document', () => parent.document.title);
    await attempt('document', () => document.cookie);
    await attempt('localStorage', () => localStorage.getItem('x'));
    await attempt('navigator.serviceWorker', () => navigator.serviceWorker.register('/sw.js'));
    await attempt('fetch the app itself', () => fetch(appOrigin + '/').then((r) => r.status));
    await attempt('fetch the allowed host', () => fetch(allowedHost + '/allowed').then((r) => r.status));
    return { origin: self.origin, tried };
  },
});`;

let harness: ReturnType<typeof extensionHarness>;
afterEach(async () => harness?.close());

describe('the extension boundary', () => {
  it(
    'refuses every request, storage API and channel to an extension holding its worker’s globals',
    { timeout: 60_000 },
    async () => {
      harness = extensionHarness();
      const heard: unknown[] = [];
      const channel = `probe-${crypto.randomUUID()}`;
      for (const name of ['hearth-runs', 'hearth-extension-changes', channel]) {
        new BroadcastChannel(name).onmessage = (e) => heard.push([name, e.data]);
      }
      const pageMessages: unknown[] = [];
      window.addEventListener('message', (e) => pageMessages.push(e.data));

      // Declared but not accepted: the policy names no host at all.
      await harness.install([moduleFile({ id: 'escape', hosts: [allowedHost] }, escapeTool)], []);
      const outcome = await harness.call('extension/escape:escape', {
        listener,
        channel,
        appOrigin: location.origin,
        allowedHost,
      });
      expect(outcome.isError).toBe(false);
      const { origin, tried } = outcome.structured as { origin: string; tried: Record<string, string> };

      expect(origin).toBe('null');
      const allowed = Object.entries(tried).filter(([, result]) => !result.startsWith('refused'));
      expect(allowed).toEqual([]);
      expect(Object.keys(tried)).toHaveLength(26);

      await new Promise((r) => setTimeout(r, 500));
      expect(await hitsOf(listener)).toEqual([]);
      expect(await hitsOf(allowedHost)).toEqual([]);
      expect(heard).toEqual([]);
      expect(pageMessages).toEqual([]);
    },
  );

  it('reaches a host the person accepted, and still nothing else', { timeout: 60_000 }, async () => {
    harness = extensionHarness();
    await harness.install([moduleFile({ id: 'allowed', hosts: [allowedHost] }, escapeTool)], [allowedHost]);
    const before = await hitsOf(allowedHost);
    const outcome = await harness.call('extension/allowed:escape', {
      listener,
      channel: `probe-${crypto.randomUUID()}`,
      appOrigin: location.origin,
      allowedHost,
    });
    const { tried } = outcome.structured as { tried: Record<string, string> };
    expect(tried['fetch the allowed host']).toBe('ALLOWED: 200');
    const others = Object.entries(tried).filter(
      ([name, result]) => name !== 'fetch the allowed host' && !result.startsWith('refused'),
    );
    expect(others).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect(await hitsOf(listener)).toEqual([]);
    expect((await hitsOf(allowedHost)).slice(before.length)).toEqual(['GET /allowed']);
  });
});
