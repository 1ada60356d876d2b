import { z } from 'zod';
import type { JsonObject } from '$lib/domain/json';
import type { ModelToolSpec } from '$lib/domain/model';
import type { BuiltinTool, ToolScope } from '$lib/tools/tool';

/**
 * The frozen set of tools one invocation may call: the model-facing specs and the call-name map.
 * Model calls are decoded only through `byCallName` (never `obj[name]`).
 */
export interface ToolSnapshot {
  readonly specs: readonly ModelToolSpec[];
  readonly byCallName: ReadonlyMap<string, BuiltinTool>;
}

export function buildToolSnapshot(tools: readonly BuiltinTool[], scope: ToolScope): ToolSnapshot {
  const inScope = tools.filter((t) => t.scopes.includes(scope)).sort((a, b) => a.id.localeCompare(b.id));
  const byCallName = new Map<string, BuiltinTool>();
  for (const tool of inScope) {
    if (byCallName.has(tool.callName)) throw new Error(`duplicate tool call name ${tool.callName}`);
    byCallName.set(tool.callName, tool);
  }
  const specs = inScope.map((tool) => ({
    name: tool.callName,
    description: tool.description,
    parameters: z.toJSONSchema(tool.parameters) as JsonObject,
  }));
  return { specs, byCallName };
}

export const callNames = (snapshot: ToolSnapshot): string[] => [...snapshot.byCallName.keys()];
