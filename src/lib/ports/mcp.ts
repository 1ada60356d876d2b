import type { HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import type { McpCallResult, McpCatalog, McpServer, McpTool } from '$lib/domain/mcp';
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
export type McpTarget = Pick<McpServer, 'id' | 'endpoint' | 'headers' | 'protocolVersion'>;

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
  /** Ends a server's open connection (its registration changed or went away). */
  forget(serverId: string): Promise<void>;
}
