import type { Brand } from './brand';
import { hearthError, type HearthError } from './errors';
import { err, ok, type Result } from './result';

/** Stable tool identity: `builtin:<name>`, `mcp/<registration-id>:<name>`, `extension/<id>:<name>`. */
export type ToolId = Brand<string, 'ToolId'>;

/** The parts of a ToolId (tools.md §2), discriminated on the tool's source. */
export type ParsedToolId =
  | { source: 'builtin'; nativeName: string }
  | { source: 'mcp'; registrationId: string; nativeName: string }
  | { source: 'extension'; extensionId: string; nativeName: string };

export type ToolSource = ParsedToolId['source'];

type ProviderParts =
  | { source: 'builtin' }
  | { source: 'mcp'; registrationId: string }
  | { source: 'extension'; extensionId: string };

const SEPARATOR = ':';
const MCP_PREFIX = 'mcp/';
const EXTENSION_PREFIX = 'extension/';
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const builtinToolId = (nativeName: string): ToolId => `builtin:${nativeName}` as ToolId;

/** Builtins keep fixed call names: the native name with `.` replaced by `_` (D1). */
export const builtinCallName = (nativeName: string): string => nativeName.replaceAll('.', '_');

function parseProviderId(provider: string): Result<ProviderParts, HearthError> {
  if (provider === '')
    return err(hearthError('tool.provider_id_empty', 'A tool provider id cannot be empty.'));
  if (provider.includes(SEPARATOR))
    return err(hearthError('tool.provider_id_invalid', `Tool provider id "${provider}" cannot contain ":".`));
  if (provider === 'builtin') return ok({ source: 'builtin' });
  if (provider.startsWith(MCP_PREFIX)) {
    const registrationId = provider.slice(MCP_PREFIX.length);
    // Not normalized: ToolIds are compared as strings, so one registration must have one spelling.
    if (CANONICAL_UUID.test(registrationId)) return ok({ source: 'mcp', registrationId });
    return err(
      hearthError(
        'tool.provider_id_invalid',
        `MCP provider id "${provider}" must be "mcp/" followed by a canonical lowercase UUID.`,
      ),
    );
  }
  if (provider.startsWith(EXTENSION_PREFIX)) {
    const extensionId = provider.slice(EXTENSION_PREFIX.length);
    if (extensionId !== '') return ok({ source: 'extension', extensionId });
    return err(
      hearthError('tool.provider_id_invalid', 'Extension provider id "extension/" names no extension.'),
    );
  }
  return err(
    hearthError(
      'tool.provider_id_invalid',
      `Unknown tool provider "${provider}": expected "builtin", "mcp/<registration-id>" or "extension/<id>".`,
    ),
  );
}

function checkNativeName(nativeName: string): HearthError | undefined {
  if (nativeName === '') return hearthError('tool.native_name_empty', 'A tool native name cannot be empty.');
  if (nativeName.includes(SEPARATOR))
    return hearthError('tool.native_name_invalid', `Tool native name "${nativeName}" cannot contain ":".`);
  return undefined;
}

/** Splits a serialized ToolId at its first `:` and checks the provider id and native name (tools.md §2). */
export function parseToolId(raw: string): Result<ParsedToolId, HearthError> {
  const at = raw.indexOf(SEPARATOR);
  if (at < 0)
    return err(hearthError('tool.id_invalid', `Tool id "${raw}" must be "<provider>:<native name>".`));
  const provider = parseProviderId(raw.slice(0, at));
  if (!provider.ok) return provider;
  const nativeName = raw.slice(at + 1);
  const invalid = checkNativeName(nativeName);
  if (invalid) return err(invalid);
  return ok({ ...provider.value, nativeName });
}

/** Brands a serialized ToolId after checking it; the way to read ids from profiles and records. */
export function toToolId(raw: string): Result<ToolId, HearthError> {
  const parsed = parseToolId(raw);
  return parsed.ok ? ok(raw as ToolId) : parsed;
}

const providerIdOf = (parts: ParsedToolId): string => {
  switch (parts.source) {
    case 'builtin':
      return 'builtin';
    case 'mcp':
      return `${MCP_PREFIX}${parts.registrationId}`;
    case 'extension':
      return `${EXTENSION_PREFIX}${parts.extensionId}`;
  }
};

/** The inverse of `parseToolId`; parts that would not parse back to themselves are rejected. */
export function formatToolId(parts: ParsedToolId): Result<ToolId, HearthError> {
  const provider = providerIdOf(parts);
  const checked = parseProviderId(provider);
  if (!checked.ok) return checked;
  const invalid = checkNativeName(parts.nativeName);
  if (invalid) return err(invalid);
  return ok(`${provider}${SEPARATOR}${parts.nativeName}` as ToolId);
}

export const mcpToolId = (registrationId: string, nativeName: string): Result<ToolId, HearthError> =>
  formatToolId({ source: 'mcp', registrationId, nativeName });

export const extensionToolId = (extensionId: string, nativeName: string): Result<ToolId, HearthError> =>
  formatToolId({ source: 'extension', extensionId, nativeName });

/** Catalog order: the full id string by UTF-16 code units, the same on every machine and locale. */
export const compareToolIds = (a: ToolId, b: ToolId): number => (a < b ? -1 : a > b ? 1 : 0);

/** A catalog's ids in catalog order; a catalog holds each id once (`tool.catalog_duplicate_id`). */
export function sortCatalog(ids: readonly ToolId[]): Result<ToolId[], HearthError> {
  const sorted = [...ids].sort(compareToolIds);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] === sorted[i - 1])
      return err(hearthError('tool.catalog_duplicate_id', `The tool catalog lists "${sorted[i]}" twice.`));
  }
  return ok(sorted);
}
