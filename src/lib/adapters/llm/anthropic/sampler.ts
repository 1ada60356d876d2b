import type { SamplerSettings } from '$lib/domain/sampler';
import { activeSampler, notSent, type SamplerMapping } from '$lib/domain/sampler-mapping';

/** The sampler fields of a Messages API body (`max_tokens` is required). */
export interface AnthropicSamplerFields {
  max_tokens: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  thinking?: { type: 'enabled'; budget_tokens: number };
}

/** The smallest thinking budget Anthropic accepts. */
export const MIN_THINKING_BUDGET = 1024;

/** Claude models that refuse `temperature` and `top_p` in one request (Opus 4.1 and later, Sonnet and Haiku 4.5). */
export const refusesTemperatureWithTopP = (model: string): boolean =>
  /claude-(?:opus-4-[1-9](?!\d)|(?:sonnet|haiku)-4-[5-9](?!\d)|(?:opus|sonnet|haiku)-[5-9](?!\d))/.test(
    model.toLowerCase(),
  );

/**
 * Sampler settings → Messages API fields. Pure. Extended thinking is on when the reasoning
 * budget is set (at least 1,024 tokens); the reply's `max_tokens` then has room for it.
 */
export function mapAnthropicSampler(
  sampler: SamplerSettings | undefined,
  target: { model: string; defaultMaxTokens: number },
): SamplerMapping<AnthropicSamplerFields> {
  const s = activeSampler(sampler);
  const notes: string[] = [];
  const budget = s.reasoningBudgetTokens;
  let thinking = false;
  if (budget !== undefined && budget > 0) {
    if (budget >= MIN_THINKING_BUDGET) thinking = true;
    else
      notes.push(
        notSent(
          'reasoningBudgetTokens',
          `Anthropic takes a thinking budget of at least ${MIN_THINKING_BUDGET} tokens`,
        ),
      );
  }
  const asked = s.maxOutputTokens ?? target.defaultMaxTokens;
  const fields: AnthropicSamplerFields = { max_tokens: asked };
  if (thinking && budget !== undefined) {
    fields.thinking = { type: 'enabled', budget_tokens: budget };
    // The budget is part of max_tokens: too small a max leaves no room to think.
    if (asked <= budget) {
      fields.max_tokens = asked + budget;
      if (s.maxOutputTokens !== undefined)
        notes.push(
          `Max reply tokens was sent as ${fields.max_tokens}: Anthropic counts the thinking budget (${budget}) in max_tokens.`,
        );
    }
  }

  const withThinking = 'Anthropic does not take it together with extended thinking';
  if (s.temperature !== undefined) {
    if (thinking) notes.push(notSent('temperature', withThinking));
    else if (s.temperature > 1)
      notes.push(notSent('temperature', `Anthropic takes 0 to 1, not ${s.temperature}`));
    else fields.temperature = s.temperature;
  }
  if (s.topP !== undefined) {
    if (thinking && s.topP < 0.95)
      notes.push(notSent('topP', `with extended thinking Anthropic takes 0.95 to 1, not ${s.topP}`));
    else if (fields.temperature !== undefined && refusesTemperatureWithTopP(target.model))
      notes.push(
        notSent('topP', `${target.model} takes a temperature or a top-p, and the temperature was sent`),
      );
    else fields.top_p = s.topP;
  }
  if (s.topK !== undefined) {
    if (thinking) notes.push(notSent('topK', withThinking));
    else fields.top_k = s.topK;
  }
  if (s.stop) {
    const kept = s.stop.filter((x) => x.trim() !== '');
    if (kept.length > 0) fields.stop_sequences = kept;
    if (kept.length < s.stop.length)
      notes.push(
        `${s.stop.length - kept.length} of ${s.stop.length} stop strings were not sent: Anthropic refuses stop strings of only whitespace.`,
      );
  }
  if (s.reasoningEffort !== undefined)
    notes.push(
      notSent('reasoningEffort', 'Anthropic takes a thinking budget in tokens; set a reasoning budget'),
    );
  for (const key of ['minP', 'repetitionPenalty', 'frequencyPenalty', 'presencePenalty', 'seed'] as const)
    if (s[key] !== undefined) notes.push(notSent(key, 'Anthropic does not take it'));
  return { fields, notes };
}
