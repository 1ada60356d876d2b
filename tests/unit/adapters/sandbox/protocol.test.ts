import { describe, expect, it } from 'vitest';
import { readFromSandbox } from '$lib/adapters/sandbox/protocol';

/** What a sandbox posts comes from a thread that runs untrusted code: only well-formed messages pass. */
describe('readFromSandbox', () => {
  const bytes = new Uint8Array([1, 2]);
  const done = (changes: unknown, extra: object = {}) => ({
    type: 'done',
    id: 3,
    outcome: { kind: 'exited', exitCode: 0, stdout: '', stderr: '', outputTruncated: false },
    changes,
    retire: false,
    ...extra,
  });

  it('passes the messages of the protocol, as fresh plain values', () => {
    expect(
      readFromSandbox(
        done([
          { path: 'work/a.txt', bytes },
          { path: 'work/b', bytes: null },
        ]),
      ),
    ).toEqual(
      done([
        { path: 'work/a.txt', bytes },
        { path: 'work/b', bytes: null },
      ]),
    );
    expect(readFromSandbox({ type: 'need', engine: 'python' })).toEqual({ type: 'need', engine: 'python' });
    expect(readFromSandbox({ type: 'waiting', engine: 'python' })).toEqual({
      type: 'waiting',
      engine: 'python',
    });
    expect(
      readFromSandbox({ type: 'builtin', id: 1, requestId: 2, name: 'dice.roll', args: { formula: 'd6' } }),
    ).toEqual({ type: 'builtin', id: 1, requestId: 2, name: 'dice.roll', args: { formula: 'd6' } });
    const call = { serverId: 's', tool: 'echo', arguments: { message: 'hi' }, timeoutMs: 2000 };
    expect(readFromSandbox({ type: 'mcp', id: 1, requestId: 2, call })).toEqual({
      type: 'mcp',
      id: 1,
      requestId: 2,
      call,
    });
  });

  it('refuses changes to paths the workspace path parser does not keep as they are', () => {
    for (const path of ['../outside', 'work/../../x', '/etc/passwd', 'work//a', 'C:/x', 'work/a\0b', '']) {
      expect(readFromSandbox(done([{ path, bytes }])), path).toBeNull();
    }
  });

  it('refuses forged or malformed messages', () => {
    const forged: unknown[] = [
      null,
      'done',
      [],
      { type: 'spawn', id: 1, source: 'x' },
      { type: 'need', engine: 'shell' },
      { type: 'waiting', engine: 'shell' },
      { type: 'builtin', id: 1, requestId: 2, name: 'x', args: [] },
      { type: 'changes', id: '1', changes: [] },
      { type: 'mcp', id: 1, requestId: 2, call: { serverId: 's', tool: 'echo', arguments: [] } },
      { type: 'mcp', id: 1, requestId: 2, call: { serverId: 's', arguments: {} } },
      {
        type: 'mcp',
        id: 1,
        requestId: 2,
        call: { serverId: 's', tool: 'e', arguments: {}, timeoutMs: 30_000 },
      },
      done([{ path: 'work/a', bytes: [1, 2] }]),
      done([{ path: 'work/a', bytes: 'text' }]),
      done([], {
        outcome: { kind: 'exited', exitCode: 1.5, stdout: '', stderr: '', outputTruncated: false },
      }),
      done([], { outcome: { kind: 'cancelled' } }),
      done([], { retire: 'no' }),
    ];
    for (const message of forged) expect(readFromSandbox(message), JSON.stringify(message)).toBeNull();
  });

  it('keeps only the fields it knows', () => {
    const read = readFromSandbox({ type: 'loaded', engine: 'jq', __proto__: { polluted: true }, extra: 1 });
    expect(read).toEqual({ type: 'loaded', engine: 'jq' });
    expect(Object.keys(read!)).toEqual(['type', 'engine']);
  });
});
