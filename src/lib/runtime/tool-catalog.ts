import { z } from 'zod';
import { err, ok, type Result } from '$lib/domain/result';
import type { HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import type { ToolId } from '$lib/domain/tool-id';
import type { ToolScope } from '$lib/domain/tool-scope';
import type { BuiltinTool } from '$lib/tools/tool';

export type ToolSourceKind = 'builtin' | 'mcp' | 'extension';

/**
 * One tool the host knows about (tools.md §1): builtin, discovered MCP, or registered extension.
 * The snapshot never stores executable functions for external tools; they are looked up by
 * ToolId when a call is dispatched.
 */
export interface CatalogTool {
  toolId: ToolId;
  source: ToolSourceKind;
  nativeName: string;
  description: string;
  /** The canonical JSON Schema of the parameters (object root); never modified per provider. */
  parameters: JsonObject;
  scopes: readonly ToolScope[];
  /** MCP: the registration's display name, used to derive call names. */
  serverName?: string;
  /** Builtins: the implementation with its closed zod schema. */
  builtin?: BuiltinTool;
}

/** A provider of catalog entries: builtins now; MCP catalogs and extension registrations later. */
export interface ToolSource {
  readonly kind: ToolSourceKind;
  list(): readonly CatalogTool[];
}

export const builtinSource = (tools: readonly BuiltinTool[]): ToolSource => ({
  kind: 'builtin',
  list: () =>
    tools.map((tool) => ({
      toolId: tool.id,
      source: 'builtin' as const,
      nativeName: tool.name,
      description: tool.description,
      parameters: z.toJSONSchema(tool.parameters) as JsonObject,
      scopes: tool.scopes,
      builtin: tool,
    })),
});

/** The catalog: every source's tools ordered by ToolId; a duplicate id is an error. */
export function buildCatalog(sources: readonly ToolSource[]): Result<readonly CatalogTool[], HearthError> {
  const all = sources.flatMap((s) => s.list());
  all.sort((a, b) => (a.toolId < b.toolId ? -1 : a.toolId > b.toolId ? 1 : 0));
  for (let i = 1; i < all.length; i++) {
    if (all[i]!.toolId === all[i - 1]!.toolId) {
      return err({
        code: 'tool.catalog_duplicate_id',
        message: `Two tools share the id ${all[i]!.toolId}.`,
      });
    }
  }
  return ok(all);
}
