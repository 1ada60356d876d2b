import { z } from 'zod';
import type { JsonObject, JsonValue } from '$lib/domain/json';

/**
 * Lenient field readers for SillyTavern documents. Real cards, lorebooks and chats written by many
 * tools disagree on small things (`null` for an empty string, `"5"` for 5, a comma list for an array);
 * these readers accept those and fall back to a default, while clearly wrong shapes are reported by
 * the callers that need them to be right.
 */

export const JsonObjectSchema: z.ZodType<JsonObject> = z.record(
  z.string(),
  z.json(),
) as z.ZodType<JsonObject>;

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const MAX_DEPTH = 256;

/**
 * A deep copy of `v` as JSON, or `undefined` if it is not representable (functions, symbols,
 * `undefined`, nesting deeper than 256). Non-finite numbers become `null`, as in `JSON.stringify`.
 * Keys such as `__proto__` stay ordinary own properties.
 */
export function asJsonValue(v: unknown, depth = 0): JsonValue | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(v)) return v.map((x) => asJsonValue(x, depth + 1) ?? null);
  if (isRecord(v)) {
    const out: [string, JsonValue][] = [];
    for (const [k, x] of Object.entries(v)) {
      const j = asJsonValue(x, depth + 1);
      if (j !== undefined) out.push([k, j]);
    }
    return Object.fromEntries(out) as JsonObject;
  }
  return undefined;
}

export function asJsonObject(v: unknown): JsonObject {
  const j = isRecord(v) ? asJsonValue(v) : undefined;
  return j !== undefined && isRecord(j) ? (j as JsonObject) : {};
}

/** The fields of `obj` whose names are not in `known`, deep-copied as JSON. */
export function unknownFields(obj: Record<string, unknown>, known: ReadonlySet<string>): JsonObject {
  const out: [string, JsonValue][] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (known.has(k)) continue;
    const j = asJsonValue(v);
    if (j !== undefined) out.push([k, j]);
  }
  return Object.fromEntries(out) as JsonObject;
}

/**
 * `known` fields (those `undefined` left out), then the `extra` ones not named in `known`: a known
 * field always wins over a stale unknown copy.
 */
export function withExtra(extra: JsonObject, known: Record<string, JsonValue | undefined>): JsonObject {
  const out: [string, JsonValue][] = [];
  for (const [k, v] of Object.entries(known)) if (v !== undefined) out.push([k, v]);
  for (const [k, v] of Object.entries(extra)) if (!Object.hasOwn(known, k)) out.push([k, v]);
  return Object.fromEntries(out) as JsonObject;
}

export function str(v: unknown, fallback = ''): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return fallback;
}

export function num(v: unknown, fallback: number): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return fallback;
}

export function nullableNum(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = num(v, NaN);
  return Number.isNaN(n) ? null : n;
}

export function bool(v: unknown, fallback: boolean): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 1) return true;
  if (v === 'false' || v === 0) return false;
  return fallback;
}

export function nullableBool(v: unknown): boolean | null {
  return v === null || v === undefined ? null : bool(v, false);
}

/** An array of strings; a comma-separated string is split; other items are dropped. */
export function strList(v: unknown): string[] {
  if (typeof v === 'string') {
    return v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }
  if (!Array.isArray(v)) return [];
  const out: string[] = [];
  for (const x of v) {
    if (typeof x === 'string') out.push(x);
    else if (typeof x === 'number' && Number.isFinite(x)) out.push(String(x));
  }
  return out;
}
