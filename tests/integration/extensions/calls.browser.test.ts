import { afterEach, describe, expect, it } from 'vitest';
import { extensionHarness, moduleFile } from '../../support/extension-harness';

/**
 * Calls through the real isolated workers (tools.md §14): what comes back for every way a handler
 * can misbehave, and that the extension (and the page) keep working afterwards.
 */
let harness: ReturnType<typeof extensionHarness>;
afterEach(async () => harness?.close());

const tool = (name: string, handler: string, extra = '') =>
  `hearth.registerTool({ name: ${JSON.stringify(name)}, description: 'A test tool.', inputSchema: { type: 'object' }, ${extra} handler: ${handler} });\n`;

const misbehaving = [
  tool('ok', 'async (args, context) => ({ echo: args, target: context.target, callId: context.callId })'),
  tool('loop', '() => { for (;;) {} }'),
  tool('never', '() => new Promise(() => {})'),
  tool('huge', "() => 'x'.repeat(20 * 1024 * 1024)"),
  tool(
    'throws',
    '({ kind }) => { throw ({ number: 42, null: null, undefined: undefined, string: "plain text", object: { why: "no" }, error: new RangeError("out of range") })[kind]; }',
  ),
  tool(
    'throwsWeird',
    '() => { throw { toString() { throw new Error("no"); }, toJSON() { throw new Error("no"); } }; }',
  ),
  tool('date', '() => new Date(0)'),
  tool('fn', '() => ({ f() {} })'),
  tool(
    'image',
    `async (args, context) => {
    const canvas = new OffscreenCanvas(4, 3);
    const g = canvas.getContext('2d');
    g.fillStyle = '#c00';
    g.fillRect(0, 0, 4, 3);
    context.attachImage(await canvas.convertToBlob({ type: 'image/png' }));
    if (args.fail) throw new Error('drawn, then failed');
    return 'a red rectangle';
  }`,
    'returnsImages: true,',
  ),
  tool(
    'forge',
    `async () => {
    // Every answer this worker sends is rewritten to claim another request's id.
    const send = MessagePort.prototype.postMessage;
    MessagePort.prototype.postMessage = function (message, transfer) {
      if (message && message.t === 'result') message.value = { ...message.value, requestId: 'someone-else' };
      return send.call(this, message, transfer);
    };
    self.postMessage({ t: 'result', id: 1, value: { ok: true, requestId: 'x', value: 'forged', images: [] } });
    return 'genuine';
  }`,
  ),
].join('');

describe('extension calls', () => {
  it('passes the call payload and returns plain JSON as content and structured', async () => {
    harness = extensionHarness();
    await harness.install([moduleFile({ id: 'calls' }, misbehaving)]);
    const outcome = await harness.call('extension/calls:ok', { a: [1, 'two'] });
    expect(outcome.isError).toBe(false);
    expect(outcome.structured).toEqual({
      echo: { a: [1, 'two'] },
      target: { kind: 'session', sessionId: 'session-1' },
      callId: 'call-1',
    });
    expect(JSON.parse(outcome.content)).toEqual(outcome.structured);
  });

  it(
    'ends a handler that never stops: the call times out, the page keeps running, the next call works',
    { timeout: 30_000 },
    async () => {
      harness = extensionHarness();
      await harness.install([moduleFile({ id: 'calls', timeoutSeconds: 1 }, misbehaving)]);
      let ticks = 0;
      const ticking = setInterval(() => ticks++, 20);
      const looped = await harness.call('extension/calls:loop');
      clearInterval(ticking);
      expect(looped).toMatchObject({ isError: true, errorCode: 'extension.tool_timeout' });
      expect(looped.content).toContain('did not finish within 1 s');
      expect(ticks).toBeGreaterThan(0);
      const never = await harness.call('extension/calls:never');
      expect(never.errorCode).toBe('extension.tool_timeout');
      expect((await harness.call('extension/calls:ok')).isError).toBe(false);
    },
  );

  it(
    'stops a call when the run stops; a worker left spinning is restarted',
    { timeout: 30_000 },
    async () => {
      harness = extensionHarness();
      await harness.install([moduleFile({ id: 'calls' }, misbehaving)]);
      for (const name of ['never', 'loop']) {
        const stop = new AbortController();
        const call = harness.call(`extension/calls:${name}`, {}, stop.signal);
        setTimeout(() => stop.abort(), 200);
        expect(await call).toMatchObject({ isError: true, errorCode: 'agent.cancelled' });
        // The next call works: the waiting handler did not block it, and the spinning worker was replaced.
        expect((await harness.call('extension/calls:ok')).isError).toBe(false);
      }
    },
  );

  it('refuses 20 MB of output and keeps working', async () => {
    harness = extensionHarness();
    await harness.install([moduleFile({ id: 'calls' }, misbehaving)]);
    const huge = await harness.call('extension/calls:huge');
    expect(huge).toMatchObject({ isError: true, errorCode: 'extension.result_too_large' });
    expect(huge.content).toContain('20,971,520 characters');
    expect((await harness.call('extension/calls:ok')).isError).toBe(false);
  });

  it('turns anything thrown into the error the model reads', async () => {
    harness = extensionHarness();
    await harness.install([moduleFile({ id: 'calls' }, misbehaving)]);
    const messages: Record<string, string> = {};
    for (const kind of ['number', 'null', 'undefined', 'string', 'object', 'error']) {
      const outcome = await harness.call('extension/calls:throws', { kind });
      expect(outcome).toMatchObject({ isError: true, errorCode: 'extension.tool_error' });
      messages[kind] = outcome.content;
    }
    expect(messages).toEqual({
      number: '42',
      null: 'null',
      undefined: 'undefined',
      string: 'plain text',
      object: '{"why":"no"}',
      error: 'out of range',
    });
    expect(await harness.call('extension/calls:throwsWeird')).toMatchObject({
      errorCode: 'extension.tool_error',
      content: 'an error that cannot be shown',
    });
    expect((await harness.call('extension/calls:date')).errorCode).toBe('extension.tool_error');
    expect((await harness.call('extension/calls:fn')).content).toContain('could not be sent back');
    expect((await harness.call('extension/calls:ok')).isError).toBe(false);
  });

  it('attaches images to a successful result only', async () => {
    harness = extensionHarness();
    await harness.install([moduleFile({ id: 'calls' }, misbehaving)]);
    const drawn = await harness.call('extension/calls:image');
    expect(drawn.content).toBe('a red rectangle');
    expect(drawn.images).toHaveLength(1);
    expect([...drawn.images[0]!.bytes.slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    const failed = await harness.call('extension/calls:image', { fail: true });
    expect(failed).toMatchObject({ isError: true, content: 'drawn, then failed', images: [] });
  });

  it('ignores receipts forged for another request, and from anyone else', async () => {
    harness = extensionHarness();
    await harness.install([moduleFile({ id: 'calls' }, misbehaving)]);
    await harness.install([
      moduleFile(
        { id: 'other' },
        tool('slow', "() => new Promise((r) => setTimeout(() => r('other genuine'), 300))"),
      ),
    ]);
    const other = harness.call('extension/other:slow');
    const forged = await harness.call('extension/calls:forge');
    expect(forged).toMatchObject({ isError: true, errorCode: 'extension.tool_error' });
    expect(forged.content).toContain('not its result');
    expect(await other).toMatchObject({ isError: false, content: 'other genuine' });
  });
});
