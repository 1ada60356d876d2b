/**
 * A scripted OpenAI-compatible LLM server for integration and end-to-end tests. It listens on
 * 127.0.0.1 (random port), replays queued turns as Chat Completions SSE at
 * POST /v1/chat/completions, lists models at GET /v1/models, sends CORS headers so a browser
 * page can call it directly, and records every request.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedToolCall {
  /** Omitted: an id is generated (`call_scripted_<n>`). `null`: the call is sent without an id. */
  id?: string | null;
  name: string;
  /** Argument fragments, each sent in its own chunk after the chunk that carries id and name. */
  arguments: string[];
}

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  [key: string]: unknown;
}

/** A normal reply: reasoning chunks, then text chunks, then tool calls, then finish and usage. */
export interface ScriptedReply {
  fault?: undefined;
  text?: string[];
  reasoning?: string[];
  /** Which delta field carries reasoning (DeepSeek: `reasoning_content`, OpenRouter: `reasoning`). */
  reasoningField?: 'reasoning_content' | 'reasoning';
  toolCalls?: ScriptedToolCall[];
  /** Sent when the request asks for usage; `null` sends no usage chunk. */
  usage?: ScriptedUsage | null;
  /** Defaults to `tool_calls` when there are tool calls, else `stop`; `null` sends no finish chunk. */
  finishReason?: string | null;
  /** Send `data: [DONE]` at the end (default true). */
  done?: boolean;
  /** Pause before each chunk. */
  delayMs?: number;
}

export type ScriptedFault =
  | { fault: 'http'; status: number; body?: string; headers?: Record<string, string> }
  /** 200 with SSE headers, then nothing. */
  | { fault: 'hang' }
  /** Sends `afterChunks` data events of `reply` (default: a short text reply), then destroys the socket. */
  | { fault: 'drop'; afterChunks: number; reply?: ScriptedReply }
  /** One valid chunk, then a data line that is not JSON. */
  | { fault: 'malformed' }
  /** 200 text/html: a web page instead of an API response. */
  | { fault: 'html' }
  /** Keep-alive comments every `intervalMs` (default 25) until the client disconnects. */
  | { fault: 'endless'; intervalMs?: number };

export type Turn = ScriptedReply | ScriptedFault;

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it is not JSON (`undefined` when empty). */
  body: unknown;
}

export interface ScriptedLlmServerOptions {
  /** Model ids listed by GET /v1/models (default `['scripted-model']`). */
  models?: string[];
  /** When set, requests without `Authorization: Bearer <apiKey>` get OpenAI's 401. */
  apiKey?: string;
}

export interface ScriptedLlmServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  url: string;
  requests: RecordedRequest[];
  /** Queues turns; each chat completion request takes the next one. */
  script(...turns: Turn[]): void;
  /** Turns still queued. */
  pending(): number;
  close(): Promise<void>;
}

const CREATED = 1_700_000_000;

export async function startScriptedLlmServer(
  opts: ScriptedLlmServerOptions = {},
): Promise<ScriptedLlmServer> {
  const models = opts.models ?? ['scripted-model'];
  const queue: Turn[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let completions = 0;
  let callIds = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, errorBody(`scripted server failure: ${String(e)}`, 'server_error'));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    setCors(req, res);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    const raw = await readBody(req);
    const body = parseBody(raw);
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });

    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      sendJson(
        res,
        401,
        errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'),
      );
      return;
    }
    const route = `${req.method} ${path.split('?')[0]}`;
    if (route === 'GET /v1/models') {
      sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'scripted' })),
      });
      return;
    }
    if (route !== 'POST /v1/chat/completions') {
      sendJson(res, 404, errorBody(`Unknown route: ${route}`, 'invalid_request_error', 'not_found'));
      return;
    }
    const turn = queue.shift();
    if (!turn) {
      sendJson(
        res,
        500,
        errorBody(
          'No turn was scripted for this request: the scripted LLM server queue is empty (call script() first).',
          'scripted_server_error',
        ),
      );
      return;
    }
    const request = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const ctx: ReplyContext = {
      id: `chatcmpl-scripted-${++completions}`,
      model: typeof request.model === 'string' ? request.model : (models[0] ?? 'scripted-model'),
      includeUsage:
        (request.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
      nextCallId: () => `call_scripted_${++callIds}`,
    };
    await play(turn, request.stream !== false, ctx, res);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...turns) => void queue.push(...turns),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface ReplyContext {
  id: string;
  model: string;
  includeUsage: boolean;
  nextCallId: () => string;
}

async function play(turn: Turn, stream: boolean, ctx: ReplyContext, res: ServerResponse): Promise<void> {
  switch (turn.fault) {
    case 'http': {
      const body = turn.body ?? JSON.stringify(errorBody(`Scripted HTTP ${turn.status}`, 'scripted_error'));
      const type = turn.body !== undefined && !/^\s*[{[]/.test(turn.body) ? 'text/plain' : 'application/json';
      res.writeHead(turn.status, { 'content-type': type, ...turn.headers }).end(body);
      return;
    }
    case 'html':
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          '<!doctype html>\n<html><head><title>Welcome</title></head><body><h1>Welcome</h1></body></html>\n',
        );
      return;
    case 'hang':
      openSse(res);
      return;
    case 'endless': {
      openSse(res);
      const beat = () => void (res.destroyed || res.write(': keep-alive\n\n'));
      beat();
      const timer = setInterval(beat, turn.intervalMs ?? 25);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case 'malformed':
      openSse(res);
      writeData(res, JSON.stringify(chunk(ctx, { role: 'assistant', content: '' })));
      writeData(res, '{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "oops"');
      res.end();
      return;
    case 'drop': {
      openSse(res);
      const events = replyEvents(turn.reply ?? { text: ['Hello', ', ', 'world', '!'] }, ctx);
      for (const data of events.slice(0, turn.afterChunks)) {
        if (!(await pause(turn.reply?.delayMs, res))) return;
        writeData(res, data);
      }
      // Let the written chunks leave before the connection is cut.
      await new Promise((resolve) => setTimeout(resolve, 20));
      res.socket?.destroy();
      return;
    }
    case undefined:
      if (!stream) {
        sendJson(res, 200, completion(turn, ctx));
        return;
      }
      openSse(res);
      for (const data of replyEvents(turn, ctx)) {
        if (!(await pause(turn.delayMs, res))) return;
        writeData(res, data);
      }
      res.end();
  }
}

/** The `data:` payloads of a reply, in order. */
function replyEvents(turn: ScriptedReply, ctx: ReplyContext): string[] {
  const chunks: object[] = [chunk(ctx, { role: 'assistant', content: '' })];
  const field = turn.reasoningField ?? 'reasoning_content';
  for (const r of turn.reasoning ?? []) chunk(ctx, { [field]: r }, chunks);
  for (const t of turn.text ?? []) chunk(ctx, { content: t }, chunks);
  (turn.toolCalls ?? []).forEach((call, index) => {
    const id = call.id === undefined ? ctx.nextCallId() : call.id;
    const head = {
      index,
      ...(id !== null ? { id } : {}),
      type: 'function',
      function: { name: call.name, arguments: '' },
    };
    chunk(ctx, { tool_calls: [head] }, chunks);
    for (const a of call.arguments)
      chunk(ctx, { tool_calls: [{ index, function: { arguments: a } }] }, chunks);
  });
  const finish = finishReason(turn);
  if (finish !== null)
    chunks.push({ ...base(ctx), choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }] });
  if (ctx.includeUsage && turn.usage !== null)
    chunks.push({ ...base(ctx), choices: [], usage: usageOf(turn) });
  const events = chunks.map((c) => JSON.stringify(c));
  if (turn.done !== false) events.push('[DONE]');
  return events;
}

function completion(turn: ScriptedReply, ctx: ReplyContext): object {
  const calls = (turn.toolCalls ?? []).map((call) => ({
    ...(call.id === null ? {} : { id: call.id ?? ctx.nextCallId() }),
    type: 'function',
    function: { name: call.name, arguments: call.arguments.join('') },
  }));
  const message = {
    role: 'assistant',
    content: turn.text ? turn.text.join('') : null,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
  return {
    id: ctx.id,
    object: 'chat.completion',
    created: CREATED,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(turn) }],
    usage: usageOf(turn),
  };
}

const finishReason = (turn: ScriptedReply): string | null =>
  turn.finishReason === undefined ? (turn.toolCalls?.length ? 'tool_calls' : 'stop') : turn.finishReason;

function usageOf(turn: ScriptedReply): ScriptedUsage {
  if (turn.usage)
    return { total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens, ...turn.usage };
  const pieces =
    (turn.text?.length ?? 0) +
    (turn.reasoning?.length ?? 0) +
    (turn.toolCalls ?? []).reduce((n, c) => n + c.arguments.length + 1, 0);
  return { prompt_tokens: 10, completion_tokens: pieces, total_tokens: 10 + pieces };
}

const base = (ctx: ReplyContext) => ({
  id: ctx.id,
  object: 'chat.completion.chunk',
  created: CREATED,
  model: ctx.model,
  system_fingerprint: null,
});

function chunk(ctx: ReplyContext, delta: object, into?: object[]): object {
  const c = { ...base(ctx), choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] };
  into?.push(c);
  return c;
}

function openSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
}

function writeData(res: ServerResponse, data: string): void {
  if (!res.destroyed) res.write(`data: ${data}\n\n`);
}

/** Waits before the next chunk; false when the client has gone away meanwhile. */
async function pause(ms: number | undefined, res: ServerResponse): Promise<boolean> {
  if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
  return !res.destroyed && !res.writableEnded;
}

function setCors(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
  res.setHeader(
    'access-control-allow-headers',
    req.headers['access-control-request-headers'] ??
      'authorization, content-type, accept, x-title, http-referer, openai-organization, openai-project',
  );
  res.setHeader('access-control-expose-headers', 'retry-after, retry-after-ms, x-request-id');
  res.setHeader('access-control-max-age', '600');
  if (req.headers['access-control-request-private-network'] === 'true')
    res.setHeader('access-control-allow-private-network', 'true');
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

const errorBody = (message: string, type: string, code: string | null = null) => ({
  error: { message, type, param: null, code },
});

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
