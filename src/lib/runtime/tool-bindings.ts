import type { ErrorCode } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import { isJsonObject } from '$lib/domain/json';
import type { ToolId } from '$lib/domain/tool-id';
import type { ToolScope } from '$lib/domain/tool-scope';
import type { CatalogTool } from './tool-catalog';

/** The tool part of a profile (runtime.md §3.2): what an invocation may call. */
export interface ToolPolicy {
  allow: readonly ToolId[];
  deny: readonly ToolId[];
  toolDescriptions: Readonly<Record<string, { description?: string; properties?: Record<string, string> }>>;
  /** Tools that ask the person before each call (D20); the rest run when called. */
  ask?: readonly ToolId[];
}

/** Whether a call runs as soon as the gate passes it, or waits for the person first (D20). */
export type ApprovalMode = 'allow' | 'ask';

/** A tool bound for one invocation: the catalog entry with the profile's wording applied. */
export interface ToolBinding {
  tool: CatalogTool;
  description: string;
  parameters: JsonObject;
  approval: ApprovalMode;
}

/** A tool left out of an invocation, and why (journaled with the context it was assembled for). */
export interface BindingDiagnostic {
  toolId: ToolId;
  code: ErrorCode;
  message: string;
}

/**
 * Bindings (tools.md §4.1): each id of `allow` in order, then the MCP and extension tools their
 * pages offer, unless denied (deny wins), present in the catalog, available in the scope, not
 * withheld, and taking images only where the model does. Tools left out get a diagnostic; their
 * selection stays in the profile.
 */
export function prepareBindings(
  catalog: readonly CatalogTool[],
  policy: ToolPolicy,
  scope: ToolScope,
  acceptsImages = false,
): { bindings: ToolBinding[]; diagnostics: BindingDiagnostic[] } {
  const byId = new Map(catalog.map((t) => [t.toolId, t] as const));
  const denied = new Set(policy.deny);
  const allowed = new Set(policy.allow);
  const asked = new Set(policy.ask ?? []);
  const bindings: ToolBinding[] = [];
  const diagnostics: BindingDiagnostic[] = [];
  // MCP and extension tools are chosen on their pages (Ask or Allow): a profile need not list
  // them, only deny.
  const offered = catalog.filter((t) => t.source !== 'builtin').map((t) => t.toolId);
  for (const toolId of new Set([...policy.allow, ...offered])) {
    if (denied.has(toolId)) continue;
    const tool = byId.get(toolId);
    if (!tool) {
      diagnostics.push({ toolId, code: 'tool.unavailable', message: `${toolId} is not available now.` });
      continue;
    }
    if (!tool.facts.scopes.includes(scope)) {
      // An offered tool of the other kind of run is no news; one the profile names is.
      if (!allowed.has(toolId)) continue;
      diagnostics.push({
        toolId,
        code: 'tool.not_in_scope',
        message: `${toolId} is not available in ${scope}s.`,
      });
      continue;
    }
    if (tool.withheld) {
      diagnostics.push({ toolId, ...tool.withheld });
      continue;
    }
    if (tool.needsImageInput && !acceptsImages) {
      diagnostics.push({
        toolId,
        code: 'extension.tool_needs_image_input',
        message: `${toolId} returns images, and this model does not take images.`,
      });
      continue;
    }
    const override = Object.hasOwn(policy.toolDescriptions, toolId)
      ? policy.toolDescriptions[toolId]
      : undefined;
    bindings.push({
      tool,
      description: override?.description?.trim() || tool.description,
      parameters: withPropertyDescriptions(tool.parameters, override?.properties ?? {}),
      approval: asked.has(toolId) || tool.approval === 'ask' ? 'ask' : 'allow',
    });
  }
  return { bindings, diagnostics };
}

/** A copy of the schema with profile texts for named top-level properties; the canonical one is untouched. */
function withPropertyDescriptions(schema: JsonObject, texts: Record<string, string>): JsonObject {
  const entries = Object.entries(texts).filter(([, t]) => t.trim());
  if (entries.length === 0) return schema;
  const copy = structuredClone(schema);
  const properties = copy.properties;
  if (!isJsonObject(properties)) return copy;
  for (const [name, text] of entries) {
    const prop = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (isJsonObject(prop)) prop.description = text.trim();
  }
  return copy;
}
