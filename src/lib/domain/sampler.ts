import { z } from 'zod';

/**
 * How a reply is sampled (D23: set in the chat's preset; a connection may pin overrides). Names
 * are Hearth's own; each wire adapter sends them under its provider's names and ranges, and
 * reports what its provider or model refuses instead of sending it.
 */
export const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

export const samplerSettingsSchema = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  /** 0 means off, as SillyTavern writes it. */
  topK: z.int().min(0).optional(),
  /** 0 means off. */
  minP: z.number().min(0).max(1).optional(),
  frequencyPenalty: z.number().min(-2).max(2).optional(),
  presencePenalty: z.number().min(-2).max(2).optional(),
  /** 1 means off. */
  repetitionPenalty: z.number().min(0).max(3).optional(),
  maxOutputTokens: z.int().positive().optional(),
  stop: z.array(z.string().min(1)).max(16).optional(),
  seed: z.int().optional(),
  reasoningEffort: z.enum(REASONING_EFFORTS).optional(),
  /** Tokens a model that thinks may spend on it (Anthropic's and Gemini's budgets). */
  reasoningBudgetTokens: z.int().min(0).optional(),
});
export type SamplerSettings = z.infer<typeof samplerSettingsSchema>;
