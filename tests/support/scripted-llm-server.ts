/**
 * A scripted LLM server for integration and end-to-end tests. It listens on 127.0.0.1 (random
 * port) and replays queued turns in three wire formats, chosen by the route a request uses:
 *
 * - OpenAI Chat Completions SSE at POST /v1/chat/completions (models at GET /v1/models);
 * - Anthropic Messages SSE at POST /v1/messages (models at GET /v1/models with `anthropic-version`);
 * - Gemini SSE at POST /v1beta/models/{model}:streamGenerateContent?alt=sse (models at GET /v1beta/models).
 *
 * The same `Turn` script drives every format. It sends CORS headers so a browser page can call
 * it directly, and records every request.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type WireFormat = 'openai' | 'anthropic' | 'gemini';

export interface ScriptedToolCall {
  /** Omitted: an id is generated (`call_scripted_<n>`, Anthropic `toolu_scripted_<n>`). `null`: the call is sent without an id. */
  id?: string | null;
  name: string;
  /**
   * Argument fragments. OpenAI: each in its own chunk after the chunk with id and name;
   * Anthropic: one `input_json_delta` each; Gemini: joined and parsed, sent whole as `args`.
   */
  arguments: string[];
  /** Gemini: the `thoughtSignature` on this call's part. */
  signature?: string;
}

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  /** Anthropic: passed through in `usage`. */
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  [key: string]: unknown;
}

/** A normal reply: reasoning chunks, then text chunks, then tool calls, then finish and usage. */
export interface ScriptedReply {
  fault?: undefined;
  text?: string[];
  reasoning?: string[];
  /** Which delta field carries reasoning (DeepSeek: `reasoning_content`, OpenRouter: `reasoning`). OpenAI only. */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /**
   * Anthropic: the thinking block's `signature_delta` (default `sig_scripted_<n>` when there is
   * reasoning). Gemini: the `thoughtSignature` on the last thought part (none by default).
   */
  reasoningSignature?: string;
  /** Anthropic: `redacted_thinking` blocks (their `data`), sent after the thinking block. */
  redactedThinking?: string[];
  /** Gemini: a final empty text part carrying this `thoughtSignature`. */
  textSignature?: string;
  toolCalls?: ScriptedToolCall[];
  /** Sent when the request asks for usage (OpenAI) or always (Anthropic, Gemini); `null` sends none. */
  usage?: ScriptedUsage | null;
  /**
   * Defaults to a tool-call finish when there are tool calls, else a normal stop; `null` sends no
   * finish. OpenAI values (`stop`, `length`, `tool_calls`, `content_filter`) are translated for
   * the other formats; any other value is sent as it is.
   */
  finishReason?: string | null;
  /** Send the end marker (OpenAI `data: [DONE]`, Anthropic `message_stop`; default true). */
  done?: boolean;
  /** Pause before each chunk. */
  delayMs?: number;
  /** The reply waits for this before it starts: a test opens it once the page has done its part. */
  waitFor?: Promise<unknown>;
}

export type ScriptedFault =
  | { fault: 'http'; status: number; body?: string; headers?: Record<string, string> }
  /** 200 with SSE headers, then nothing. */
  | { fault: 'hang' }
  /** Sends `afterChunks` events of `reply` (default: a short text reply), then destroys the socket. */
  | { fault: 'drop'; afterChunks: number; reply?: ScriptedReply }
  /** One valid chunk, then a data line that is not JSON. */
  | { fault: 'malformed' }
  /** 200 text/html: a web page instead of an API response. */
  | { fault: 'html' }
  /** Keep-alive comments every `intervalMs` (default 25) until the client disconnects. */
  | { fault: 'endless'; intervalMs?: number }
  /**
   * Sends `afterChunks` events of `reply` (default 1 of a short text reply), then the format's
   * in-stream error (OpenAI `{error}` chunk, Anthropic `event: error`, Gemini `{error}` chunk).
   */
  | {
      fault: 'stream-error';
      kind?: 'overloaded' | 'rate_limit' | 'server';
      message?: string;
      afterChunks?: number;
      reply?: ScriptedReply;
    };

export type Turn = ScriptedReply | ScriptedFault;

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it is not JSON (`undefined` when empty). */
  body: unknown;
  /** The wire format of the route, when it is a model route. */
  format?: WireFormat;
}

export interface ScriptedLlmServerOptions {
  /** Model ids listed by the model routes (default `['scripted-model']`). */
  models?: string[];
  /**
   * When set, requests must carry this key the way their format does (OpenAI
   * `Authorization: Bearer`, Anthropic `x-api-key`, Gemini `x-goog-api-key` or `?key=`), or get
   * that provider's error.
   */
  apiKey?: string;
}

export interface ScriptedLlmServer {
  /** OpenAI and Anthropic base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  url: string;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Gemini base URL including `/v1beta`. */
  geminiUrl: string;
  requests: RecordedRequest[];
  /** Queues turns; each model request takes the next one, whatever its format. */
  script(...turns: Turn[]): void;
  /**
   * Queues turns for requests whose body contains `marker` (agents working at once, such as
   * delegated tasks, each with its own script); other requests take `script`'s.
   */
  scriptWhen(marker: string, ...turns: Turn[]): void;
  /** Turns still queued. */
  pending(): number;
  close(): Promise<void>;
}

const CREATED = 1_700_000_000;

/** The first user message of a chat request (OpenAI, Anthropic), as text, for `scriptWhen`. */
function firstUserMessage(body: unknown): string {
  const messages = (body as { messages?: { role?: string; content?: unknown }[] } | null)?.messages;
  const first = Array.isArray(messages) ? messages.find((m) => m.role === 'user') : undefined;
  return first ? JSON.stringify(first.content) : '';
}

interface Route {
  format: WireFormat | null;
  kind: 'models' | 'generate' | 'unknown';
  /** Gemini: the model named in the path. */
  model?: string;
  /** Gemini: `alt=sse` was asked for. */
  sse?: boolean;
}

function routeOf(method: string, url: string, headers: IncomingHttpHeaders): Route {
  const [path = '/', query = ''] = url.split('?');
  if (method === 'GET' && path === '/v1/models')
    return { format: headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai', kind: 'models' };
  if (method === 'GET' && path === '/v1beta/models') return { format: 'gemini', kind: 'models' };
  if (method === 'POST' && path === '/v1/chat/completions') return { format: 'openai', kind: 'generate' };
  if (method === 'POST' && path === '/v1/messages') return { format: 'anthropic', kind: 'generate' };
  const gemini = /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/.exec(path);
  if (method === 'POST' && gemini)
    return {
      format: 'gemini',
      kind: 'generate',
      model: decodeURIComponent(gemini[1] ?? ''),
      sse: new URLSearchParams(query).get('alt') === 'sse',
    };
  return { format: null, kind: 'unknown' };
}

export async function startScriptedLlmServer(
  opts: ScriptedLlmServerOptions = {},
): Promise<ScriptedLlmServer> {
  const models = opts.models ?? ['scripted-model'];
  const queue: Turn[] = [];
  const routed = new Map<string, Turn[]>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let completions = 0;
  let callIds = 0;
  let signatures = 0;

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
    const method = req.method ?? 'GET';
    const route = routeOf(method, path, req.headers);
    requests.push({
      method,
      path,
      headers: req.headers,
      body,
      ...(route.format !== null ? { format: route.format } : {}),
    });

    const format = route.format ?? 'openai';
    if (opts.apiKey !== undefined && !authorized(format, req, opts.apiKey)) {
      denyKey(format, req, res);
      return;
    }
    if (route.kind === 'models') {
      listModels(format, models, res);
      return;
    }
    if (route.kind === 'unknown' || route.format === null) {
      sendJson(
        res,
        404,
        errorBody(`Unknown route: ${method} ${path.split('?')[0]}`, 'invalid_request_error', 'not_found'),
      );
      return;
    }
    if (format === 'anthropic' && req.headers['anthropic-version'] === undefined) {
      sendJson(res, 400, anthropicError('invalid_request_error', 'anthropic-version: header is required'));
      return;
    }
    if (format === 'gemini' && !route.sse) {
      sendJson(res, 400, geminiError(400, 'The scripted server streams only with ?alt=sse.'));
      return;
    }
    const text = firstUserMessage(body);
    const marked = [...routed.keys()].find((m) => text.includes(m));
    const turn = (marked ? routed.get(marked)! : queue).shift();
    if (!turn) {
      const message =
        'No turn was scripted for this request: the scripted LLM server queue is empty (call script() first).';
      sendJson(res, 500, errorFor(format, 500, message, 'scripted_server_error'));
      return;
    }
    const request = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const n = ++completions;
    const ctx: ReplyContext = {
      format,
      id: { openai: `chatcmpl-scripted-${n}`, anthropic: `msg_scripted_${n}`, gemini: `resp-scripted-${n}` }[
        format
      ],
      model:
        route.model ?? (typeof request.model === 'string' ? request.model : (models[0] ?? 'scripted-model')),
      includeUsage:
        format !== 'openai' ||
        (request.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
      nextCallId: () => `${format === 'anthropic' ? 'toolu' : 'call'}_scripted_${++callIds}`,
      nextSignature: () => `sig_scripted_${++signatures}`,
    };
    await play(turn, format === 'gemini' || request.stream !== false, ctx, res);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}/v1`,
    origin,
    geminiUrl: `${origin}/v1beta`,
    requests,
    script: (...turns) => void queue.push(...turns),
    scriptWhen: (marker, ...turns) => void routed.set(marker, [...(routed.get(marker) ?? []), ...turns]),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface ReplyContext {
  format: WireFormat;
  id: string;
  model: string;
  includeUsage: boolean;
  nextCallId: () => string;
  nextSignature: () => string;
}

/** One SSE event: an optional `event:` name and its data line. */
interface SseOut {
  event?: string;
  data: string;
}

// ---------------------------------------------------------------------------------------------
// Auth and model lists

function authorized(format: WireFormat, req: IncomingMessage, key: string): boolean {
  if (format === 'anthropic') return req.headers['x-api-key'] === key;
  if (format === 'gemini') {
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    return req.headers['x-goog-api-key'] === key || query.get('key') === key;
  }
  return req.headers.authorization === `Bearer ${key}`;
}

function denyKey(format: WireFormat, req: IncomingMessage, res: ServerResponse): void {
  if (format === 'anthropic') {
    sendJson(res, 401, anthropicError('authentication_error', 'invalid x-api-key'));
    return;
  }
  if (format === 'gemini') {
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    if (req.headers['x-goog-api-key'] === undefined && query.get('key') === null) {
      sendJson(
        res,
        403,
        geminiError(
          403,
          "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        ),
      );
      return;
    }
    sendJson(res, 400, {
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'API_KEY_INVALID',
            domain: 'googleapis.com',
          },
        ],
      },
    });
    return;
  }
  sendJson(res, 401, errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
}

function listModels(format: WireFormat, models: string[], res: ServerResponse): void {
  if (format === 'gemini') {
    sendJson(res, 200, {
      models: models.map((id) => ({
        name: `models/${id}`,
        displayName: id,
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
      })),
    });
    return;
  }
  if (format === 'anthropic') {
    sendJson(res, 200, {
      data: models.map((id) => ({
        type: 'model',
        id,
        display_name: id,
        created_at: new Date(CREATED * 1000).toISOString(),
      })),
      has_more: false,
      first_id: models[0] ?? null,
      last_id: models.at(-1) ?? null,
    });
    return;
  }
  sendJson(res, 200, {
    object: 'list',
    data: models.map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'scripted' })),
  });
}

// ---------------------------------------------------------------------------------------------
// Playing a turn

async function play(turn: Turn, stream: boolean, ctx: ReplyContext, res: ServerResponse): Promise<void> {
  switch (turn.fault) {
    case 'http': {
      const body =
        turn.body ??
        JSON.stringify(errorFor(ctx.format, turn.status, `Scripted HTTP ${turn.status}`, 'scripted_error'));
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
      for (const e of malformedEvents(ctx)) writeEvent(res, e);
      res.end();
      return;
    case 'drop': {
      openSse(res);
      const events = replyEvents(turn.reply ?? DEFAULT_REPLY, ctx);
      for (const e of events.slice(0, turn.afterChunks)) {
        if (!(await pause(turn.reply?.delayMs, res))) return;
        writeEvent(res, e);
      }
      // Let the written chunks leave before the connection is cut.
      await new Promise((resolve) => setTimeout(resolve, 20));
      res.socket?.destroy();
      return;
    }
    case 'stream-error': {
      openSse(res);
      const events = replyEvents(turn.reply ?? DEFAULT_REPLY, ctx);
      for (const e of events.slice(0, turn.afterChunks ?? 1)) {
        if (!(await pause(turn.reply?.delayMs, res))) return;
        writeEvent(res, e);
      }
      writeEvent(res, streamErrorEvent(ctx.format, turn.kind ?? 'overloaded', turn.message));
      res.end();
      return;
    }
    case undefined:
      if (turn.waitFor) await turn.waitFor;
      if (!stream) {
        sendJson(res, 200, ctx.format === 'anthropic' ? anthropicMessage(turn, ctx) : completion(turn, ctx));
        return;
      }
      openSse(res);
      for (const e of replyEvents(turn, ctx)) {
        if (!(await pause(turn.delayMs, res))) return;
        writeEvent(res, e);
      }
      res.end();
  }
}

const DEFAULT_REPLY: ScriptedReply = { text: ['Hello', ', ', 'world', '!'] };

/** The SSE events of a reply, in order, in the context's format. */
function replyEvents(turn: ScriptedReply, ctx: ReplyContext): SseOut[] {
  if (ctx.format === 'anthropic') return anthropicEvents(turn, ctx);
  if (ctx.format === 'gemini') return geminiEvents(turn, ctx);
  return openAiEvents(turn, ctx);
}

function malformedEvents(ctx: ReplyContext): SseOut[] {
  if (ctx.format === 'anthropic')
    return [
      anthropicEvents({ text: [] }, ctx)[0] ?? { data: '{}' },
      {
        event: 'content_block_start',
        data: '{"type": "content_block_start", "index": 0, "content_block": {"type"',
      },
    ];
  if (ctx.format === 'gemini')
    return [
      { data: JSON.stringify(geminiChunk(ctx, [{ text: 'Hel' }])) },
      { data: '{"candidates": [{"content": {"parts": [{"text": "oops"' },
    ];
  return [
    { data: JSON.stringify(chunk(ctx, { role: 'assistant', content: '' })) },
    { data: '{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "oops"' },
  ];
}

function streamErrorEvent(
  format: WireFormat,
  kind: 'overloaded' | 'rate_limit' | 'server',
  message?: string,
): SseOut {
  const text =
    message ??
    { overloaded: 'Overloaded', rate_limit: 'Rate limit exceeded', server: 'Internal server error' }[kind];
  if (format === 'anthropic') {
    const type = { overloaded: 'overloaded_error', rate_limit: 'rate_limit_error', server: 'api_error' }[
      kind
    ];
    return { event: 'error', data: JSON.stringify(anthropicError(type, text)) };
  }
  if (format === 'gemini') {
    const code = { overloaded: 503, rate_limit: 429, server: 500 }[kind];
    return { data: JSON.stringify(geminiError(code, text)) };
  }
  const type = { overloaded: 'overloaded_error', rate_limit: 'rate_limit_error', server: 'server_error' }[
    kind
  ];
  const code = { overloaded: 529, rate_limit: 429, server: 500 }[kind];
  return { data: JSON.stringify({ error: { message: text, type, code } }) };
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

function openAiEvents(turn: ScriptedReply, ctx: ReplyContext): SseOut[] {
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
  const events: SseOut[] = chunks.map((c) => ({ data: JSON.stringify(c) }));
  if (turn.done !== false) events.push({ data: '[DONE]' });
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

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

const ANTHROPIC_STOP: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

function anthropicStop(turn: ScriptedReply): string | null {
  const raw = finishReason(turn);
  return raw === null ? null : (ANTHROPIC_STOP[raw] ?? raw);
}

function anthropicUsage(turn: ScriptedReply): { input_tokens: number; output_tokens: number } {
  const u = usageOf(turn);
  const { prompt_tokens, completion_tokens, total_tokens: _total, ...rest } = u;
  return { input_tokens: prompt_tokens, output_tokens: completion_tokens, ...rest };
}

function anthropicEvents(turn: ScriptedReply, ctx: ReplyContext): SseOut[] {
  const events: SseOut[] = [];
  const emit = (type: string, data: object) =>
    events.push({ event: type, data: JSON.stringify({ type, ...data }) });
  const usage = turn.usage === null ? { input_tokens: 0, output_tokens: 0 } : anthropicUsage(turn);
  emit('message_start', {
    message: {
      id: ctx.id,
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  emit('ping', {});
  let index = 0;
  if (turn.reasoning?.length) {
    emit('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (const r of turn.reasoning)
      emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: r } });
    const signature = turn.reasoningSignature ?? ctx.nextSignature();
    emit('content_block_delta', { index, delta: { type: 'signature_delta', signature } });
    emit('content_block_stop', { index });
    index++;
  }
  for (const data of turn.redactedThinking ?? []) {
    emit('content_block_start', { index, content_block: { type: 'redacted_thinking', data } });
    emit('content_block_stop', { index });
    index++;
  }
  if (turn.text?.length) {
    emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const t of turn.text) emit('content_block_delta', { index, delta: { type: 'text_delta', text: t } });
    emit('content_block_stop', { index });
    index++;
  }
  for (const call of turn.toolCalls ?? []) {
    const id = call.id === undefined ? ctx.nextCallId() : call.id;
    emit('content_block_start', {
      index,
      content_block: { type: 'tool_use', ...(id !== null ? { id } : {}), name: call.name, input: {} },
    });
    emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
    for (const a of call.arguments)
      emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: a } });
    emit('content_block_stop', { index });
    index++;
  }
  const stop = anthropicStop(turn);
  if (stop !== null) {
    emit('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    if (turn.done !== false) emit('message_stop', {});
  }
  return events;
}

/** The non-streamed Message for `stream: false`. */
function anthropicMessage(turn: ScriptedReply, ctx: ReplyContext): object {
  const content: object[] = [];
  if (turn.reasoning?.length)
    content.push({
      type: 'thinking',
      thinking: turn.reasoning.join(''),
      signature: turn.reasoningSignature ?? ctx.nextSignature(),
    });
  for (const data of turn.redactedThinking ?? []) content.push({ type: 'redacted_thinking', data });
  if (turn.text?.length) content.push({ type: 'text', text: turn.text.join('') });
  for (const call of turn.toolCalls ?? []) {
    const id = call.id === undefined ? ctx.nextCallId() : call.id;
    content.push({
      type: 'tool_use',
      ...(id !== null ? { id } : {}),
      name: call.name,
      input: JSON.parse(call.arguments.join('') || '{}') as unknown,
    });
  }
  return {
    id: ctx.id,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: anthropicStop(turn),
    stop_sequence: null,
    usage: anthropicUsage(turn),
  };
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const anthropicError = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
  request_id: 'req_scripted',
});

// ---------------------------------------------------------------------------------------------
// Gemini

const GEMINI_FINISH: Record<string, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  content_filter: 'SAFETY',
};

const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const geminiError = (code: number, message: string) => ({
  error: { code, message, status: GEMINI_STATUS[code] ?? 'UNKNOWN' },
});

function geminiChunk(ctx: ReplyContext, parts: object[], extra: object = {}): object {
  return {
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...extra }],
    modelVersion: ctx.model,
    responseId: ctx.id,
  };
}

function geminiArgs(call: ScriptedToolCall): unknown {
  const text = call.arguments.join('');
  try {
    return JSON.parse(text === '' ? '{}' : text) as unknown;
  } catch {
    return text;
  }
}

function geminiEvents(turn: ScriptedReply, ctx: ReplyContext): SseOut[] {
  const chunks: object[][] = [];
  const reasoning = turn.reasoning ?? [];
  reasoning.forEach((r, i) => {
    const sig =
      i === reasoning.length - 1 && turn.reasoningSignature
        ? { thoughtSignature: turn.reasoningSignature }
        : {};
    chunks.push([{ text: r, thought: true, ...sig }]);
  });
  for (const t of turn.text ?? []) chunks.push([{ text: t }]);
  if (turn.textSignature) chunks.push([{ text: '', thoughtSignature: turn.textSignature }]);
  const calls = (turn.toolCalls ?? []).map((call) => {
    const id = call.id === undefined ? ctx.nextCallId() : call.id;
    return {
      functionCall: { ...(id !== null ? { id } : {}), name: call.name, args: geminiArgs(call) },
      ...(call.signature ? { thoughtSignature: call.signature } : {}),
    };
  });
  if (calls.length > 0) chunks.push(calls);
  const raw = finishReason(turn);
  const finish = raw === null ? null : (GEMINI_FINISH[raw] ?? raw);
  const u = usageOf(turn);
  const usage =
    turn.usage === null
      ? {}
      : {
          usageMetadata: {
            promptTokenCount: u.prompt_tokens,
            candidatesTokenCount: u.completion_tokens,
            totalTokenCount: u.total_tokens ?? u.prompt_tokens + u.completion_tokens,
          },
        };
  if (chunks.length === 0) chunks.push([{ text: '' }]);
  return chunks.map((parts, i) => {
    const last = i === chunks.length - 1;
    const c = geminiChunk(ctx, parts, last && finish !== null ? { finishReason: finish } : {});
    return { data: JSON.stringify(last ? { ...c, ...usage } : c) };
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

function errorFor(format: WireFormat, status: number, message: string, type: string): object {
  if (format === 'anthropic') return anthropicError(ANTHROPIC_ERROR_TYPES[status] ?? 'api_error', message);
  if (format === 'gemini') return geminiError(status, message);
  return errorBody(message, type);
}

function openSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
}

function writeEvent(res: ServerResponse, e: SseOut): void {
  if (res.destroyed) return;
  res.write(`${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${e.data}\n\n`);
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
      'authorization, content-type, accept, x-title, http-referer, openai-organization, openai-project, x-api-key, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access, x-goog-api-key',
  );
  res.setHeader('access-control-expose-headers', 'retry-after, retry-after-ms, x-request-id, request-id');
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
