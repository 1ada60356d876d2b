import type { ReasoningEffort, SamplerSettings } from '$lib/domain/sampler';
import { activeSampler, notSent, type SamplerMapping } from '$lib/domain/sampler-mapping';

/** `generationConfig` of a `generateContent` body. */
export interface GeminiGenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  thinkingConfig?: { includeThoughts?: boolean; thinkingBudget?: number; thinkingLevel?: ReasoningEffort };
}

/** The most stop sequences Gemini takes. */
export const MAX_STOP_SEQUENCES = 5;

/** Gemini 3 and later take a thinking level; earlier models a thinking budget in tokens. */
export function takesThinkingLevel(model: string): boolean {
  const m = /(?:^|\/)gemini-(\d+)/i.exec(model.trim());
  return m !== null && Number(m[1]) >= 3;
}

/**
 * Sampler settings → `generationConfig`. Pure. Reasoning: Gemini 3 gets the effort as its
 * `thinkingLevel` (it refuses a level and a budget together); earlier models get the budget as
 * `thinkingBudget`, where 0 turns thinking off on the models that allow it.
 */
export function mapGeminiSampler(
  sampler: SamplerSettings | undefined,
  target: { model: string },
): SamplerMapping<GeminiGenerationConfig> {
  const s = activeSampler(sampler);
  const fields: GeminiGenerationConfig = {};
  const notes: string[] = [];
  if (s.maxOutputTokens !== undefined) fields.maxOutputTokens = s.maxOutputTokens;
  if (s.temperature !== undefined) fields.temperature = s.temperature;
  if (s.topP !== undefined) fields.topP = s.topP;
  if (s.topK !== undefined) fields.topK = s.topK;
  if (s.seed !== undefined) fields.seed = s.seed;
  if (s.presencePenalty !== undefined) fields.presencePenalty = s.presencePenalty;
  if (s.frequencyPenalty !== undefined) fields.frequencyPenalty = s.frequencyPenalty;
  if (s.stop) {
    fields.stopSequences = s.stop.slice(0, MAX_STOP_SEQUENCES);
    if (s.stop.length > MAX_STOP_SEQUENCES)
      notes.push(
        `${s.stop.length - MAX_STOP_SEQUENCES} of ${s.stop.length} stop strings were not sent: Gemini takes at most ${MAX_STOP_SEQUENCES}.`,
      );
  }
  for (const key of ['minP', 'repetitionPenalty'] as const)
    if (s[key] !== undefined) notes.push(notSent(key, 'Gemini does not take it'));

  const effort = s.reasoningEffort;
  const budget = s.reasoningBudgetTokens;
  if (takesThinkingLevel(target.model)) {
    if (effort !== undefined) fields.thinkingConfig = { thinkingLevel: effort };
    else if (budget !== undefined) fields.thinkingConfig = { thinkingBudget: budget };
    if (effort !== undefined && budget !== undefined)
      notes.push(
        notSent(
          'reasoningBudgetTokens',
          `${target.model} takes a thinking level or a budget, and the level was sent`,
        ),
      );
  } else {
    if (budget !== undefined) fields.thinkingConfig = { thinkingBudget: budget };
    if (effort !== undefined)
      notes.push(
        notSent(
          'reasoningEffort',
          `${target.model} takes a thinking budget in tokens; set a reasoning budget`,
        ),
      );
  }
  return { fields, notes };
}
