import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import type { McpTarget } from '$lib/ports/mcp';
import { startEverythingServer, type EverythingServer } from '../../support/mcp-everything';

/** The connector against the reference server, started on 127.0.0.1 by the test. */
let server: EverythingServer;
let target: McpTarget;
const connector = new SdkMcpConnector();
const signal = () => new AbortController().signal;

beforeAll(async () => {
  server = await startEverythingServer();
  target = {
    id: '11111111-1111-4111-8111-111111111111',
    endpoint: server.url,
    headers: [],
    protocolVersion: 'auto',
  };
}, 30_000);
afterAll(async () => {
  await connector.forget(target.id);
  await server.close();
});

describe('server-everything', () => {
  it('discovers its tools with their schemas and annotations', async () => {
    const found = await connector.discover(target, signal());
    if (!found.ok) throw new Error(found.error.message);
    const names = found.value.tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'get-structured-content']),
    );
    const echo = found.value.tools.find((t) => t.name === 'echo')!;
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(found.value.server.name).toBe('mcp-servers/everything');
    expect(found.value.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('calls echo and get-sum, and answers a JSON-RPC error for a tool it does not have', async () => {
    expect(await connector.call(target, 'echo', { message: 'hi there' }, signal())).toEqual({
      kind: 'result',
      result: {
        content: [{ type: 'text', text: 'Echo: hi there' }],
        structuredContent: undefined,
        isError: false,
      },
    });
    const sum = await connector.call(target, 'get-sum', { a: 2, b: 40 }, signal());
    expect(sum.kind === 'result' && JSON.stringify(sum.result.content)).toContain('42');
    const missing = await connector.call(target, 'no-such-tool', {}, signal());
    expect(missing.kind === 'server_error' || (missing.kind === 'result' && missing.result.isError)).toBe(
      true,
    );
  });

  it('pins a protocol version when the registration asks for one', async () => {
    const pinned = {
      ...target,
      id: '22222222-2222-4222-8222-222222222222',
      protocolVersion: '2025-03-26' as const,
    };
    const found = await connector.discover(pinned, signal());
    expect(found.ok && found.value.protocolVersion).toBe('2025-03-26');
    await connector.forget(pinned.id);
  });
});
