import { hearthError, type HearthError } from '$lib/domain/errors';
import { isJsonObject, type JsonObject, type JsonValue } from '$lib/domain/json';
import { err, ok, type Result } from '$lib/domain/result';
import type { SamplerSettings } from '$lib/domain/sampler';
import { samplerSettingsSchema } from '$lib/domain/sampler';
import { asJsonObject, bool, isRecord, num, str } from '../json-fields';
import { PROMPT_ROLES, type PromptRole } from '../lorebook';
import {
  NAMES_BEHAVIORS,
  PresetSchema,
  type Preset,
  type PresetPrompt,
  type PromptOrderEntry,
} from './preset';

/**
 * SillyTavern Chat Completion preset JSON (`OpenAI Settings/*.json`) in and out. Import reads what
 * SillyTavern's prompt manager reads (openai.js `settingsToUpdate`, PromptManager.js) and keeps the
 * whole file, minus secrets, as `source`; export writes `source` back with only the fields whose
 * meaning changed rewritten, so a file round-trips byte for byte in meaning and fields Hearth does
 * not know (model choices, other prompt orders, newer keys) survive.
 */

/** SillyTavern reads only this prompt order (the global strategy's dummy character). */
export const GLOBAL_ORDER_ID = 100001;

/** Fields that hold credentials or where they may be: never imported (D18). */
const SECRET_KEYS = new Set(['proxy_password', 'reverse_proxy', 'custom_include_headers']);
const SECRET_PATTERN = /api_?key|password|secret/i;
export const isSecretKey = (key: string): boolean => SECRET_KEYS.has(key) || SECRET_PATTERN.test(key);

/** SillyTavern's order when a preset has none for 100001 (PromptManager.js default prompt order). */
const DEFAULT_ORDER: readonly PromptOrderEntry[] = [
  'main',
  'worldInfoBefore',
  'personaDescription',
  'charDescription',
  'charPersonality',
  'scenario',
  'enhanceDefinitions',
  'nsfw',
  'worldInfoAfter',
  'dialogueExamples',
  'chatHistory',
  'jailbreak',
].map((identifier) => ({ identifier, enabled: identifier !== 'enhanceDefinitions' }));

/** SillyTavern's built-in prompt definitions, re-added when a preset lacks one (PromptManager.js). */
const BUILT_IN_PROMPTS: readonly JsonObject[] = [
  {
    identifier: 'main',
    name: 'Main Prompt',
    system_prompt: true,
    role: 'system',
    content: "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}.",
  },
  { identifier: 'nsfw', name: 'Auxiliary Prompt', system_prompt: true, role: 'system', content: '' },
  { identifier: 'dialogueExamples', name: 'Chat Examples', system_prompt: true, marker: true },
  {
    identifier: 'jailbreak',
    name: 'Post-History Instructions',
    system_prompt: true,
    role: 'system',
    content: '',
  },
  { identifier: 'chatHistory', name: 'Chat History', system_prompt: true, marker: true },
  { identifier: 'worldInfoAfter', name: 'World Info (after)', system_prompt: true, marker: true },
  { identifier: 'worldInfoBefore', name: 'World Info (before)', system_prompt: true, marker: true },
  {
    identifier: 'enhanceDefinitions',
    role: 'system',
    name: 'Enhance Definitions',
    content:
      "If you have more knowledge of {{char}}, add to the character's lore and personality to enhance them but keep the Character Sheet's definitions absolute.",
    system_prompt: true,
    marker: false,
  },
  { identifier: 'charDescription', name: 'Char Description', system_prompt: true, marker: true },
  { identifier: 'charPersonality', name: 'Char Personality', system_prompt: true, marker: true },
  { identifier: 'scenario', name: 'Scenario', system_prompt: true, marker: true },
  { identifier: 'personaDescription', name: 'Persona Description', system_prompt: true, marker: true },
];

/** SillyTavern's defaults for the fields a preset may leave out (openai.js `default_settings`). */
const DEFAULTS = {
  new_chat_prompt: '[Start a new Chat]',
  new_group_chat_prompt: '[Start a new group chat. Group members: {{group}}]',
  new_example_chat_prompt: '[Example Chat]',
  continue_nudge_prompt:
    '[Continue the following message. Do not include ANY parts of the original message. Use capitalization and punctuation as if your reply is a part of the original message: {{lastChatMessage}}]',
  impersonation_prompt:
    "[Write your next reply from the point of view of {{user}}, using the chat history so far as a guideline for the writing style of {{user}}. Don't write as {{char}} or system. Don't describe actions of {{char}}.]",
  group_nudge_prompt: '[Write the next reply only as {{char}}.]',
  send_if_empty: '',
  wi_format: '{0}',
  scenario_format: '[Circumstances and context of the dialogue: {{scenario}}]',
  personality_format: "[{{char}}'s personality: {{personality}}]",
  openai_max_context: 4095,
} as const;

/** Preset keys of the sampler settings (each SillyTavern key, Hearth's name). */
const SAMPLER_KEYS = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['top_k', 'topK'],
  ['min_p', 'minP'],
  ['frequency_penalty', 'frequencyPenalty'],
  ['presence_penalty', 'presencePenalty'],
  ['repetition_penalty', 'repetitionPenalty'],
  ['openai_max_tokens', 'maxOutputTokens'],
] as const satisfies readonly (readonly [string, keyof SamplerSettings])[];

/**
 * Sampler settings a SillyTavern preset has no field for (its stop strings live in Advanced
 * Formatting, and it has no reasoning settings at 1ac6780): kept under Hearth's own keys, which
 * SillyTavern ignores, so an edited preset exported and imported again keeps them.
 */
const HEARTH_SAMPLER_KEYS = [
  ['hearth_stop', 'stop'],
  ['hearth_reasoning_effort', 'reasoningEffort'],
  ['hearth_reasoning_budget_tokens', 'reasoningBudgetTokens'],
] as const satisfies readonly (readonly [string, keyof SamplerSettings])[];

export interface ImportedPreset {
  preset: Preset;
  /** What was not taken, for the person (secrets left out, values out of range). */
  problems: string[];
}

const roleOf = (v: unknown): PromptRole =>
  typeof v === 'string' && (PROMPT_ROLES as readonly string[]).includes(v) ? (v as PromptRole) : 'system';

function promptFromSt(raw: Record<string, unknown>): PresetPrompt {
  return {
    identifier: str(raw.identifier),
    name: str(raw.name, str(raw.identifier)),
    role: roleOf(raw.role),
    content: str(raw.content),
    systemPrompt: bool(raw.system_prompt, false),
    marker: bool(raw.marker, false),
    injectionPosition: num(raw.injection_position, 0) === 1 ? 'depth' : 'relative',
    injectionDepth: Math.max(0, Math.trunc(num(raw.injection_depth, 4))),
    forbidOverrides: bool(raw.forbid_overrides, false),
  };
}

/** A prompt as SillyTavern writes it. */
function promptToSt(p: PresetPrompt): JsonObject {
  return {
    identifier: p.identifier,
    name: p.name,
    system_prompt: p.systemPrompt,
    role: p.role,
    content: p.content,
    marker: p.marker,
    injection_position: p.injectionPosition === 'depth' ? 1 : 0,
    injection_depth: p.injectionDepth,
    forbid_overrides: p.forbidOverrides,
  };
}

function orderFromSt(v: unknown): PromptOrderEntry[] | null {
  if (!Array.isArray(v)) return null;
  const global = v.find((o) => isRecord(o) && String(o.character_id) === String(GLOBAL_ORDER_ID));
  if (!isRecord(global) || !Array.isArray(global.order)) return null;
  return global.order.flatMap((e) =>
    isRecord(e) && typeof e.identifier === 'string' && e.identifier !== ''
      ? [{ identifier: e.identifier, enabled: bool(e.enabled, true) }]
      : [],
  );
}

/** The preset a SillyTavern file means. `name`: the file's name without `.json`. */
export function presetFromSillyTavern(json: unknown, name: string): Result<ImportedPreset, HearthError> {
  if (!isRecord(json))
    return err(
      hearthError('preset.invalid', 'This is not a SillyTavern preset: the file is not a JSON object.'),
    );
  const looksLikePreset =
    'prompts' in json || 'prompt_order' in json || 'openai_max_context' in json || 'temperature' in json;
  if (!looksLikePreset)
    return err(
      hearthError(
        'preset.invalid',
        'This is not a SillyTavern Chat Completion preset: it has no prompts, prompt order or context size.',
      ),
    );
  const problems: string[] = [];
  const source: JsonObject = {};
  for (const [k, v] of Object.entries(asJsonObject(json))) {
    if (isSecretKey(k)) {
      if (v !== '' && v !== null) problems.push(`“${k}” was left out: Hearth never imports credentials.`);
    } else source[k] = v;
  }
  const preset = presetOfSource(source, name.trim() || 'Imported preset', problems);
  const checked = PresetSchema.safeParse(preset);
  if (!checked.success)
    return err(
      hearthError('preset.invalid', `This preset could not be read: ${checked.error.issues[0]?.message}`),
    );
  return ok({ preset: checked.data, problems });
}

function presetOfSource(source: JsonObject, name: string, problems: string[]): Preset {
  const given = Array.isArray(source.prompts) ? source.prompts.filter(isJsonObject) : [];
  const prompts = given.map(promptFromSt).filter((p) => p.identifier !== '');
  for (const builtIn of BUILT_IN_PROMPTS)
    if (!prompts.some((p) => p.identifier === builtIn.identifier)) prompts.push(promptFromSt(builtIn));
  const text = (key: keyof typeof DEFAULTS & string): string => {
    const v = source[key];
    return typeof v === 'string' ? v : String(DEFAULTS[key]);
  };
  const sampler: Record<string, unknown> = {};
  for (const [st, hearth] of [...SAMPLER_KEYS, ...HEARTH_SAMPLER_KEYS]) {
    const v = source[st];
    if (v === undefined || v === null || v === '') continue;
    const given = typeof v === 'string' && hearth !== 'reasoningEffort' ? Number(v) : v;
    const field = samplerSettingsSchema.shape[hearth].safeParse(given);
    if (field.success && field.data !== undefined) sampler[hearth] = field.data;
    else problems.push(`“${st}” = ${JSON.stringify(v)} is out of range and was not taken.`);
  }
  const seed = num(source.seed, -1);
  if (Number.isInteger(seed) && seed >= 0) sampler.seed = seed;
  const maxContext = Math.trunc(num(source.openai_max_context, DEFAULTS.openai_max_context));
  const namesIndex =
    source.names_behavior === undefined && source.names_in_completion === true
      ? 1
      : Math.trunc(num(source.names_behavior, 0));
  return {
    name,
    prompts,
    order: orderFromSt(source.prompt_order) ?? DEFAULT_ORDER.map((e) => ({ ...e })),
    formats: {
      worldInfo: text('wi_format'),
      scenario: text('scenario_format'),
      personality: text('personality_format'),
    },
    utility: {
      newChat: text('new_chat_prompt'),
      newGroupChat: text('new_group_chat_prompt'),
      newExampleChat: text('new_example_chat_prompt'),
      continueNudge: text('continue_nudge_prompt'),
      impersonation: text('impersonation_prompt'),
      groupNudge: text('group_nudge_prompt'),
      sendIfEmpty: text('send_if_empty'),
    },
    namesBehavior: NAMES_BEHAVIORS[namesIndex + 1] ?? 'default',
    wrapInQuotes: bool(source.wrap_in_quotes, false),
    squashSystemMessages: bool(source.squash_system_messages, false),
    maxContextTokens: maxContext > 0 ? maxContext : DEFAULTS.openai_max_context,
    sampler: sampler as SamplerSettings,
    source,
  };
}

/** The top-level fields a preset means, as SillyTavern writes them (prompts and order apart). */
function topLevelOf(p: Preset): Record<string, JsonValue | undefined> {
  const out: Record<string, JsonValue | undefined> = {
    wi_format: p.formats.worldInfo,
    scenario_format: p.formats.scenario,
    personality_format: p.formats.personality,
    new_chat_prompt: p.utility.newChat,
    new_group_chat_prompt: p.utility.newGroupChat,
    new_example_chat_prompt: p.utility.newExampleChat,
    continue_nudge_prompt: p.utility.continueNudge,
    impersonation_prompt: p.utility.impersonation,
    group_nudge_prompt: p.utility.groupNudge,
    send_if_empty: p.utility.sendIfEmpty,
    names_behavior: NAMES_BEHAVIORS.indexOf(p.namesBehavior) - 1,
    wrap_in_quotes: p.wrapInQuotes,
    squash_system_messages: p.squashSystemMessages,
    openai_max_context: p.maxContextTokens,
    seed: p.sampler.seed ?? -1,
  };
  for (const [st, hearth] of [...SAMPLER_KEYS, ...HEARTH_SAMPLER_KEYS]) out[st] = p.sampler[hearth];
  return out;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** `raw` with the fields of `now` that differ from `before` rewritten (removed when undefined). */
function rewrite(
  raw: JsonObject,
  now: Record<string, JsonValue | undefined>,
  before: Record<string, JsonValue | undefined>,
): JsonObject {
  const out: JsonObject = { ...raw };
  for (const [k, v] of Object.entries(now)) {
    if (same(v, before[k])) continue;
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/**
 * The SillyTavern file of a preset: what was imported, with what changed since written in
 * SillyTavern's own form. Secrets are never in it.
 */
export function presetToSillyTavern(preset: Preset): JsonObject {
  const source = preset.source;
  const base = presetOfSource(source, preset.name, []);
  const out = rewrite(source, topLevelOf(preset), topLevelOf(base));
  if (!same(preset.prompts, base.prompts)) {
    const raws = new Map(
      (Array.isArray(source.prompts) ? source.prompts : [])
        .filter(isJsonObject)
        .map((r) => [str(r.identifier), r] as const),
    );
    out.prompts = preset.prompts.map((p) => {
      const raw = raws.get(p.identifier);
      return raw ? rewrite(raw, promptToSt(p), promptToSt(promptFromSt(raw))) : promptToSt(p);
    });
  }
  if (!same(preset.order, base.order)) {
    const order = preset.order.map((e) => ({ identifier: e.identifier, enabled: e.enabled }));
    const lists = Array.isArray(source.prompt_order) ? source.prompt_order : [];
    const at = lists.findIndex((o) => isRecord(o) && String(o.character_id) === String(GLOBAL_ORDER_ID));
    out.prompt_order =
      at < 0
        ? [...lists, { character_id: GLOBAL_ORDER_ID, order }]
        : lists.map((o, i) => (i === at ? { ...(o as JsonObject), order } : o));
  }
  return out;
}

export const DEFAULT_PRESET_ID = 'preset_default';

/** The built-in preset: SillyTavern's Default (its prompts, order, formats and samplers). */
export function defaultPreset(): Preset {
  const file = {
    temperature: 1,
    frequency_penalty: 0,
    presence_penalty: 0,
    top_p: 1,
    top_k: 0,
    min_p: 0,
    repetition_penalty: 1,
    openai_max_context: DEFAULTS.openai_max_context,
    openai_max_tokens: 300,
    names_behavior: 0,
    prompts: [...BUILT_IN_PROMPTS],
    prompt_order: [{ character_id: GLOBAL_ORDER_ID, order: DEFAULT_ORDER.map((e) => ({ ...e })) }],
  };
  const parsed = presetFromSillyTavern(file, 'Default');
  if (!parsed.ok) throw new Error(`internal: the default preset does not parse: ${parsed.error.message}`);
  return parsed.value.preset;
}
