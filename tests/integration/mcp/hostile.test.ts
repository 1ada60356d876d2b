import { afterEach, describe, expect, it } from 'vitest';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import type { JsonObject } from '$lib/domain/json';
import type { McpTarget } from '$lib/ports/mcp';
import {
  startHostileMcpServer,
  type HostileBehaviour,
  type HostileMcpServer,
} from '../../support/hostile-mcp-server';

/**
 * The connector against servers that misbehave on purpose (tests/support/hostile-mcp-server.ts):
 * each failure is a clear, coded error, nothing hangs, nothing half-arrives. Waits are shortened
 * (the real limits are 30, 120 and 60 s) so a hang shows as a timeout here in well under a second.
 */
const limits = { connectMs: 1_000, listMs: 1_000, callMs: 500 };
let server: HostileMcpServer | null = null;
let connector: SdkMcpConnector;

afterEach(async () => {
  await connector?.forget(ID);
  await server?.close();
  server = null;
});

const ID = '33333333-3333-4333-8333-333333333333';
async function against(
  behaviour: HostileBehaviour,
  extra: Parameters<typeof startHostileMcpServer>[0] = { behaviour },
) {
  server = await startHostileMcpServer({ ...extra, behaviour });
  connector = new SdkMcpConnector(fetch, limits);
  const target: McpTarget = { id: ID, endpoint: server.url, headers: [], protocolVersion: 'auto' };
  return target;
}
const signal = () => new AbortController().signal;
// `against` makes the connector: read it after.
async function discoverOn(behaviour: HostileBehaviour) {
  const target = await against(behaviour);
  return connector.discover(target, signal());
}
async function callOn(behaviour: HostileBehaviour, tool: string, args: JsonObject) {
  const target = await against(behaviour);
  return connector.call(target, tool, args, signal());
}

describe('discovery refuses what is too much or not MCP', () => {
  it('600 tools: more than 512, and nothing is kept', async () => {
    const found = await discoverOn('many-tools');
    expect(found).toMatchObject({
      ok: false,
      error: { code: 'mcp.catalog_too_large', message: expect.stringContaining('512') },
    });
  });

  it('a 300 KB schema: one tool over 256 KiB', async () => {
    const found = await discoverOn('huge-schema');
    expect(found).toMatchObject({
      ok: false,
      error: { code: 'mcp.catalog_too_large', message: expect.stringContaining('256 KiB') },
    });
  });

  it('truncated JSON is not an MCP message', async () => {
    const found = await discoverOn('invalid-json');
    expect(found).toMatchObject({ ok: false, error: { code: 'mcp.invalid_response' } });
  });

  it('answers for another request id: a timeout, not a hang', async () => {
    const found = await discoverOn('wrong-id');
    expect(found).toMatchObject({ ok: false, error: { code: 'mcp.timeout' } });
  });

  it('an unsupported protocol version is named', async () => {
    const found = await discoverOn('unsupported-version');
    expect(found).toMatchObject({
      ok: false,
      error: { code: 'mcp.protocol_unsupported', message: expect.stringContaining('1999-01-01') },
    });
  });

  it('a server that wants credentials asks to sign in; with the header it answers', async () => {
    const requireHeader = { name: 'X-Api-Key', value: 'secret-123' };
    const target = await against('ok', { behaviour: 'ok', requireHeader });
    expect(await connector.discover(target, signal())).toMatchObject({
      ok: false,
      error: { code: 'mcp.auth_required', status: 401 },
    });
    const found = await connector.discover(
      { ...target, id: '44444444-4444-4444-8444-444444444444', headers: [requireHeader] },
      signal(),
    );
    expect(found.ok && found.value.tools.map((t) => t.name)).toEqual(['echo', 'add']);
    await connector.forget('44444444-4444-4444-8444-444444444444');
  });

  it('405 on GET is fine: Hearth opens no event stream', async () => {
    const target = await against('get-405');
    expect((await connector.discover(target, signal())).ok).toBe(true);
    expect(server!.requests.filter((r) => r.method === 'GET')).toEqual([]);
  });

  it('follows pagination across pages', async () => {
    const target = await against('ok', { behaviour: 'ok', pageSize: 1 });
    const found = await connector.discover(target, signal());
    expect(found.ok && found.value.tools.map((t) => t.name)).toEqual(['echo', 'add']);
  });
});

describe('calls end in one of the outcomes of tools.md §15.3', () => {
  it('a 5 MB answer is not read', async () => {
    const outcome = await callOn('huge-response', 'echo', { message: 'x' });
    expect(outcome).toMatchObject({ kind: 'unsupported', message: expect.stringContaining('larger than') });
  });

  it('no answer before the limit: the outcome is unknown, never repeated', async () => {
    const target = await against('hang-before-response');
    expect(await connector.call(target, 'echo', { message: 'x' }, signal())).toMatchObject({
      kind: 'unknown',
      reason: 'timeout',
    });
    expect(
      server!.requests.filter((r) => (r.body as { method?: string } | null)?.method === 'tools/call'),
    ).toHaveLength(1);
  });

  it('headers then silence: unknown too', async () => {
    const target = await against('hang-after-headers');
    expect(await connector.call(target, 'echo', { message: 'x' }, signal())).toMatchObject({
      kind: 'unknown',
    });
  });

  it('stopped after sending: unknown (cancelled)', async () => {
    const target = await against('hang-before-response');
    const stop = new AbortController();
    const calling = connector.call(target, 'echo', { message: 'x' }, stop.signal);
    await server!.callReceived();
    stop.abort();
    expect(await calling).toMatchObject({ kind: 'unknown', reason: 'cancelled' });
  });

  it("the tool's own error and a JSON-RPC error are answers", async () => {
    expect(await callOn('tool-error', 'echo', {})).toMatchObject({
      kind: 'result',
      result: { isError: true, content: [{ type: 'text', text: 'it broke' }] },
    });
    await connector.forget(ID);
    await server!.close();
    expect(await callOn('server-error', 'echo', {})).toMatchObject({
      kind: 'server_error',
      error: { code: -32001, message: 'nope', data: { why: 'testing' } },
    });
  });

  it('a lost session: the call is not sent, and the next one connects again', async () => {
    const target = await against('drop-session');
    const first = await connector.call(target, 'echo', { message: 'x' }, signal());
    expect(first).toMatchObject({ kind: 'not_sent', error: { code: 'mcp.http_error', status: 404 } });
    const initializes = () =>
      server!.requests.filter((r) => (r.body as { method?: string } | null)?.method === 'initialize').length;
    expect(initializes()).toBe(1);
    await connector.call(target, 'echo', { message: 'x' }, signal());
    expect(initializes()).toBe(2);
  });

  it('arguments over 256 KiB are not sent', async () => {
    const target = await against('ok');
    const outcome = await connector.call(target, 'echo', { message: 'x'.repeat(300_000) }, signal());
    expect(outcome).toMatchObject({ kind: 'not_sent', error: { code: 'mcp.arguments_too_large' } });
    expect(
      server!.requests.some((r) => (r.body as { method?: string } | null)?.method === 'tools/call'),
    ).toBe(false);
  });

  it('an unreachable server is named, with what a server must allow from a browser', async () => {
    const target = await against('ok');
    await server!.close();
    server = null;
    const outcome = await connector.call(target, 'echo', {}, signal());
    expect(outcome).toMatchObject({ kind: 'not_sent', error: { code: 'mcp.unreachable' } });
    expect(outcome.kind === 'not_sent' && outcome.error.message).toContain(
      'Mcp-Session-Id, MCP-Protocol-Version',
    );
  });
});

describe('a run that calls several tools', () => {
  it('stopping it later cancels nothing that already ended', async () => {
    const target = await against('ok');
    const run = new AbortController();
    for (let i = 0; i < 5; i++) {
      expect(await connector.call(target, 'echo', { message: `m${i}` }, run.signal)).toMatchObject({
        kind: 'result',
      });
    }
    run.abort();
    await new Promise((r) => setTimeout(r, 100));
    const cancellations = server!.requests.filter(
      (r) => (r.body as { method?: string } | null)?.method === 'notifications/cancelled',
    );
    expect(cancellations).toHaveLength(0);
  });
});
