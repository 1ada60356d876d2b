import type { SamplerSettings } from './sampler';

export type SamplerKey = keyof SamplerSettings;

/** The names the person reads for each setting: on the forms and in the notes about them. */
export const SAMPLER_LABELS: Record<SamplerKey, string> = {
  temperature: 'Temperature',
  topP: 'Top-p',
  topK: 'Top-k',
  minP: 'Min-p',
  frequencyPenalty: 'Frequency penalty',
  presencePenalty: 'Presence penalty',
  repetitionPenalty: 'Repetition penalty',
  maxOutputTokens: 'Max reply tokens',
  stop: 'Stop strings',
  seed: 'Seed',
  reasoningEffort: 'Reasoning effort',
  reasoningBudgetTokens: 'Reasoning budget',
};

/**
 * What one wire's sampler mapping gives: the body fields under the provider's names, and a note
 * for each setting it did not send as set (refused by the provider or the model, out of its
 * range), which the encoder adds to the request's warnings.
 */
export interface SamplerMapping<Fields> {
  fields: Fields;
  notes: string[];
}

/** A note about a setting; one sentence saying what happened and why. */
export const notSent = (key: SamplerKey, why: string): string =>
  `${SAMPLER_LABELS[key]} ${key === 'stop' ? 'were' : 'was'} not sent: ${why}.`;

/**
 * The settings that change sampling. Values that mean "off" the way SillyTavern writes them
 * (top-k and min-p 0, repetition penalty 1, penalties 0, a negative seed for a random one, no
 * stop strings) are left out: not sending them samples exactly as sending them would, on every
 * provider, so no wire needs a note for them.
 */
export function activeSampler(sampler: SamplerSettings | undefined): SamplerSettings {
  const s: SamplerSettings = { ...sampler };
  if (s.topK === 0) delete s.topK;
  if (s.minP === 0) delete s.minP;
  if (s.repetitionPenalty === 1) delete s.repetitionPenalty;
  if (s.frequencyPenalty === 0) delete s.frequencyPenalty;
  if (s.presencePenalty === 0) delete s.presencePenalty;
  if (s.seed !== undefined && s.seed < 0) delete s.seed;
  if (s.stop?.length === 0) delete s.stop;
  return s;
}
