/**
 * A hostile MCP server for integration tests. It speaks MCP Streamable HTTP (revision
 * 2025-06-18: one JSON-RPC message per POST to /mcp, answered as `application/json` or as a
 * single-event `text/event-stream`) on 127.0.0.1 (random port), and is written on `node:http`
 * alone so that every misbehaviour is under the test's control. One `behaviour` per server says
 * how it misbehaves; `ok` is the well-behaved server to compare against. It records every request.
 *
 * Beyond the behaviours it is lenient: it neither requires the session id nor checks the
 * `MCP-Protocol-Version` and `Accept` headers (tests read them from `requests`).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type HostileBehaviour =
  /** initialize, notifications/initialized (202), tools/list (paged by `pageSize`), tools/call. */
  | 'ok'
  /** tools/call is accepted and never answered (the socket stays open); other methods behave. */
  | 'hang-before-response'
  /** tools/call gets 200 with `text/event-stream` headers, then no event. */
  | 'hang-after-headers'
  /** tools/call answers with a 5 MiB text content block. */
  | 'huge-response'
  /** tools/list returns 600 tools (`tool_000`..`tool_599`) over pages of 100. */
  | 'many-tools'
  /** tools/list returns one tool, `huge_schema`, whose inputSchema is ~300 KB of JSON. */
  | 'huge-schema'
  /** Every JSON-RPC response body is `{"jsonrpc": "2.0", "id": ` (cut short), as `application/json`. */
  | 'invalid-json'
  /** Responses carry an id other than the request's (a number n becomes -n - 1, a string s `s-wrong`). */
  | 'wrong-id'
  /** GET /mcp answers 405 without CORS headers; everything else as `ok`. */
  | 'get-405'
  /** No Access-Control-* headers at all, the OPTIONS preflight (204) included. */
  | 'no-cors'
  /**
   * The first session is lost once the handshake is over: after its `notifications/initialized`
   * (202), every request carrying its Mcp-Session-Id gets 404. A new initialize (without the
   * header) starts a session that works, so a client that recovers can be told from one that does not.
   */
  | 'drop-session'
  /** tools/list returns `workspace_read_file`, `workspace.read_file` and `echo`. */
  | 'builtin-names'
  /** tools/list returns `a b`, `a-b`, `a.b`, `a__b` and `ä b`, which sanitize to similar call names. */
  | 'colliding-names'
  /** tools/call answers `{ isError: true, content: [{ type: 'text', text: 'it broke' }] }`. */
  | 'tool-error'
  /** tools/call answers the JSON-RPC error `{ code: -32001, message: 'nope', data: { why: 'testing' } }`. */
  | 'server-error'
  /** initialize answers protocolVersion `1999-01-01`. */
  | 'unsupported-version';

export interface HostileTool {
  name: string;
  description?: string;
  /** Default `{ type: 'object', properties: {} }`. */
  inputSchema?: object;
  outputSchema?: object;
  annotations?: object;
}

export interface HostileRequest {
  method: string;
  /** Path and query, e.g. `/mcp`. */
  path: string;
  /** Lowercased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The parsed JSON body, or null when it is empty or not JSON. */
  body: unknown;
}

export interface HostileMcpServerOptions {
  behaviour: HostileBehaviour;
  /**
   * The tools listed by every behaviour that does not list its own; default `echo`
   * (`{ message: string }`) and `add` (`{ a: number, b: number }`, with an outputSchema).
   */
  tools?: HostileTool[];
  /** tools/list page size (default: all in one page; `many-tools`: 100). */
  pageSize?: number;
  /**
   * How tools/call answers a listed tool (the CallToolResult). Default: `echo` -> text
   * `Echo: <message>`; `add` -> the sum as text plus structuredContent `{ sum }`; any other
   * tool -> text `<name>: <arguments as JSON>`.
   */
  callTool?: (name: string, args: Record<string, unknown>) => object;
  /** Default true, except for `no-cors`. */
  corsHeaders?: boolean;
  /** Answer as a single-event `text/event-stream` instead of `application/json` (default false). */
  sse?: boolean;
  /** Requests without this header (and value) get 401 with `WWW-Authenticate: Bearer`; preflights pass. */
  requireHeader?: { name: string; value: string };
  /**
   * An OAuth-protected resource: requests whose `Authorization: Bearer <token>` fails `accepts`
   * get 401 with `WWW-Authenticate: Bearer resource_metadata="<resourceMetadataUrl>"`.
   */
  bearer?: { accepts(token: string): boolean; resourceMetadataUrl: string };
}

export interface HostileMcpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** Every request received, in order of arrival (the OPTIONS preflights too). */
  requests: HostileRequest[];
  /** Resolves once a tools/call request has been received. */
  callReceived(): Promise<void>;
  /** Closes the server and destroys every open socket, hanging ones included. */
  close(): Promise<void>;
}

export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05'];
const LATEST_PROTOCOL_VERSION = '2025-06-18';
const TRUNCATED_JSON = '{"jsonrpc": "2.0", "id": ';
const HUGE_TEXT_BYTES = 5 * 1024 * 1024;

const DEFAULT_TOOLS: HostileTool[] = [
  {
    name: 'echo',
    description: 'Echoes a message.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  },
];

type Id = string | number;
type Outcome = { result: object } | { error: { code: number; message: string; data?: unknown } };

export async function startHostileMcpServer(options: HostileMcpServerOptions): Promise<HostileMcpServer> {
  const { behaviour } = options;
  const cors = options.corsHeaders ?? behaviour !== 'no-cors';
  const tools = toolsOf(behaviour, options.tools ?? DEFAULT_TOOLS);
  const pageSize = options.pageSize ?? (behaviour === 'many-tools' ? 100 : Math.max(tools.length, 1));
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new Error('pageSize must be a positive integer');
  const requests: HostileRequest[] = [];
  const sockets = new Set<Socket>();
  let lostSession: string | undefined;
  let callSeen = () => {};
  const called = new Promise<void>((resolve) => (callSeen = resolve));

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent)
        send(res, 500, rpcError(null, { code: -32603, message: `hostile server failure: ${String(e)}` }));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const entry: HostileRequest = { method, path, headers: flatten(req.headers), body: null };
    requests.push(entry);
    const raw = await readBody(req);
    const parsed = parseJson(raw);
    entry.body = parsed.ok ? parsed.value : null;

    if (cors && !(behaviour === 'get-405' && method === 'GET')) setCors(res, options.requireHeader?.name);
    if (method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (path.split('?')[0] !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    const required = options.requireHeader;
    if (required !== undefined && req.headers[required.name.toLowerCase()] !== required.value) {
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
        .end(JSON.stringify({ error: 'invalid_token', error_description: `${required.name} is required` }));
      return;
    }
    const bearer = options.bearer;
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer !== undefined && (token === undefined || !bearer.accepts(token))) {
      res
        .writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer error="invalid_token", resource_metadata="${bearer.resourceMetadataUrl}"`,
        })
        .end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const session = entry.headers['mcp-session-id'];
    const message = parsed.ok ? (parsed.value as Record<string, unknown> | null) : null;
    if (
      lostSession !== undefined &&
      session === lostSession &&
      !(method === 'POST' && message?.method === 'notifications/initialized')
    ) {
      send(res, 404, rpcError(null, { code: -32001, message: 'Session not found' }));
      return;
    }
    if (method === 'DELETE') {
      res.writeHead(200).end();
      return;
    }
    if (method !== 'POST') {
      res.writeHead(405, { allow: 'POST, DELETE, OPTIONS', 'content-type': 'text/plain' }).end();
      return;
    }

    if (!parsed.ok) {
      send(res, 400, rpcError(null, { code: -32700, message: 'Parse error' }));
      return;
    }
    if (Array.isArray(message)) {
      send(res, 400, rpcError(null, { code: -32600, message: 'Batches are not supported' }));
      return;
    }
    if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') {
      send(res, 400, rpcError(null, { code: -32600, message: 'Invalid Request' }));
      return;
    }
    // A notification, or the client's answer to a server request: accepted, nothing to say.
    if (typeof message.method !== 'string' || !('id' in message)) {
      res.writeHead(202).end();
      return;
    }
    const id = message.id;
    if (typeof id !== 'string' && typeof id !== 'number') {
      send(
        res,
        400,
        rpcError(null, { code: -32600, message: 'Invalid Request: id must be a string or number' }),
      );
      return;
    }
    const params = (isObject(message.params) ? message.params : {}) as Record<string, unknown>;

    const headers: Record<string, string> = {};
    if (message.method === 'initialize') {
      headers['mcp-session-id'] = randomUUID();
      if (behaviour === 'drop-session' && lostSession === undefined) lostSession = headers['mcp-session-id'];
    }
    if (message.method === 'tools/call') {
      callSeen();
      if (behaviour === 'hang-before-response') return;
      if (behaviour === 'hang-after-headers') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.flushHeaders();
        return;
      }
    }
    reply(res, id, dispatch(message.method, params), headers);
  }

  function dispatch(method: string, params: Record<string, unknown>): Outcome {
    switch (method) {
      case 'initialize':
        return { result: initializeResult(params) };
      case 'ping':
        return { result: {} };
      case 'tools/list':
        return listTools(params);
      case 'tools/call':
        return callTool(params);
      default:
        return { error: { code: -32601, message: `Method not found: ${method}` } };
    }
  }

  function initializeResult(params: Record<string, unknown>): object {
    const requested = params.protocolVersion;
    const protocolVersion =
      behaviour === 'unsupported-version'
        ? '1999-01-01'
        : typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
          ? requested
          : LATEST_PROTOCOL_VERSION;
    return {
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'hostile', version: '1.0.0' },
    };
  }

  function listTools(params: Record<string, unknown>): Outcome {
    let start = 0;
    if (params.cursor !== undefined) {
      const match = typeof params.cursor === 'string' ? /^page-(\d+)$/.exec(params.cursor) : null;
      if (!match || Number(match[1]) >= tools.length)
        return { error: { code: -32602, message: `Invalid cursor: ${JSON.stringify(params.cursor)}` } };
      start = Number(match[1]);
    }
    const end = start + pageSize;
    return {
      result: {
        tools: tools.slice(start, end),
        ...(end < tools.length ? { nextCursor: `page-${end}` } : {}),
      },
    };
  }

  function callTool(params: Record<string, unknown>): Outcome {
    if (behaviour === 'server-error')
      return { error: { code: -32001, message: 'nope', data: { why: 'testing' } } };
    if (behaviour === 'tool-error') return { result: { isError: true, content: [text('it broke')] } };
    if (behaviour === 'huge-response') return { result: { content: [text('x'.repeat(HUGE_TEXT_BYTES))] } };
    const { name } = params;
    if (typeof name !== 'string')
      return { error: { code: -32602, message: 'Invalid params: name is required' } };
    if (!tools.some((t) => t.name === name))
      return { error: { code: -32602, message: `Unknown tool: ${name}` } };
    const args = params.arguments ?? {};
    if (!isObject(args))
      return { error: { code: -32602, message: 'Invalid params: arguments must be an object' } };
    return { result: (options.callTool ?? defaultCall)(name, args as Record<string, unknown>) };
  }

  function reply(res: ServerResponse, id: Id, outcome: Outcome, headers: Record<string, string>): void {
    if (behaviour === 'invalid-json') {
      res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(TRUNCATED_JSON);
      return;
    }
    const responseId = behaviour === 'wrong-id' ? (typeof id === 'number' ? -id - 1 : `${id}-wrong`) : id;
    const body = JSON.stringify({ jsonrpc: '2.0', id: responseId, ...outcome });
    if (options.sse)
      res
        .writeHead(200, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
        .end(`event: message\ndata: ${body}\n\n`);
    else res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    callReceived: () => called,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function toolsOf(behaviour: HostileBehaviour, configured: HostileTool[]): HostileTool[] {
  const plain = (name: string): HostileTool => ({
    name,
    description: `The tool ${name}.`,
    inputSchema: { type: 'object', properties: {} },
  });
  switch (behaviour) {
    case 'many-tools':
      return Array.from({ length: 600 }, (_, i) => plain(`tool_${String(i).padStart(3, '0')}`));
    case 'huge-schema':
      return [
        {
          name: 'huge_schema',
          description: 'A tool with a very large input schema.',
          inputSchema: hugeSchema(),
        },
      ];
    case 'builtin-names':
      return [plain('workspace_read_file'), plain('workspace.read_file'), DEFAULT_TOOLS[0]!];
    case 'colliding-names':
      return ['a b', 'a-b', 'a.b', 'a__b', 'ä b'].map(plain);
    default:
      return configured.map((t) => ({
        ...t,
        inputSchema: t.inputSchema ?? { type: 'object', properties: {} },
      }));
  }
}

/** ~300 KB: 1000 string properties with 252-character descriptions. */
function hugeSchema(): object {
  const properties: Record<string, object> = {};
  for (let i = 0; i < 1000; i++)
    properties[`field_${String(i).padStart(4, '0')}`] = {
      type: 'string',
      description: 'lorem ipsum '.repeat(21),
    };
  return { type: 'object', properties };
}

function defaultCall(name: string, args: Record<string, unknown>): object {
  if (name === 'echo') {
    if (typeof args.message !== 'string')
      return { isError: true, content: [text('message must be a string')] };
    return { content: [text(`Echo: ${args.message}`)] };
  }
  if (name === 'add') {
    const { a, b } = args;
    if (typeof a !== 'number' || typeof b !== 'number')
      return { isError: true, content: [text('a and b must be numbers')] };
    return { content: [text(String(a + b))], structuredContent: { sum: a + b } };
  }
  return { content: [text(`${name}: ${JSON.stringify(args)}`)] };
}

const text = (value: string) => ({ type: 'text', text: value });

const isObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const rpcError = (id: Id | null, error: { code: number; message: string }) => ({ jsonrpc: '2.0', id, error });

function setCors(res: ServerResponse, extraHeader: string | undefined): void {
  const allowed = [
    'Content-Type',
    'Accept',
    'Authorization',
    'Mcp-Session-Id',
    'MCP-Protocol-Version',
    'Last-Event-ID',
  ];
  if (extraHeader !== undefined && !allowed.some((h) => h.toLowerCase() === extraHeader.toLowerCase()))
    allowed.push(extraHeader);
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
  res.setHeader('access-control-allow-headers', allowed.join(', '));
  res.setHeader('access-control-expose-headers', 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate');
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(raw: string): { ok: true; value: unknown } | { ok: false } {
  if (raw === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false };
  }
}
