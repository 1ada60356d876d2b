import { afterEach, describe, expect, it } from 'vitest';
import {
  startHostileMcpServer,
  type HostileMcpServer,
  type HostileMcpServerOptions,
} from '../../support/hostile-mcp-server';

const started: HostileMcpServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function start(options: HostileMcpServerOptions): Promise<HostileMcpServer> {
  const server = await startHostileMcpServer(options);
  started.push(server);
  return server;
}

let nextId = 1;

function post(
  server: HostileMcpServer,
  message: object,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(server.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...init.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    signal: init.signal,
  });
}

const request = (method: string, params?: object) => ({
  id: nextId++,
  method,
  ...(params ? { params } : {}),
});

async function rpc(
  server: HostileMcpServer,
  method: string,
  params?: object,
  headers?: Record<string, string>,
) {
  const message = request(method, params);
  const res = await post(server, message, { headers });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { id: unknown; result?: Record<string, unknown>; error?: object };
  return { res, body, id: message.id };
}

const initialize = (protocolVersion = '2025-06-18') =>
  ({ protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '0' } }) as const;

const corsHeaderNames = (res: Response) =>
  [...res.headers.keys()].filter((k) => k.startsWith('access-control-'));

describe('ok', () => {
  it('initializes, pages tools/list by cursor and calls echo', async () => {
    const server = await start({
      behaviour: 'ok',
      pageSize: 1,
      tools: [
        { name: 'echo', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } },
        { name: 'other', description: 'Another.' },
      ],
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    const init = await rpc(server, 'initialize', initialize());
    expect(init.res.headers.get('content-type')).toBe('application/json');
    expect(init.res.headers.get('access-control-allow-origin')).toBe('*');
    const session = init.res.headers.get('mcp-session-id')!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect(init.body).toEqual({
      jsonrpc: '2.0',
      id: init.id,
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'hostile', version: '1.0.0' },
      },
    });

    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    const initialized = await post(server, { method: 'notifications/initialized' }, { headers });
    expect(initialized.status).toBe(202);
    expect(await initialized.text()).toBe('');

    const first = await rpc(server, 'tools/list', {}, headers);
    expect(first.body.result).toEqual({
      tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } }],
      nextCursor: expect.any(String),
    });
    const second = await rpc(server, 'tools/list', { cursor: first.body.result!.nextCursor }, headers);
    expect(second.body.result).toEqual({
      tools: [{ name: 'other', description: 'Another.', inputSchema: { type: 'object', properties: {} } }],
    });

    const call = await rpc(server, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }, headers);
    expect(call.body).toEqual({
      jsonrpc: '2.0',
      id: call.id,
      result: { content: [{ type: 'text', text: 'Echo: hi' }] },
    });

    expect(server.requests.map((r) => (r.body as { method?: string }).method)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
      'tools/list',
      'tools/call',
    ]);
    expect(server.requests[2]).toMatchObject({
      method: 'POST',
      path: '/mcp',
      headers: { 'mcp-session-id': session },
    });
  });

  it('negotiates the protocol version, adds with structuredContent and rejects unknown methods', async () => {
    const server = await start({ behaviour: 'ok' });
    expect((await rpc(server, 'initialize', initialize('2024-11-05'))).body.result).toMatchObject({
      protocolVersion: '2024-11-05',
    });
    expect((await rpc(server, 'initialize', initialize('2030-01-01'))).body.result).toMatchObject({
      protocolVersion: '2025-06-18',
    });
    expect((await rpc(server, 'tools/call', { name: 'add', arguments: { a: 2, b: 3 } })).body.result).toEqual(
      {
        content: [{ type: 'text', text: '5' }],
        structuredContent: { sum: 5 },
      },
    );
    expect((await rpc(server, 'resources/list')).body.error).toMatchObject({ code: -32601 });
  });

  it('answers as a single-event stream with sse', async () => {
    const server = await start({ behaviour: 'ok', sse: true });
    const res = await post(server, { id: 7, method: 'ping' });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toBe('event: message\ndata: {"jsonrpc":"2.0","id":7,"result":{}}\n\n');
  });

  it('answers the preflight, GET and DELETE', async () => {
    const server = await start({ behaviour: 'ok', requireHeader: { name: 'X-Key', value: 'k' } });
    const preflight = await fetch(server.url, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe(
      'Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, X-Key',
    );
    expect(preflight.headers.get('access-control-expose-headers')).toBe(
      'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate',
    );
    const denied = await post(server, request('initialize', initialize()));
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toBe('Bearer');
    const get = await fetch(server.url, { headers: { 'x-key': 'k' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('access-control-allow-origin')).toBe('*');
    expect((await fetch(server.url, { method: 'DELETE', headers: { 'x-key': 'k' } })).status).toBe(200);
  });
});

describe('hostile behaviours', () => {
  it('many-tools: 600 tools over pages of 100', async () => {
    const server = await start({ behaviour: 'many-tools' });
    const names: string[] = [];
    let cursor: unknown;
    let pages = 0;
    do {
      const { body } = await rpc(server, 'tools/list', cursor === undefined ? {} : { cursor });
      const result = body.result as { tools: { name: string }[]; nextCursor?: string };
      expect(result.tools.length).toBe(100);
      names.push(...result.tools.map((t) => t.name));
      cursor = result.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(6);
    expect(names).toEqual(Array.from({ length: 600 }, (_, i) => `tool_${String(i).padStart(3, '0')}`));
  });

  it('huge-schema: one tool with ~300 KB of inputSchema', async () => {
    const server = await start({ behaviour: 'huge-schema' });
    const { body } = await rpc(server, 'tools/list');
    const tools = (body.result as { tools: { inputSchema: object }[] }).tools;
    expect(tools.length).toBe(1);
    expect(JSON.stringify(tools[0]!.inputSchema).length).toBeGreaterThan(280_000);
  });

  it('huge-response: a tools/call body over 5 MB', async () => {
    const server = await start({ behaviour: 'huge-response' });
    const res = await post(server, request('tools/call', { name: 'echo', arguments: { message: 'hi' } }));
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(5_000_000);
  });

  it('no-cors: no Access-Control-* header, not even on the preflight', async () => {
    const server = await start({ behaviour: 'no-cors' });
    const preflight = await fetch(server.url, {
      method: 'OPTIONS',
      headers: { origin: 'http://example.test', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(corsHeaderNames(preflight)).toEqual([]);
    const init = await post(server, request('initialize', initialize()));
    expect(init.status).toBe(200);
    expect(corsHeaderNames(init)).toEqual([]);
  });

  it('get-405: GET without CORS headers, POST with them', async () => {
    const server = await start({ behaviour: 'get-405' });
    const get = await fetch(server.url);
    expect(get.status).toBe(405);
    expect(corsHeaderNames(get)).toEqual([]);
    const init = await post(server, request('initialize', initialize()));
    expect(init.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('invalid-json: a body that does not parse', async () => {
    const server = await start({ behaviour: 'invalid-json' });
    const res = await post(server, request('initialize', initialize()));
    expect(res.headers.get('content-type')).toBe('application/json');
    const text = await res.text();
    expect(() => JSON.parse(text) as unknown).toThrow(SyntaxError);
  });

  it('wrong-id, unsupported-version, tool-error and server-error', async () => {
    const wrong = await rpc(await start({ behaviour: 'wrong-id' }), 'initialize', initialize());
    expect(wrong.body.id).not.toBe(wrong.id);
    const old = await rpc(await start({ behaviour: 'unsupported-version' }), 'initialize', initialize());
    expect(old.body.result).toMatchObject({ protocolVersion: '1999-01-01' });
    const call = { name: 'echo', arguments: { message: 'hi' } };
    expect((await rpc(await start({ behaviour: 'tool-error' }), 'tools/call', call)).body.result).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'it broke' }],
    });
    expect((await rpc(await start({ behaviour: 'server-error' }), 'tools/call', call)).body.error).toEqual({
      code: -32001,
      message: 'nope',
      data: { why: 'testing' },
    });
  });

  it('drop-session: the first session is lost after the handshake, a new one works', async () => {
    const server = await start({ behaviour: 'drop-session' });
    const first = (await rpc(server, 'initialize', initialize())).res.headers.get('mcp-session-id')!;
    const headers = { 'mcp-session-id': first };
    expect((await post(server, { method: 'notifications/initialized' }, { headers })).status).toBe(202);
    expect((await post(server, request('tools/list'), { headers })).status).toBe(404);
    const second = (await rpc(server, 'initialize', initialize())).res.headers.get('mcp-session-id')!;
    expect(second).not.toBe(first);
    await rpc(server, 'tools/list', {}, { 'mcp-session-id': second });
  });

  it('hang-before-response: the call arrives, and close() does not wait for it', async () => {
    const server = await start({ behaviour: 'hang-before-response' });
    const aborter = new AbortController();
    const pending = post(server, request('tools/call', { name: 'echo', arguments: { message: 'hi' } }), {
      signal: aborter.signal,
    });
    await server.callReceived();
    aborter.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    await server.close();
  });

  it('hang-before-response: close() ends a request still waiting', async () => {
    const server = await start({ behaviour: 'hang-before-response' });
    const pending = post(server, request('tools/call', { name: 'echo', arguments: { message: 'hi' } }));
    await server.callReceived();
    await server.close();
    await expect(pending).rejects.toThrow();
  });

  it('hang-after-headers: event-stream headers, then nothing until close()', async () => {
    const server = await start({ behaviour: 'hang-after-headers' });
    const res = await post(server, request('tools/call', { name: 'echo', arguments: { message: 'hi' } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const body = res.text();
    await server.close();
    await expect(body).rejects.toThrow();
  });
});
