import { hearthError, type HearthError } from '$lib/domain/errors';
import { err, ok, type Result } from '$lib/domain/result';
import type { SamplerSettings } from '$lib/domain/sampler';
import type { PromptRole } from '../lorebook';
import {
  customPrompt,
  isMarker,
  PresetSchema,
  SYSTEM_PROMPT_IDS,
  type Preset,
  type PresetPrompt,
} from './preset';

/**
 * The edits of the preset editor, as SillyTavern's prompt manager makes them. Each gives a new
 * preset, checked against the schema, or says why the edit cannot be made; the given preset is
 * never changed.
 */
export type PresetEdit = Result<Preset, HearthError>;

/** What the editor may change of one prompt. */
export type PromptChanges = Partial<{
  name: string;
  role: PromptRole;
  content: string;
  injectionPosition: PresetPrompt['injectionPosition'];
  injectionDepth: number;
  forbidOverrides: boolean;
}>;

const refused = (message: string): PresetEdit => err(hearthError('preset.invalid', message));

function checked(preset: Preset): PresetEdit {
  const parsed = PresetSchema.safeParse(preset);
  if (parsed.success) return ok(parsed.data);
  const issue = parsed.error.issues[0];
  return refused(`This change would make the preset invalid: ${issue?.path.join('.')}: ${issue?.message}`);
}

const copy = (preset: Preset): Preset => structuredClone(preset);

/** A prompt SillyTavern ships (its markers and system prompts): never deleted. */
export const isBuiltInPrompt = (p: PresetPrompt): boolean =>
  p.marker ||
  p.systemPrompt ||
  isMarker(p.identifier) ||
  (SYSTEM_PROMPT_IDS as readonly string[]).includes(p.identifier);

const missing = (identifier: string): PresetEdit => refused(`This preset has no prompt “${identifier}”.`);

/** Moves a prompt one place earlier (`up`) or later (`down`) in the order; at an end it stays. */
export function movePrompt(preset: Preset, identifier: string, direction: 'up' | 'down'): PresetEdit {
  const at = preset.order.findIndex((e) => e.identifier === identifier);
  if (at < 0) return refused(`“${identifier}” is not in the prompt order.`);
  const to = direction === 'up' ? at - 1 : at + 1;
  if (to < 0 || to >= preset.order.length) return ok(preset);
  const next = copy(preset);
  [next.order[at], next.order[to]] = [next.order[to]!, next.order[at]!];
  return checked(next);
}

/** Switches a prompt on or off; a prompt not yet in the order joins it at the end (SillyTavern's "insert"). */
export function setPromptEnabled(preset: Preset, identifier: string, enabled: boolean): PresetEdit {
  if (!preset.prompts.some((p) => p.identifier === identifier)) return missing(identifier);
  const next = copy(preset);
  const entry = next.order.find((e) => e.identifier === identifier);
  if (entry) entry.enabled = enabled;
  else next.order.push({ identifier, enabled });
  return checked(next);
}

/**
 * Changes a prompt's name, role, content or place. A marker's text comes from the card, the
 * persona, the lore or the chat, so it has no content, role or place of its own to change; the
 * main prompt is always at its place in the order (SillyTavern never injects it).
 */
export function updatePrompt(preset: Preset, identifier: string, changes: PromptChanges): PresetEdit {
  const at = preset.prompts.findIndex((p) => p.identifier === identifier);
  if (at < 0) return missing(identifier);
  const prompt = preset.prompts[at]!;
  const { name, ...rest } = changes;
  if ((prompt.marker || isMarker(identifier)) && Object.keys(rest).length > 0)
    return refused(`“${prompt.name}” is filled in by Hearth: only its name can change.`);
  if (identifier === 'main' && changes.injectionPosition === 'depth')
    return refused('The main prompt is always sent at its place in the order.');
  if (name !== undefined && name.trim() === '') return refused('A prompt needs a name.');
  const next = copy(preset);
  next.prompts[at] = { ...prompt, ...changes, ...(name === undefined ? {} : { name: name.trim() }) };
  return checked(next);
}

/** An identifier no prompt of the preset has. */
function freshIdentifier(preset: Preset): string {
  const taken = new Set([...preset.prompts, ...preset.order].map((p) => p.identifier));
  let n = 1;
  while (taken.has(`custom_${n}`)) n++;
  return `custom_${n}`;
}

/**
 * A new custom prompt (a system message at its place, empty), on, at the end of the order, as
 * SillyTavern's "New prompt" adds it. It is the last of `prompts` and of `order`.
 */
export function addCustomPrompt(preset: Preset, name = 'New prompt'): PresetEdit {
  if (name.trim() === '') return refused('A prompt needs a name.');
  const identifier = freshIdentifier(preset);
  const next = copy(preset);
  next.prompts.push(customPrompt(identifier, name.trim()));
  next.order.push({ identifier, enabled: true });
  return checked(next);
}

/** Deletes a custom prompt from the prompts and the order; SillyTavern's own prompts stay. */
export function deletePrompt(preset: Preset, identifier: string): PresetEdit {
  const prompt = preset.prompts.find((p) => p.identifier === identifier);
  if (!prompt) return missing(identifier);
  if (isBuiltInPrompt(prompt))
    return err(
      hearthError(
        'preset.built_in',
        `“${prompt.name}” is one of SillyTavern’s own prompts: switch it off instead.`,
      ),
    );
  const next = copy(preset);
  next.prompts = next.prompts.filter((p) => p.identifier !== identifier);
  next.order = next.order.filter((e) => e.identifier !== identifier);
  return checked(next);
}

export function renamePreset(preset: Preset, name: string): PresetEdit {
  if (name.trim() === '') return refused('A preset needs a name.');
  return checked({ ...copy(preset), name: name.trim() });
}

/**
 * The context budget: the whole context and the reply's share of it, in tokens. The reply must
 * leave room for the prompt, or no message of the chat would be sent.
 */
export function setBudget(
  preset: Preset,
  budget: { maxContextTokens: number; maxReplyTokens: number },
): PresetEdit {
  const { maxContextTokens, maxReplyTokens } = budget;
  if (!Number.isInteger(maxContextTokens) || maxContextTokens <= 0)
    return refused('Max context tokens must be a whole number above 0.');
  if (!Number.isInteger(maxReplyTokens) || maxReplyTokens <= 0)
    return refused('Max reply tokens must be a whole number above 0.');
  if (maxReplyTokens >= maxContextTokens)
    return refused('Max reply tokens must be fewer than max context tokens: the prompt needs the rest.');
  const next = copy(preset);
  next.maxContextTokens = maxContextTokens;
  next.sampler.maxOutputTokens = maxReplyTokens;
  return checked(next);
}

/** The sampler settings; the reply's tokens belong to the budget and stay as they are. */
export function setSampler(preset: Preset, sampler: SamplerSettings | undefined): PresetEdit {
  const next = copy(preset);
  const { maxOutputTokens } = preset.sampler;
  next.sampler = { ...structuredClone(sampler ?? {}) };
  delete next.sampler.maxOutputTokens;
  if (maxOutputTokens !== undefined) next.sampler.maxOutputTokens = maxOutputTokens;
  return checked(next);
}
