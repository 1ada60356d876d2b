import { z } from 'zod';

/**
 * The agent profile JSON, schema 5 (runtime.md §3.2). Every object is closed: a key the
 * schema does not know is rejected (`agent.profile_unknown_field`); retired schema 1–4 fields
 * never reach this schema because `migrateProfile` discards them first (D8).
 *
 * The schema checks shape only (types, enums, required keys) and fills defaults. The rules with
 * their own codes (blank names, empty lists, tool surface, roots…) live in `validate.ts`.
 * Strings are kept byte-for-byte: nothing is trimmed here.
 */

export const PROFILE_SCHEMA_VERSION = 5;
/** The spec's kind string, kept so documents move between Hearth and TauriTavern unchanged. */
export const PROFILE_KIND = 'tauritavern.agentProfile';

export const PRESET_MODES = ['currentPromptSnapshot', 'ref', 'none'] as const;
export const MODEL_MODES = ['currentPromptSnapshot', 'connectionRef', 'requiresConfiguration'] as const;
export const PRESENTATIONS = ['foreground', 'background'] as const;
export const PLAN_MODES = ['none', 'free', 'strict', 'hybrid'] as const;

export const DEFAULT_MODEL_RETRY = { maxRetries: 3, intervalMs: 3000 } as const;
export const DEFAULT_EXTERNAL_RESULT_INLINE_CHAR_LIMIT = 50_000;
export const DEFAULT_CHAT_ROOTS = ['output', 'scratch', 'plan', 'summaries', 'persist'];

export const mainArtifact = () => ({
  id: 'main',
  path: 'output/main.md',
  kind: 'markdown',
  target: 'messageBody' as const,
  required: true,
  assemblyOrder: 0,
});

const text = z.string();
const int = z.int();

const presetSchema = z.strictObject({
  mode: z.enum(PRESET_MODES),
  ref: z.strictObject({ apiId: text, name: text }).optional(),
  required: z.boolean().default(false),
  reasoningEffort: text.optional(),
});

const modelSchema = z.strictObject({
  mode: z.enum(MODEL_MODES),
  connectionRef: text.optional(),
  modelId: text.optional(),
});

const runSchema = z.strictObject({
  presentation: z.enum(PRESENTATIONS),
  stream: z.boolean().default(false),
  directRunnable: z.boolean().default(true),
  modelRetry: z
    .strictObject({
      maxRetries: int.default(DEFAULT_MODEL_RETRY.maxRetries),
      intervalMs: int.default(DEFAULT_MODEL_RETRY.intervalMs),
    })
    .prefault({}),
});

const contextSchema = z.strictObject({
  initialChatHistoryMessages: int.default(-1),
  includeActivatedWorldInfo: z.boolean().default(true),
});

const delegationSchema = z.strictObject({
  canDelegate: z.boolean().default(false),
  canHandoff: z.boolean().default(false),
  callable: z.boolean().default(false),
  allowAsSubagent: z.boolean().default(false),
  allowAsHandoffTarget: z.boolean().default(false),
  allowNestedDelegation: z.boolean().default(false),
  allowedCallers: z.array(text).default(() => ['*']),
  descriptionForAgents: text.nullable().default(null),
  maxConcurrentInvocations: int.default(3),
  maxInvocationsPerRun: int.default(8),
  resultBudgetTokens: int.default(8000),
  maxHandoffDepth: int.default(8),
});

const instructionsSchema = z.strictObject({
  agentSystemPrompt: text.nullable().default(null),
});

export const toolDescriptionSchema = z.strictObject({
  description: text.optional(),
  properties: z.record(text, text).optional(),
});

const toolsSchema = z.strictObject({
  allow: z.array(text),
  deny: z.array(text).default(() => []),
  toolDescriptions: z.record(text, toolDescriptionSchema).default(() => ({})),
  /** A Hearth addition (D20): tools that ask the person before each call; absent = none. */
  ask: z.array(text).optional(),
  externalResultInlineCharLimit: int.default(DEFAULT_EXTERNAL_RESULT_INLINE_CHAR_LIMIT),
});

const skillsSchema = z.strictObject({
  visible: z.array(text),
  deny: z.array(text).default(() => []),
});

const workspaceSchema = z.strictObject({
  visibleRoots: z.array(text).default(() => [...DEFAULT_CHAT_ROOTS]),
  writableRoots: z.array(text).default(() => [...DEFAULT_CHAT_ROOTS]),
});

const planSchema = z.strictObject({
  mode: z.enum(PLAN_MODES),
  beta: z.boolean().default(true),
  nodes: z.array(z.strictObject({ id: text, title: text, locked: z.boolean() })).default(() => []),
});

export const artifactSchema = z.strictObject({
  id: text,
  path: text,
  kind: text,
  target: z.literal('messageBody'),
  required: z.boolean().default(false),
  assemblyOrder: int.default(0),
});

const outputSchema = z.strictObject({
  artifacts: z.array(artifactSchema).default(() => [mainArtifact()]),
});

/** A schema-5 profile; `context`, `delegation` and `instructions` may be omitted. */
export const profileSchema = z.strictObject({
  schemaVersion: z.literal(PROFILE_SCHEMA_VERSION).default(PROFILE_SCHEMA_VERSION),
  kind: z.literal(PROFILE_KIND).default(PROFILE_KIND),
  id: text,
  displayName: text,
  description: text.optional(),
  preset: presetSchema,
  model: modelSchema,
  run: runSchema,
  context: contextSchema.prefault({}),
  delegation: delegationSchema.prefault({}),
  instructions: instructionsSchema.prefault({}),
  tools: toolsSchema,
  skills: skillsSchema,
  workspace: workspaceSchema,
  plan: planSchema,
  output: outputSchema,
});

/** A decoded profile: every default filled in. */
export type ProfileV5 = z.output<typeof profileSchema>;
/** What a schema-5 profile may look like on the way in (defaults may be omitted). */
export type ProfileV5Input = z.input<typeof profileSchema>;
export type ModelBinding = ProfileV5['model'];
export type ModelMode = ModelBinding['mode'];
export type ToolDescriptionOverride = z.output<typeof toolDescriptionSchema>;
export type ArtifactSpec = z.output<typeof artifactSchema>;
