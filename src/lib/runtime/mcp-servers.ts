import { decodeBase64 } from '$lib/domain/base64';
import type { ToolFacts } from '$lib/domain/builtin-tools';
import { hearthError, HearthFailure, type HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import {
  checkServerDraft,
  mcpResultForModel,
  mcpServerErrorForModel,
  missingHeaderValues,
  needsApproval,
  notOffered,
  offeredTools,
  permissionOf,
  type McpCatalog,
  type McpModelResult,
  type McpPermission,
  type McpServer,
  type McpServerDraft,
  type McpTool,
} from '$lib/domain/mcp';
import { withImageNotes } from '$lib/domain/tool-result';
import { mcpToolId } from '$lib/domain/tool-id';
import type { ImageNormalizer } from '$lib/ports/images';
import { previewToolImages } from './tool-images';
import type { Clock } from '$lib/ports/clock';
import { SIGN_IN_TTL_MS, signInStatus, type McpSignInStatus } from '$lib/domain/mcp-credentials';
import type {
  McpCallOutcome,
  McpChanges,
  McpConnector,
  McpCredentialStore,
  McpSignInStep,
  McpStore,
} from '$lib/ports/mcp';
import { failure, success, type ToolOutcome } from '$lib/tools/tool';
import type { CatalogTool, ToolProvider } from './tool-catalog';

/** MCP tools reach the network; children and the shell may use them like any tool the invocation has. */
const MCP_FACTS: ToolFacts = {
  scopes: ['chat', 'session'],
  effect: 'network',
  fromShell: true,
  forChildren: true,
};

/** A discovered tool as the servers page shows it. */
export interface McpToolRow extends McpTool {
  toolId: string;
  permission: McpPermission;
  /** Why agents do not get it now, or null when they do. */
  notOffered: string | null;
  alwaysAllowed: boolean;
}

export interface McpServerView {
  server: McpServer;
  /** Null before the first discovery; `stale` when the endpoint changed since. */
  catalog: (Pick<McpCatalog, 'discoveredAt' | 'protocolVersion' | 'server'> & { stale: boolean }) | null;
  tools: McpToolRow[];
  signIn: McpSignInStatus;
}

/** What the sign-in callback page passed back (the authorization server's redirect). */
export interface McpSignInCallback {
  state: string;
  code?: string;
  error?: string;
  errorDescription?: string;
}

/**
 * How a tool result reached the servers page's "Try": what the model would read, and its images
 * as data URLs when they are PNG, JPEG or WebP by their bytes (whatever type the server claimed).
 */
export type McpTryResult = Omit<McpModelResult, 'images'> & {
  outcome: McpCallOutcome['kind'];
  images: { label: string; dataUrl: string }[];
};

/**
 * The MCP servers a person registered (tools.md §15): registration, manual discovery, per-tool
 * permissions, and the tool provider runs get MCP tools from. Registrations and catalogs are
 * read from memory, loaded once from storage; only discovery and calls touch the network.
 */
export class McpServers {
  #servers = new Map<string, McpServer>();
  #catalogs = new Map<string, McpCatalog>();
  /** Another tab changed what is stored since this one last read it. */
  #stale = true;

  constructor(
    private readonly deps: {
      store: McpStore;
      credentials: McpCredentialStore;
      connector: McpConnector;
      /** The run's image normalization, so "Try it" shows what an agent would get. */
      images: ImageNormalizer;
      clock: Clock;
      newId: () => string;
      /** Without it, only this instance's own changes are seen (tests, a single tab). */
      changes?: McpChanges;
    },
  ) {
    deps.changes?.subscribe(() => (this.#stale = true));
  }

  /** What is stored changed under this instance (a restored backup): read it again, and tell the other tabs. */
  storedChanged(): void {
    this.#stale = true;
    this.deps.changes?.publish();
  }

  async list(): Promise<McpServerView[]> {
    await this.#load();
    return Promise.all([...this.#servers.values()].map((s) => this.#view(s)));
  }

  async create(draft: McpServerDraft): Promise<McpServerView> {
    const checked = orThrow(checkServerDraft(draft));
    const now = this.deps.clock.now();
    const server: McpServer = {
      id: this.deps.newId(),
      ...checked,
      state: 'paused',
      permissions: {},
      alwaysAllowed: {},
      createdAt: now,
      updatedAt: now,
    };
    await this.#save(server);
    return this.#view(server);
  }

  async update(id: string, draft: McpServerDraft): Promise<McpServerView> {
    const server = await this.#server(id);
    const checked = orThrow(checkServerDraft(draft));
    await this.deps.connector.forget(id);
    // A sign-in belongs to the endpoint and client it was made with.
    if (checked.endpoint !== server.endpoint || checked.oauthClientId !== server.oauthClientId) {
      await this.deps.credentials.delete(id);
    }
    const { oauthClientId: _, ...rest } = server;
    return this.#view(await this.#save({ ...rest, ...checked, updatedAt: this.deps.clock.now() }));
  }

  async setState(id: string, state: McpServer['state']): Promise<McpServerView> {
    const server = await this.#server(id);
    if (state === 'paused') await this.deps.connector.forget(id);
    return this.#view(await this.#save({ ...server, state, updatedAt: this.deps.clock.now() }));
  }

  async remove(id: string): Promise<void> {
    await this.#server(id);
    await this.deps.connector.forget(id);
    await this.deps.store.delete(id);
    this.deps.changes?.publish();
    this.#servers.delete(id);
    this.#catalogs.delete(id);
  }

  /** Asks the server for its tools (always the network) and keeps them; new tools arrive Off. */
  async discover(id: string, signal: AbortSignal): Promise<McpServerView> {
    const server = await this.#server(id);
    orThrow(ready(server));
    const found = await this.deps.connector.discover(server, signal);
    if (!found.ok) throw new HearthFailure(found.error);
    const catalog: McpCatalog = {
      serverId: id,
      endpoint: server.endpoint,
      discoveredAt: this.deps.clock.now(),
      protocolVersion: found.value.protocolVersion,
      server: found.value.server,
      tools: found.value.tools,
    };
    await this.deps.store.putCatalog(catalog);
    this.deps.changes?.publish();
    this.#catalogs.set(id, catalog);
    return this.#view(this.#servers.get(id) ?? server);
  }

  /** One tool's permission, or every discovered tool's (`tool` null). Off forgets Always allow too. */
  async setPermission(id: string, tool: string | null, permission: McpPermission): Promise<McpServerView> {
    const server = await this.#server(id);
    const names = tool === null ? (this.#catalogs.get(id)?.tools.map((t) => t.name) ?? []) : [tool];
    const permissions = { ...server.permissions };
    const alwaysAllowed = { ...server.alwaysAllowed };
    for (const name of names) {
      if (permission === 'off') delete permissions[name];
      else permissions[name] = permission;
      if (permission !== 'ask') delete alwaysAllowed[name];
    }
    return this.#view(
      await this.#save({ ...server, permissions, alwaysAllowed, updatedAt: this.deps.clock.now() }),
    );
  }

  /** "Always allow" from an approval: this tool stops asking while the server keeps this endpoint (D11). */
  async alwaysAllow(id: string, tool: string): Promise<void> {
    await this.#load();
    const server = this.#servers.get(id);
    if (!server || permissionOf(server, tool) !== 'ask') return;
    await this.#save({
      ...server,
      alwaysAllowed: { ...server.alwaysAllowed, [tool]: server.endpoint },
      updatedAt: this.deps.clock.now(),
    });
  }

  /**
   * Starts signing in (D1): the page then sends the person to `authorizationUrl` in a popup,
   * whose callback hands back a code and the `state` made here.
   */
  async signIn(id: string, redirectUrl: string, signal: AbortSignal): Promise<McpSignInStep> {
    const server = await this.#server(id);
    await this.deps.connector.forget(id);
    return orThrow(await this.deps.connector.signIn(server, redirectUrl, signal));
  }

  /** The callback's answer: its `state` must be one a sign-in here is waiting for. */
  async finishSignIn(callback: McpSignInCallback, signal: AbortSignal): Promise<McpServerView> {
    const pending = await this.deps.credentials.byState(callback.state);
    const started = pending?.pending?.startedAt;
    if (!pending || started === undefined || this.deps.clock.now() - started > SIGN_IN_TTL_MS) {
      throw new HearthFailure(
        hearthError(
          'mcp.sign_in_unknown',
          'This sign-in was not started here, or it took too long. Press Sign in again.',
        ),
      );
    }
    await this.deps.credentials.put({ ...pending, pending: undefined });
    const server = await this.#server(pending.serverId);
    if (!callback.code) {
      const why = [callback.error, callback.errorDescription].filter(Boolean).join(': ');
      throw new HearthFailure(
        hearthError(
          'mcp.auth_failed',
          `Signing in to ${server.displayName} was refused${why ? ` (${why})` : ''}.`,
        ),
      );
    }
    orThrow(await this.deps.connector.finishSignIn(server, callback.code, signal));
    return this.#view(server);
  }

  /** Forgets the tokens (the registered client stays, so the next sign-in is quicker). */
  async signOut(id: string): Promise<McpServerView> {
    const server = await this.#server(id);
    await this.deps.connector.forget(id);
    const stored = await this.deps.credentials.get(id);
    if (stored) {
      const { tokens: _t, tokensAt: _a, codeVerifier: _v, pending: _p, ...kept } = stored;
      await this.deps.credentials.put(kept);
    }
    return this.#view(server);
  }

  /** The servers page's "Try": one call with arguments typed by the person, whatever its permission. */
  async tryCall(id: string, tool: string, args: JsonObject, signal: AbortSignal): Promise<McpTryResult> {
    const server = await this.#server(id);
    const unready = ready(server);
    const outcome: McpCallOutcome = unready.ok
      ? await this.deps.connector.call(server, tool, args, signal)
      : { kind: 'not_sent', error: unready.error };
    const mapped = forModel(outcome);
    const preview = await previewToolImages(
      mapped.images.flatMap(({ data, label }) => {
        const bytes = decodeBase64(data);
        return bytes ? [{ bytes, label }] : [];
      }),
      this.deps.images,
    );
    const content = withImageNotes(mapped.content, preview.notes);
    return { ...mapped, content, images: preview.images, outcome: outcome.kind };
  }

  /** The tools runs get: offered tools of active servers, from memory. */
  provider(): ToolProvider {
    return {
      kind: 'mcp',
      // A run prepares from memory unless another tab changed the servers since they were read.
      ready: async () => {
        if (this.#stale) await this.#load();
      },
      list: () => [...this.#servers.values()].flatMap((server) => this.#catalogTools(server)),
      check: (_tool, args) => ({ ok: true, input: args }),
      execute: (tool, input, ctx) => this.#execute(tool, input as JsonObject, ctx.signal),
      alwaysAllow: (tool) => this.alwaysAllow(serverIdOf(tool), tool.nativeName),
    };
  }

  #catalogTools(server: McpServer): CatalogTool[] {
    const host = new URL(server.endpoint).host;
    return offeredTools(server, this.#catalogs.get(server.id)).flatMap((tool) => {
      const toolId = mcpToolId(server.id, tool.name);
      if (!toolId.ok) return [];
      return [
        {
          toolId: toolId.value,
          source: 'mcp' as const,
          nativeName: tool.name,
          description: [tool.title, tool.description].filter(Boolean).join(': ') || tool.name,
          parameters: tool.inputSchema,
          facts: MCP_FACTS,
          origin: server.displayName,
          serverName: server.displayName,
          ...(needsApproval(server, tool.name) ? { approval: 'ask' as const } : {}),
          hints: {
            endpointHost: host,
            readOnly: tool.annotations?.readOnlyHint,
            destructive: tool.annotations?.destructiveHint,
          },
        },
      ];
    });
  }

  /**
   * One call (tools.md §15.2-15.3). The registration is read again first: a server removed,
   * paused or set Off since the run began gets nothing sent. An answer that never came means
   * the tool may have run: the run ends, and nothing is repeated.
   */
  async #execute(tool: CatalogTool, args: JsonObject, signal: AbortSignal): Promise<ToolOutcome> {
    const serverId = serverIdOf(tool);
    const server = await this.deps.store.get(serverId);
    const notSent = (why: string) =>
      failure('mcp.not_sent', `\`${tool.nativeName}\` was not called: ${why}. Continue without it.`);
    if (!server) return notSent('its MCP server was removed');
    const discovered = this.#catalogs.get(serverId)?.tools.find((t) => t.name === tool.nativeName);
    const why = discovered ? notOffered(server, discovered) : 'the server no longer lists it';
    if (why) return notSent(why);
    const unready = ready(server);
    if (!unready.ok)
      return failure(unready.error.code, `\`${tool.nativeName}\` was not called: ${unready.error.message}`);
    const outcome = await this.deps.connector.call(server, tool.nativeName, args, signal);
    // Sent with no answer: the run must not go on as if the tool had not run (tools.md §15.3).
    if (outcome.kind === 'unknown') {
      throw new HearthFailure(
        hearthError(
          'mcp.call_outcome_unknown',
          `\`${tool.nativeName}\` on ${server.displayName}: ${outcome.message}`,
        ),
      );
    }
    if (outcome.kind === 'not_sent')
      return failure(outcome.error.code, `\`${tool.nativeName}\` was not called: ${outcome.error.message}`);
    const mapped = forModel(outcome);
    const images = mapped.images.map((i) => ({
      bytes: decodeBase64(i.data) ?? new Uint8Array(),
      label: i.label,
    }));
    if (!mapped.isError) return success(mapped.content, { structured: mapped.structured, images });
    const code =
      outcome.kind === 'server_error'
        ? 'mcp.server_error'
        : outcome.kind === 'unsupported'
          ? 'mcp.unsupported_response'
          : 'mcp.tool_error';
    return {
      ...failure(code, mapped.content),
      structured: { ...mapped.structured, error: { code, message: mapped.content } },
      images,
    };
  }

  async #view(server: McpServer): Promise<McpServerView> {
    const catalog = this.#catalogs.get(server.id);
    return {
      server,
      signIn: signInStatus(await this.deps.credentials.get(server.id), server.endpoint),
      catalog: catalog
        ? {
            discoveredAt: catalog.discoveredAt,
            protocolVersion: catalog.protocolVersion,
            server: catalog.server,
            stale: catalog.endpoint !== server.endpoint,
          }
        : null,
      tools: (catalog?.tools ?? []).map((tool) => ({
        ...tool,
        toolId: orThrow(mcpToolId(server.id, tool.name)),
        permission: permissionOf(server, tool.name),
        notOffered:
          catalog && catalog.endpoint !== server.endpoint
            ? 'the endpoint changed: discover again'
            : notOffered(server, tool),
        alwaysAllowed: server.alwaysAllowed[tool.name] === server.endpoint,
      })),
    };
  }

  async #server(id: string): Promise<McpServer> {
    await this.#load();
    const server = this.#servers.get(id);
    if (!server)
      throw new HearthFailure(
        hearthError('mcp.server_not_found', 'This MCP server is not registered any more.'),
      );
    return server;
  }

  async #save(server: McpServer): Promise<McpServer> {
    await this.deps.store.put(server);
    this.#servers.set(server.id, server);
    this.deps.changes?.publish();
    return server;
  }

  async #load(): Promise<void> {
    this.#stale = false;
    const [servers, catalogs] = await Promise.all([this.deps.store.list(), this.deps.store.catalogs()]);
    this.#servers = new Map(servers.map((s) => [s.id, s]));
    this.#catalogs = new Map(catalogs.map((c) => [c.serverId, c]));
  }
}

/** A server with a header that lost its value is not contacted: the header would go out empty. */
function ready(server: McpServer): { ok: true; value: null } | { ok: false; error: HearthError } {
  const missing = missingHeaderValues(server.headers);
  return missing
    ? {
        ok: false,
        error: hearthError(
          'mcp.server_invalid',
          `${server.displayName} has ${missing} under Edit on the MCP servers page. Nothing was sent.`,
        ),
      }
    : { ok: true, value: null };
}

const serverIdOf = (tool: CatalogTool) => tool.toolId.slice('mcp/'.length, tool.toolId.indexOf(':'));

function forModel(outcome: McpCallOutcome): McpModelResult {
  switch (outcome.kind) {
    case 'result':
      return mcpResultForModel(outcome.result);
    case 'server_error':
      return mcpServerErrorForModel(outcome.error);
    case 'unsupported':
      return {
        content: `The server's answer could not be used: ${outcome.message}`,
        structured: {},
        isError: true,
        images: [],
      };
    case 'not_sent':
      return {
        content: outcome.error.message,
        structured: { error: { code: outcome.error.code, message: outcome.error.message } },
        isError: true,
        images: [],
      };
    case 'unknown':
      return { content: outcome.message, structured: {}, isError: true, images: [] };
  }
}

const orThrow = <T>(r: { ok: true; value: T } | { ok: false; error: HearthError }): T => {
  if (!r.ok) throw new HearthFailure(r.error);
  return r.value;
};
