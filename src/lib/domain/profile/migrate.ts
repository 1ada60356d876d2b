import type { z } from 'zod';
import type { HearthError } from '../errors';
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { err, ok, type Result } from '../result';
import { formatPath, problem, problemsToError, type ProfileProblem } from './problem';
import { PROFILE_KIND, PROFILE_SCHEMA_VERSION, profileSchema, type ProfileV5 } from './schema';

/**
 * Schema history (runtime.md §3.3):
 * - 1–2: bare tool names (`workspace.read_file`); `tools.maxRounds`, `maxCallsPerRun`,
 *   `maxCallsPerTool`; skill read budgets `skills.maxReadCharsPerCall`/`maxReadCharsPerRun`.
 * - 3: ToolIds (`builtin:` prefix) in allow, deny, toolDescriptions and maxCallsPerTool;
 *   adds `tools.mcpResultInlineCharLimit`.
 * - 4: drops `skill.*` and `agent.list` entries and the skill read budgets; renames
 *   `mcpResultInlineCharLimit` → `externalResultInlineCharLimit`; adds `run.stream` and
 *   `preset.reasoningEffort`.
 * - 5: removes `tools.maxRounds`, `maxCallsPerRun`, `maxCallsPerTool` and the delegate budget.
 *
 * One pure function serves every decoding boundary (storage reads, imports, editor drafts,
 * direct saves): retired fields are discarded silently at any version (D8), so a schema-5
 * profile that still carries one decodes the same as its older self; any other unknown field
 * is rejected. Every other choice is kept byte-for-byte, and no permission is ever added.
 */

export const MIN_PROFILE_SCHEMA_VERSION = 1;

/** Profile limits removed in schema 5, and skill read budgets removed in schema 4. */
export const RETIRED_TOOL_FIELDS = ['maxRounds', 'maxCallsPerRun', 'maxCallsPerTool'] as const;
export const RETIRED_SKILL_FIELDS = ['maxReadCharsPerCall', 'maxReadCharsPerRun'] as const;
/** Renamed in schema 4; its value moves to `externalResultInlineCharLimit`. */
export const LEGACY_INLINE_LIMIT_FIELD = 'mcpResultInlineCharLimit';
/** The delegate tool's `budget` parameter, retired in schema 5: its description override goes. */
const DELEGATE_TOOL_ID = 'builtin:agent.delegate';
const RETIRED_DELEGATE_PARAMETER = 'budget';

/** The E1 tools retired in schema 4: `skill.list/search/read/…` and `agent.list`. */
export const isRetiredToolId = (id: string): boolean =>
  id === 'builtin:agent.list' || id.startsWith('builtin:skill.');

/** Schema ≤ 2 named builtins bare; a name without a provider becomes a `builtin:` ToolId. */
const toToolId = (name: string): string => (name.includes(':') ? name : `builtin:${name}`);

/**
 * Decodes profile JSON of schema 1–5 into a schema-5 profile, or says why it cannot.
 * Use this at every decoding boundary; `validateProfile` then checks the semantic rules.
 */
export function migrateProfile(json: unknown): Result<ProfileV5, HearthError> {
  const decoded = migrateProfileDocument(json);
  return decoded.ok ? decoded : err(problemsToError(decoded.error));
}

/** `migrateProfile` with every problem listed (path + message), for editors and imports. */
export function migrateProfileDocument(json: unknown): Result<ProfileV5, ProfileProblem[]> {
  if (!isJsonObject(json)) {
    return err([problem('agent.profile_schema_unsupported', '', 'A profile must be a JSON object.')]);
  }
  const version = json.schemaVersion ?? PROFILE_SCHEMA_VERSION;
  if (
    typeof version !== 'number' ||
    !Number.isInteger(version) ||
    version < MIN_PROFILE_SCHEMA_VERSION ||
    version > PROFILE_SCHEMA_VERSION
  ) {
    return err([
      problem(
        'agent.profile_schema_unsupported',
        'schemaVersion',
        `Schema version ${JSON.stringify(version)} is not supported: Hearth reads profiles of schema ${MIN_PROFILE_SCHEMA_VERSION} to ${PROFILE_SCHEMA_VERSION}.`,
      ),
    ]);
  }
  if (json.kind !== undefined && json.kind !== PROFILE_KIND) {
    return err([
      problem(
        'agent.profile_kind_invalid',
        'kind',
        `kind must be "${PROFILE_KIND}", not ${JSON.stringify(json.kind)}: this is not an agent profile.`,
      ),
    ]);
  }

  const doc = structuredClone(json);
  if (version <= 2) rewriteBareToolNames(doc);
  discardRetired(doc);
  doc.schemaVersion = PROFILE_SCHEMA_VERSION;

  const parsed = profileSchema.safeParse(doc, { reportInput: true });
  if (parsed.success) return ok(parsed.data);
  return err(parsed.error.issues.flatMap(issueProblems));
}

function rewriteBareToolNames(doc: JsonObject): void {
  const tools = doc.tools;
  if (!isJsonObject(tools)) return;
  for (const key of ['allow', 'deny']) {
    const list = tools[key];
    if (Array.isArray(list)) tools[key] = list.map((v) => (typeof v === 'string' ? toToolId(v) : v));
  }
  for (const key of ['toolDescriptions', 'maxCallsPerTool']) {
    const map = tools[key];
    if (isJsonObject(map)) tools[key] = mapKeys(map, toToolId);
  }
}

function discardRetired(doc: JsonObject): void {
  const tools = doc.tools;
  if (isJsonObject(tools)) {
    for (const field of RETIRED_TOOL_FIELDS) delete tools[field];
    if (Object.hasOwn(tools, LEGACY_INLINE_LIMIT_FIELD)) {
      if (!Object.hasOwn(tools, 'externalResultInlineCharLimit')) {
        tools.externalResultInlineCharLimit = tools[LEGACY_INLINE_LIMIT_FIELD]!;
      }
      delete tools[LEGACY_INLINE_LIMIT_FIELD];
    }
    for (const key of ['allow', 'deny']) {
      const list = tools[key];
      if (Array.isArray(list)) {
        tools[key] = list.filter((v) => typeof v !== 'string' || !isRetiredToolId(v));
      }
    }
    const descriptions = tools.toolDescriptions;
    if (isJsonObject(descriptions)) {
      for (const id of Object.keys(descriptions)) if (isRetiredToolId(id)) delete descriptions[id];
      const delegate = descriptions[DELEGATE_TOOL_ID];
      if (isJsonObject(delegate) && isJsonObject(delegate.properties)) {
        delete delegate.properties[RETIRED_DELEGATE_PARAMETER];
      }
    }
  }
  const skills = doc.skills;
  if (isJsonObject(skills)) for (const field of RETIRED_SKILL_FIELDS) delete skills[field];
}

function mapKeys(map: JsonObject, f: (key: string) => string): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(map)) out[f(key)] = value;
  return out;
}

const describeInput = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number' && !Number.isInteger(v)) return `the number ${v}`;
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v as JsonValue)}`;
};

const EXPECTED: Record<string, string> = {
  string: 'a string',
  int: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  record: 'an object',
};

function issueProblems(issue: z.core.$ZodIssue): ProfileProblem[] {
  const path = issue.path;
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) =>
        problem(
          'agent.profile_unknown_field',
          formatPath([...path, key]),
          `Unknown field "${key}": schema-5 profiles have no such field. Remove it.`,
        ),
      );
    case 'invalid_type': {
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      const message =
        issue.input === undefined
          ? `Required: expected ${expected}.`
          : `Expected ${expected}, not ${describeInput(issue.input)}.`;
      return [problem('agent.profile_invalid', formatPath(path), message)];
    }
    case 'invalid_value':
      return [
        problem(
          'agent.profile_invalid',
          formatPath(path),
          `Must be ${issue.values.length > 1 ? 'one of ' : ''}${issue.values.map((v) => JSON.stringify(v)).join(', ')}.`,
        ),
      ];
    default:
      return [problem('agent.profile_invalid', formatPath(path), issue.message)];
  }
}
