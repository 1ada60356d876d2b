import { z } from 'zod';
import { samplerSettingsSchema } from '$lib/domain/sampler';
import { JsonObjectSchema } from '../json-fields';
import { PROMPT_ROLES } from '../lorebook';

/**
 * A preset (D23): how a chat reply's prompt is built, as SillyTavern's Chat Completion prompt
 * manager builds it. It holds the prompt list and its order, the formats, the utility prompts, the
 * context budget and the sampler settings. Profiles say what the agent is; the preset says what
 * the model reads of the character, the lore and the chat.
 */

/** SillyTavern's built-in prompts: markers filled from the card, the persona, the lore, the chat. */
export const MARKER_IDS = [
  'worldInfoBefore',
  'worldInfoAfter',
  'personaDescription',
  'charDescription',
  'charPersonality',
  'scenario',
  'dialogueExamples',
  'chatHistory',
] as const;
export type MarkerId = (typeof MARKER_IDS)[number];

/** Built-in prompts with text of their own (main, auxiliary, post-history instructions, enhance definitions). */
export const SYSTEM_PROMPT_IDS = ['main', 'nsfw', 'jailbreak', 'enhanceDefinitions'] as const;

export const isMarker = (identifier: string): identifier is MarkerId =>
  (MARKER_IDS as readonly string[]).includes(identifier);

export const PresetPromptSchema = z.object({
  identifier: z.string().min(1),
  name: z.string(),
  role: z.enum(PROMPT_ROLES),
  content: z.string(),
  /** SillyTavern's `system_prompt`: a built-in prompt (a custom one with it set is never sent). */
  systemPrompt: z.boolean(),
  marker: z.boolean(),
  /** `relative`: at its place in the order; `depth`: injected into the history at `depth`. */
  injectionPosition: z.enum(['relative', 'depth']),
  injectionDepth: z.int().min(0),
  /** The card's own prompt may not replace this one (`forbid_overrides`). */
  forbidOverrides: z.boolean(),
});
export type PresetPrompt = z.infer<typeof PresetPromptSchema>;

export const PromptOrderEntrySchema = z.object({ identifier: z.string().min(1), enabled: z.boolean() });
export type PromptOrderEntry = z.infer<typeof PromptOrderEntrySchema>;

/** SillyTavern's `names_behavior`: -1 none, 0 default (only in groups), 1 the `name` field, 2 in the content. */
export const NAMES_BEHAVIORS = ['none', 'default', 'completion', 'content'] as const;
export type NamesBehavior = (typeof NAMES_BEHAVIORS)[number];

export const PresetSchema = z.object({
  name: z.string().min(1),
  prompts: z.array(PresetPromptSchema),
  /** The order of the prompts sent (SillyTavern's `prompt_order` of character 100001). */
  order: z.array(PromptOrderEntrySchema),
  formats: z.object({
    /** `{0}` is the lore text. */
    worldInfo: z.string(),
    scenario: z.string(),
    personality: z.string(),
  }),
  utility: z.object({
    newChat: z.string(),
    newGroupChat: z.string(),
    newExampleChat: z.string(),
    continueNudge: z.string(),
    impersonation: z.string(),
    groupNudge: z.string(),
    sendIfEmpty: z.string(),
  }),
  namesBehavior: z.enum(NAMES_BEHAVIORS),
  wrapInQuotes: z.boolean(),
  squashSystemMessages: z.boolean(),
  /** The whole context, reply included, in tokens (SillyTavern's `openai_max_context`). */
  maxContextTokens: z.int().positive(),
  /** The reply's tokens (`openai_max_tokens`) are `sampler.maxOutputTokens`. */
  sampler: samplerSettingsSchema,
  /**
   * The SillyTavern file it came from (secrets removed), kept for export: fields Hearth does not
   * read (model choices, other prompt orders, newer keys) go back out unchanged.
   */
  source: JsonObjectSchema,
});
export type Preset = z.infer<typeof PresetSchema>;

/** A stored preset. */
export const PresetRecordSchema = z.object({
  id: z.string().min(1),
  preset: PresetSchema,
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type PresetRecord = z.infer<typeof PresetRecordSchema>;

/** The reply tokens a preset reserves when its sampler settings name none (SillyTavern's default). */
export const DEFAULT_MAX_REPLY_TOKENS = 300;

export const maxReplyTokens = (preset: Preset): number =>
  preset.sampler.maxOutputTokens ?? DEFAULT_MAX_REPLY_TOKENS;

/** A prompt of the preset by identifier. */
export const promptOf = (preset: Preset, identifier: string): PresetPrompt | undefined =>
  preset.prompts.find((p) => p.identifier === identifier);

/** A new custom prompt (SillyTavern's "New prompt"): a system message at its place in the order. */
export function customPrompt(identifier: string, name: string): PresetPrompt {
  return {
    identifier,
    name,
    role: 'system',
    content: '',
    systemPrompt: false,
    marker: false,
    injectionPosition: 'relative',
    injectionDepth: 4,
    forbidOverrides: false,
  };
}
