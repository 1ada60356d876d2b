import type { Changes } from './changes';
import type { HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import type { McpCallResult, McpCatalog, McpServer, McpTool } from '$lib/domain/mcp';
import type { McpCredentials } from '$lib/domain/mcp-credentials';
import type { Result } from '$lib/domain/result';

/** Registered MCP servers and what discovery found on them (IndexedDB). */
export interface McpStore {
  list(): Promise<McpServer[]>;
  get(id: string): Promise<McpServer | undefined>;
  put(server: McpServer): Promise<void>;
  /** Removes the server and its catalog. */
  delete(id: string): Promise<void>;
  catalogs(): Promise<McpCatalog[]>;
  catalog(serverId: string): Promise<McpCatalog | undefined>;
  putCatalog(catalog: McpCatalog): Promise<void>;
}

/** What a connector needs of a registration to reach it. */
export type McpTarget = Pick<McpServer, 'id' | 'endpoint' | 'headers' | 'protocolVersion' | 'oauthClientId'>;

/** Sign-in results kept on this device, one row per server (IndexedDB). */
export interface McpCredentialStore {
  get(serverId: string): Promise<McpCredentials | undefined>;
  put(credentials: McpCredentials): Promise<void>;
  delete(serverId: string): Promise<void>;
  /** The server whose sign-in under way has this `state`. */
  byState(state: string): Promise<McpCredentials | undefined>;
}

/** Where a sign-in stands after asking the server: already good, or the page the person must visit. */
export type McpSignInStep = { kind: 'signed_in' } | { kind: 'visit'; authorizationUrl: string };

/** A server's tools as discovery lists them (every page, within the limits). */
export interface McpDiscovery {
  protocolVersion: string;
  server: McpCatalog['server'];
  tools: McpTool[];
}

/**
 * How a call ended (tools.md §15.3): the server's result or JSON-RPC error, a response Hearth
 * cannot read, not sent at all, or sent with no answer (it may have run: never retried).
 */
export type McpCallOutcome =
  | { kind: 'result'; result: McpCallResult }
  | { kind: 'server_error'; error: { code: number; message: string; data?: unknown } }
  | { kind: 'unsupported'; message: string }
  | { kind: 'not_sent'; error: HearthError }
  | { kind: 'unknown'; reason: 'cancelled' | 'timeout' | 'disconnected'; message: string };

/** The network side of MCP: Streamable HTTP from the runtime worker. */
export interface McpConnector {
  discover(target: McpTarget, signal: AbortSignal): Promise<Result<McpDiscovery, HearthError>>;
  call(target: McpTarget, tool: string, args: JsonObject, signal: AbortSignal): Promise<McpCallOutcome>;
  /** Starts an OAuth sign-in (tools.md §15, D1): metadata discovery, client registration, PKCE. */
  signIn(
    target: McpTarget,
    redirectUrl: string,
    signal: AbortSignal,
  ): Promise<Result<McpSignInStep, HearthError>>;
  /** Trades the code the callback brought back for tokens (its `state` was checked by the caller). */
  finishSignIn(target: McpTarget, code: string, signal: AbortSignal): Promise<Result<void, HearthError>>;
  /** Ends a server's open connection (its registration changed or went away). */
  forget(serverId: string): Promise<void>;
}

/** Tells the other tabs' runtimes that registrations or catalogs changed, so they read them again. */
export type McpChanges = Changes;
