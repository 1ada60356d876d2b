import type { ToolHints } from '$lib/domain/events';
import { z } from 'zod';
import type { ToolFacts } from '$lib/domain/builtin-tools';
import type { ErrorCode, HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import { err, ok, type Result } from '$lib/domain/result';
import type { ToolId } from '$lib/domain/tool-id';
import { failure, type BuiltinTool, type ToolContext, type ToolOutcome } from '$lib/tools/tool';
import { validateToolInput } from '$lib/tools/validate';

export type ToolSourceKind = 'builtin' | 'mcp' | 'extension';

/**
 * One tool the host knows about (tools.md §1): builtin, discovered MCP, or registered extension,
 * with its facts. The catalog and snapshots hold data only; calls go back to the provider that
 * listed the tool.
 */
export interface CatalogTool {
  toolId: ToolId;
  source: ToolSourceKind;
  nativeName: string;
  description: string;
  /** The canonical JSON Schema of the parameters (object root); never modified per provider. */
  parameters: JsonObject;
  facts: ToolFacts;
  /** Where the person is told the tool comes from (an approval names it): `Hearth`, a server, an extension. */
  origin: string;
  /** MCP: the registration's display name, used to derive call names. */
  serverName?: string;
  /** The tool's own source asks the person before each call (an MCP tool set to Ask). */
  approval?: 'ask';
  /**
   * What an approval shows beside the tool: an MCP server's endpoint host and claimed hints, the
   * hosts an extension may reach.
   */
  hints?: ToolHints;
  /** Offered only to invocations whose model takes images (an extension's `returnsImages`). */
  needsImageInput?: boolean;
  /** Listed but not offered now, and why (an extension disabled or that did not load). */
  withheld?: { code: ErrorCode; message: string };
}

/** A call's arguments checked by its provider: the input `execute` takes, or the model-facing error. */
export type CheckedInput = { ok: true; input: unknown } | { ok: false; outcome: ToolOutcome };

/**
 * A source of tools (the port the loop sees: builtins, MCP servers, extensions). `list` is what
 * the catalog offers now, from memory, never the network; `check` validates a call's
 * arguments before the gate may ask the person about them; `execute` runs it. Recoverable
 * failures are outcomes; system failures throw.
 */
export interface ToolProvider {
  readonly kind: ToolSourceKind;
  /** Resolves once `list` has what storage holds (a provider that loads it at start-up). */
  ready?(): Promise<void>;
  list(): readonly CatalogTool[];
  check(tool: CatalogTool, args: JsonObject): CheckedInput;
  execute(tool: CatalogTool, input: unknown, ctx: ToolContext): Promise<ToolOutcome>;
  /** "Always allow" for a tool whose own source asks (`CatalogTool.approval`). */
  alwaysAllow?(tool: CatalogTool): Promise<void>;
}

/** The builtin tools as a provider: closed zod schemas, the tool's own `execute`. */
export function builtinProvider(tools: readonly BuiltinTool[]): ToolProvider {
  const byId = new Map(tools.map((t) => [t.id, t] as const));
  const builtin = (tool: CatalogTool) => {
    const found = byId.get(tool.toolId);
    if (!found) throw new Error(`internal: ${tool.toolId} is not a builtin of this provider`);
    return found;
  };
  return {
    kind: 'builtin',
    list: () =>
      tools.map((tool) => ({
        toolId: tool.id,
        source: 'builtin' as const,
        nativeName: tool.name,
        description: tool.description,
        parameters: z.toJSONSchema(tool.parameters) as JsonObject,
        facts: tool.facts,
        origin: 'Hearth',
      })),
    check(tool, args) {
      const input = validateToolInput(builtin(tool), args);
      return input.ok
        ? { ok: true, input: input.value }
        : { ok: false, outcome: failure('tool.invalid_arguments', input.error) };
    },
    execute: (tool, input, ctx) => builtin(tool).execute(input as never, ctx),
  };
}

/** The providers of a runtime, by the kind of tools they list. */
export type ToolProviders = ReadonlyMap<ToolSourceKind, ToolProvider>;

export const toolProviders = (providers: readonly ToolProvider[]): ToolProviders =>
  new Map(providers.map((p) => [p.kind, p] as const));

/** The catalog once every provider has loaded what storage holds (a run's preparation). */
export async function currentCatalog(
  providers: ToolProviders,
): Promise<Result<readonly CatalogTool[], HearthError>> {
  await Promise.all([...providers.values()].map((p) => p.ready?.()));
  return buildCatalog(providers.values());
}

/** The catalog: every provider's tools ordered by ToolId; a duplicate id is an error. */
export function buildCatalog(providers: Iterable<ToolProvider>): Result<readonly CatalogTool[], HearthError> {
  const all = [...providers].flatMap((p) => p.list());
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
