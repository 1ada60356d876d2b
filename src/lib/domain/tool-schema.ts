import { isJsonObject, type JsonObject, type JsonValue } from './json';

/** The provider families whose tool-schema dialects differ (tools.md §3.4). */
export type ToolSchemaProvider = 'openai' | 'anthropic' | 'gemini';

const DROPPED_KEYWORDS: Record<ToolSchemaProvider, ReadonlySet<string>> = {
  openai: new Set(),
  anthropic: new Set(['$schema', '$id']),
  gemini: new Set([
    '$schema',
    '$id',
    '$defs',
    'definitions',
    'additionalProperties',
    'patternProperties',
    'unevaluatedProperties',
    'dependencies',
    'dependentRequired',
    'dependentSchemas',
    'allOf',
    'anyOf',
    'oneOf',
    'not',
    'if',
    'then',
    'else',
    'const',
    'default',
    'examples',
    'title',
  ]),
};

/** Keywords whose value is one sub-schema (`items` may also be a draft-4 tuple array). */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalItems',
  'unevaluatedItems',
  'additionalProperties',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'contentSchema',
  'not',
  'if',
  'then',
  'else',
]);
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to sub-schemas; the names themselves are never touched. */
const SCHEMA_MAP_KEYWORDS = new Set([
  'properties',
  'dependencies',
  'dependentSchemas',
  'patternProperties',
  'definitions',
  '$defs',
]);

// Object.fromEntries defines own properties, so a key such as `__proto__` is copied, not applied.
const copyJson = (value: JsonValue): JsonValue =>
  Array.isArray(value)
    ? value.map(copyJson)
    : isJsonObject(value)
      ? (Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyJson(v)])) as JsonObject)
      : value;

interface Pass {
  dropped: ReadonlySet<string>;
  gemini: boolean;
}

function sanitizeKeyword(key: string, value: JsonValue, pass: Pass): JsonValue {
  if (SCHEMA_KEYWORDS.has(key))
    return key === 'items' && Array.isArray(value)
      ? value.map((s) => sanitizeNode(s, pass, false))
      : sanitizeNode(value, pass, false);
  if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value))
    return value.map((s) => sanitizeNode(s, pass, false));
  if (SCHEMA_MAP_KEYWORDS.has(key) && isJsonObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([name, s]) => [name, sanitizeNode(s, pass, false)]),
    ) as JsonObject;
  return copyJson(value);
}

/** A copy of one schema node; values that are not schemas (booleans, name lists) are copied as is. */
function sanitizeNode(node: JsonValue, pass: Pass, root: boolean): JsonValue {
  if (!isJsonObject(node)) return copyJson(node);
  const out = Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !pass.dropped.has(key))
      .map(([key, value]) => [key, sanitizeKeyword(key, value, pass)]),
  ) as JsonObject;
  if (pass.gemini && root) pruneRootRequired(out);
  else if (pass.gemini) fixNestedForGemini(out);
  return out;
}

const hasProperties = (schema: JsonObject): boolean =>
  isJsonObject(schema.properties) && Object.keys(schema.properties).length > 0;

function pruneRootRequired(schema: JsonObject): void {
  if (!('required' in schema)) return;
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required)
    ? schema.required.filter((name) => typeof name === 'string' && Object.hasOwn(properties, name))
    : [];
  if (required.length > 0) schema.required = required;
  else delete schema.required;
}

// Gemini rejects an OBJECT without properties; runtime validation still checks the real shape.
function fixNestedForGemini(schema: JsonObject): void {
  delete schema.required;
  if (schema.type === 'object' && !hasProperties(schema)) {
    schema.type = 'string';
    delete schema.properties;
  }
}

/**
 * The schema to send to one provider (tools.md §3.4), always a fresh copy: the canonical schema
 * is never changed. Keywords are removed only where a sub-schema can stand, so a property that
 * is literally named `title` or `default` survives. For Gemini, a sub-schema that was only a
 * combinator (a zod union's `anyOf`) is left with no `type`, which Gemini accepts.
 */
export function sanitizeToolSchema(schema: JsonObject, provider: ToolSchemaProvider): JsonObject {
  const pass = { dropped: DROPPED_KEYWORDS[provider], gemini: provider === 'gemini' };
  return sanitizeNode(schema, pass, true) as JsonObject;
}
