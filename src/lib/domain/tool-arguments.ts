import { isJsonObject, type JsonObject } from './json';

/**
 * ToolArguments (tools.md §6), the single conversion point for wire arguments: an object or its
 * JSON-string encoding. Missing, `null`, `""`, `"null"` and `"{}"` all mean no arguments.
 * Anything else is kept verbatim as invalid and rejected before dispatch.
 */
export type ToolArguments = { kind: 'object'; value: JsonObject } | { kind: 'invalid'; raw: string };

export const ECHO_CHARS = 200;

export function normalizeToolArguments(wire: unknown): ToolArguments {
  let value: unknown = wire;
  if (typeof wire === 'string') {
    if (wire.trim() === '') return { kind: 'object', value: {} };
    try {
      value = JSON.parse(wire);
    } catch {
      return { kind: 'invalid', raw: wire };
    }
  }
  if (value === null || value === undefined) return { kind: 'object', value: {} };
  if (isJsonObject(value)) return { kind: 'object', value };
  return { kind: 'invalid', raw: typeof wire === 'string' ? wire : JSON.stringify(wire) };
}

/** What providers are replayed: the object, or `{}` for invalid arguments. */
export const replayArguments = (args: ToolArguments): JsonObject =>
  args.kind === 'object' ? args.value : {};

/** The model-facing message of `tool.invalid_arguments` for unparseable arguments (D2). */
export function invalidArgumentsMessage(raw: string): string {
  const chars = Array.from(raw);
  const echo = chars.length > ECHO_CHARS ? `${chars.slice(0, ECHO_CHARS).join('')}…` : raw;
  return `Arguments must be a JSON object. Received: ${echo}`;
}
