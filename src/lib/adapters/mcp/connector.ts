import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { hearthError, type HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import { MCP_LIMITS, type McpLimits, type McpTool } from '$lib/domain/mcp';
import { err, ok, type Result } from '$lib/domain/result';
import type {
  McpCallOutcome,
  McpConnector,
  McpCredentialStore,
  McpDiscovery,
  McpSignInStep,
  McpTarget,
} from '$lib/ports/mcp';
import { describeFailure, describeSignInFailure, readTool } from './failures';
import { limitedFetch, requestWatch, type RequestWatch } from './limited-fetch';
import { SignInNeeded, StoredOAuthProvider } from './oauth-provider';

/** Signing in (OAuth): where its results are kept, and the clock and randomness it uses. */
export interface McpSignInDeps {
  credentials: McpCredentialStore;
  now: () => number;
  newState: () => string;
}

/** An unused connection ends after this long; the next call connects again. */
const IDLE_MS = 60_000;
const CLIENT_INFO = { name: 'hearth', version: '0.1.0' };

interface Connection {
  key: string;
  client: Client;
  watch: RequestWatch;
  busy: boolean;
  idle?: ReturnType<typeof setTimeout>;
}

/**
 * MCP over Streamable HTTP with the SDK's client (tools.md §15), from the runtime worker. Each
 * connection serves one request at a time, so what its fetch saw (a response, one past the size
 * limit) belongs to that request; servers get more connections when calls overlap. No redirects,
 * reconnects or retries; no standalone event stream (Hearth reads no server-initiated messages).
 */
export class SdkMcpConnector implements McpConnector {
  readonly #pool = new Map<string, Connection[]>();
  readonly #limits: McpLimits;

  /** `limits`: tools.md §15.1's unless a test shortens the waits; without `signIn`, no OAuth. */
  constructor(
    private readonly fetch: typeof globalThis.fetch = globalThis.fetch.bind(globalThis),
    limits: Partial<McpLimits> = {},
    private readonly signInDeps?: McpSignInDeps,
  ) {
    this.#limits = { ...MCP_LIMITS, ...limits };
  }

  async signIn(
    target: McpTarget,
    redirectUrl: string,
    signal: AbortSignal,
  ): Promise<Result<McpSignInStep, HearthError>> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#limits.connectMs)]);
    const { client, transport, provider, watch } = await this.#open(target, redirectUrl);
    try {
      // Connecting asks the server; a 401 starts the SDK's sign-in, which stops at the visit.
      await client.connect(transport, { signal: deadline, timeout: this.#limits.connectMs });
      // A server may let initialize through and guard only what follows: listing its tools asks
      // too, so such a server is not reported signed in while it still wants a sign-in.
      await client.listTools({}, { signal: deadline, timeout: this.#limits.connectMs });
      return ok({ kind: 'signed_in' });
    } catch (e) {
      if (provider?.authorizationUrl) {
        return ok({ kind: 'visit', authorizationUrl: provider.authorizationUrl.href });
      }
      return err(describeSignInFailure(e, target, watch, deadline.aborted));
    } finally {
      await client.close().catch(() => {});
    }
  }

  async finishSignIn(
    target: McpTarget,
    code: string,
    signal: AbortSignal,
  ): Promise<Result<void, HearthError>> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#limits.connectMs)]);
    const { transport, watch } = await this.#open(target);
    try {
      await Promise.race([
        transport.finishAuth(code),
        new Promise((_, reject) => deadline.addEventListener('abort', () => reject(deadline.reason))),
      ]);
      await this.forget(target.id);
      return ok(undefined);
    } catch (e) {
      return err(describeSignInFailure(e, target, watch, deadline.aborted));
    } finally {
      await transport.close().catch(() => {});
    }
  }

  async discover(target: McpTarget, signal: AbortSignal): Promise<Result<McpDiscovery, HearthError>> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#limits.listMs)]);
    const acquired = await this.#acquire(target, deadline);
    if (!acquired.ok) return acquired;
    const connection = acquired.value;
    let healthy = true;
    try {
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      let bytes = 0;
      for (let page = 1; ; page++) {
        if (page > this.#limits.pages) {
          return err(tooLarge(`The server's tool list runs past ${this.#limits.pages} pages.`));
        }
        connection.watch.reset();
        const listed = await connection.client.listTools(cursor ? { cursor } : {}, {
          signal: deadline,
          timeout: this.#limits.listMs,
        });
        for (const raw of listed.tools) {
          const size = JSON.stringify(raw).length;
          if (size > this.#limits.toolBytes) {
            return err(
              tooLarge(
                `The tool "${String(raw.name).slice(0, 80)}" is described in ${kib(size)}, over the limit of ${kib(this.#limits.toolBytes)}.`,
              ),
            );
          }
          bytes += size;
          if (bytes > this.#limits.catalogBytes) {
            return err(
              tooLarge(`The server's tools take more than ${kib(this.#limits.catalogBytes)} to describe.`),
            );
          }
          const tool = readTool(raw);
          if (!tool.ok) return tool;
          tools.push(tool.value);
          if (tools.length > this.#limits.tools) {
            return err(tooLarge(`The server lists more than ${this.#limits.tools} tools.`));
          }
        }
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      const version = connection.client.getServerVersion();
      return ok({
        protocolVersion: connection.watch.protocolVersion ?? 'unknown',
        server: { name: version?.name, title: version?.title, version: version?.version },
        tools,
      });
    } catch (e) {
      healthy = false;
      return err(
        describeFailure(e, target, connection.watch, signal.aborted ? 'cancelled' : 'listing tools'),
      );
    } finally {
      this.#release(target.id, connection, healthy);
    }
  }

  async call(
    target: McpTarget,
    tool: string,
    args: JsonObject,
    signal: AbortSignal,
  ): Promise<McpCallOutcome> {
    const size = JSON.stringify(args).length;
    if (size > this.#limits.argumentsBytes) {
      return {
        kind: 'not_sent',
        error: hearthError(
          'mcp.arguments_too_large',
          `The arguments take ${kib(size)}, over the limit of ${kib(this.#limits.argumentsBytes)}.`,
        ),
      };
    }
    const request = requestSignal(signal);
    const connect = AbortSignal.any([request.signal, AbortSignal.timeout(this.#limits.connectMs)]);
    const acquired = await this.#acquire(target, connect);
    if (!acquired.ok) {
      request.done();
      return { kind: 'not_sent', error: acquired.error };
    }
    const connection = acquired.value;
    const { watch } = connection;
    watch.reset();
    let healthy = false;
    try {
      const result = await connection.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: request.signal,
        timeout: this.#limits.callMs,
      });
      healthy = true;
      return {
        kind: 'result',
        result: {
          content: result.content as unknown[],
          structuredContent: result.structuredContent,
          isError: result.isError === true,
        },
      };
    } catch (e) {
      return callFailure(e, target, watch, signal, this.#limits);
    } finally {
      request.done();
      this.#release(target.id, connection, healthy);
    }
  }

  async forget(serverId: string): Promise<void> {
    const connections = this.#pool.get(serverId) ?? [];
    this.#pool.delete(serverId);
    await Promise.all(connections.map((c) => close(c)));
  }

  async #acquire(target: McpTarget, signal: AbortSignal): Promise<Result<Connection, HearthError>> {
    const key = JSON.stringify([target.endpoint, target.headers, target.protocolVersion]);
    const connections = this.#pool.get(target.id) ?? [];
    // A registration that changed since its connections were made gets new ones.
    const stale = connections.filter((c) => c.key !== key && !c.busy);
    for (const c of stale) void close(c);
    const current = connections.filter((c) => c.key === key);
    this.#pool.set(target.id, current);
    const idle = current.find((c) => !c.busy);
    if (idle) {
      clearTimeout(idle.idle);
      idle.busy = true;
      return ok(idle);
    }
    const { client, transport, watch } = await this.#open(target);
    const connection: Connection = { key, client, watch, busy: true };
    try {
      await client.connect(transport, { signal, timeout: this.#limits.connectMs });
    } catch (e) {
      void client.close().catch(() => {});
      return err(describeFailure(e, target, watch, signal.aborted ? 'cancelled' : 'connecting'));
    }
    current.push(connection);
    return ok(connection);
  }

  /**
   * A client and transport for one server. With sign-in available, a 401 is answered with the
   * stored tokens, refreshed when they ran out; `redirectUrl` marks a sign-in the person started.
   */
  async #open(target: McpTarget, redirectUrl?: string) {
    const watch = requestWatch();
    const deps = this.signInDeps;
    const provider = deps
      ? new StoredOAuthProvider(deps.credentials, target, await deps.credentials.get(target.id), {
          interactive: redirectUrl !== undefined,
          redirectUrl,
          now: deps.now,
          newState: deps.newState,
        })
      : undefined;
    const transport = new StreamableHTTPClientTransport(new URL(target.endpoint), {
      fetch: limitedFetch(this.fetch, watch, target, this.#limits.responseBytes),
      ...(provider ? { authProvider: provider } : {}),
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1_000,
        maxReconnectionDelay: 1_000,
        reconnectionDelayGrowFactor: 1,
      },
    });
    const client = new Client(CLIENT_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    return { client, transport, provider, watch };
  }

  #release(serverId: string, connection: Connection, healthy: boolean): void {
    connection.busy = false;
    const connections = this.#pool.get(serverId) ?? [];
    if (!healthy || !connections.includes(connection)) {
      this.#pool.set(
        serverId,
        connections.filter((c) => c !== connection),
      );
      void close(connection);
      return;
    }
    connection.idle = setTimeout(() => {
      this.#pool.set(
        serverId,
        (this.#pool.get(serverId) ?? []).filter((c) => c !== connection),
      );
      void close(connection);
    }, IDLE_MS);
  }
}

/**
 * The SDK never removes the abort listener it adds to a request's signal: a run's signal would
 * collect one per call and, when stopped, cancel requests that ended long ago. Each request gets
 * a signal of its own that follows the run's until the request is over.
 */
function requestSignal(signal: AbortSignal): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  return { signal: controller.signal, done: () => signal.removeEventListener('abort', abort) };
}

async function close(connection: Connection): Promise<void> {
  clearTimeout(connection.idle);
  await connection.client.close().catch(() => {});
}

/**
 * How a call that failed after connecting ended (tools.md §15.3). The server answered: its
 * JSON-RPC error, or a refusal over HTTP before it ran anything (not sent). No answer, or one
 * cut short: the tool may have run, so the outcome is unknown.
 */
function callFailure(
  e: unknown,
  target: McpTarget,
  watch: RequestWatch,
  signal: AbortSignal,
  limits: McpLimits,
): McpCallOutcome {
  if (watch.tooLarge) {
    return {
      kind: 'unsupported',
      message: `The server's answer was larger than ${kib(limits.responseBytes)}, so it was not read.`,
    };
  }
  // A 401 the stored sign-in could not answer: the server ran nothing.
  if (e instanceof UnauthorizedError || e instanceof SignInNeeded) {
    return { kind: 'not_sent', error: describeFailure(e, target, watch, 'calling the tool') };
  }
  if (signal.aborted) {
    return {
      kind: 'unknown',
      reason: 'cancelled',
      message: 'The call was stopped after it was sent: the tool may have run. It is not repeated.',
    };
  }
  // The SDK's own timeout and lost connection use JSON-RPC codes a server may send too.
  const sdkTimeout = e instanceof McpError && e.code === ErrorCode.RequestTimeout && isTimeoutData(e.data);
  if (sdkTimeout) {
    return {
      kind: 'unknown',
      reason: 'timeout',
      message: `The server did not answer within ${limits.callMs / 1000} s: the tool may have run. It is not repeated.`,
    };
  }
  if (
    e instanceof McpError &&
    e.code === ErrorCode.ConnectionClosed &&
    e.message.endsWith('Connection closed')
  ) {
    return {
      kind: 'unknown',
      reason: 'disconnected',
      message: 'The connection closed before the server answered: the tool may have run. It is not repeated.',
    };
  }
  if (e instanceof McpError) {
    if (e.code === ErrorCode.InvalidParams && /output schema|structured content/i.test(e.message)) {
      return {
        kind: 'unsupported',
        message: `The server's result does not match the tool's own output schema: ${e.message}`,
      };
    }
    return { kind: 'server_error', error: { code: e.code, message: stripPrefix(e.message), data: e.data } };
  }
  if (e instanceof StreamableHTTPError && watch.status !== undefined) {
    // A refusal (4xx) ran nothing; a failure (5xx) is the server's answer, whatever it ran.
    if (watch.status >= 500) {
      return {
        kind: 'server_error',
        error: { code: watch.status, message: `The server failed with HTTP ${watch.status}.` },
      };
    }
    return { kind: 'not_sent', error: describeFailure(e, target, watch, 'calling the tool') };
  }
  if (watch.status !== undefined) {
    return {
      kind: 'unsupported',
      message: `The server's answer could not be read: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  return {
    kind: 'unknown',
    reason: 'disconnected',
    message: `The call failed after it was sent (${e instanceof Error ? e.message : String(e)}): the tool may have run. It is not repeated.`,
  };
}

const isTimeoutData = (data: unknown) =>
  typeof (data as { timeout?: unknown } | undefined)?.timeout === 'number';
const stripPrefix = (message: string) => message.replace(/^MCP error -?\d+: /, '');
const kib = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
const tooLarge = (message: string) => hearthError('mcp.catalog_too_large', message);
