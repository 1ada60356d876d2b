/**
 * The sampler requests every adapter's encoder is tested with against its recorded wire fixtures
 * (`<adapter>/__fixtures__/request-sampler-*.json`): each setting under its provider's name, and a
 * warning for each one the provider or model refuses instead of it on the wire.
 *
 * Fixtures are compared exactly; after a deliberate change, rewrite them with
 * `RECORD_FIXTURES=1 npx vitest run --project unit tests/unit/adapters/llm/sampler-fixtures.test.ts`
 * and review the diff (the integration test checks the scripted server receives these bodies).
 */
import type { ModelRequest } from '$lib/domain/model';
import type { PresetId } from '$lib/domain/provider-presets';
import type { SamplerSettings } from '$lib/domain/sampler';

/** Every setting set, none at its "off" value. */
export const FULL_SAMPLER: SamplerSettings = {
  temperature: 0.7,
  topP: 0.9,
  topK: 40,
  minP: 0.05,
  frequencyPenalty: 0.3,
  presencePenalty: 0.2,
  repetitionPenalty: 1.1,
  maxOutputTokens: 300,
  stop: ['\nUser:', '\nAlice:', '\nBob:', '</s>', '###', '\n\n\n'],
  seed: 7,
  reasoningEffort: 'low',
  reasoningBudgetTokens: 2048,
};

/** SillyTavern's "off" values, which no wire sends or notes. */
export const OFF_VALUES: SamplerSettings = {
  topK: 0,
  minP: 0,
  repetitionPenalty: 1,
  frequencyPenalty: 0,
  presencePenalty: 0,
  seed: -1,
  stop: [],
};

export interface SamplerScenario {
  /** The fixture is `request-sampler-<name>.json`. */
  name: string;
  model: string;
  sampler: SamplerSettings;
  /** OpenAI-compatible only: the connection's preset, and the name of the reply's length. */
  preset?: PresetId;
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

export const SAMPLER_SCENARIOS: Record<'openai-chat' | 'anthropic' | 'gemini', SamplerScenario[]> = {
  'openai-chat': [
    {
      name: 'openai',
      model: 'gpt-4.1',
      preset: 'openai',
      maxTokensField: 'max_completion_tokens',
      sampler: FULL_SAMPLER,
    },
    {
      name: 'openai-reasoning',
      model: 'o3',
      preset: 'openai',
      maxTokensField: 'max_completion_tokens',
      sampler: { ...FULL_SAMPLER, reasoningEffort: 'high', reasoningBudgetTokens: undefined },
    },
    {
      name: 'openrouter',
      model: 'meta-llama/llama-3.3-70b-instruct',
      preset: 'openrouter',
      sampler: FULL_SAMPLER,
    },
    { name: 'llamacpp', model: 'local', preset: 'llamacpp', sampler: FULL_SAMPLER },
    { name: 'mistral', model: 'mistral-large-latest', preset: 'mistral', sampler: FULL_SAMPLER },
    { name: 'off-values', model: 'gpt-4.1', preset: 'openai', sampler: OFF_VALUES },
  ],
  anthropic: [
    {
      name: 'claude-4',
      model: 'claude-sonnet-4-20250514',
      sampler: { ...FULL_SAMPLER, reasoningBudgetTokens: 0 },
    },
    {
      name: 'claude-4-5',
      model: 'claude-sonnet-4-5',
      sampler: { temperature: 0.8, topP: 0.9, stop: ['\nUser:', '  '], maxOutputTokens: 500 },
    },
    {
      name: 'thinking',
      model: 'claude-sonnet-4-5',
      sampler: { temperature: 1.5, topP: 0.9, topK: 40, maxOutputTokens: 1024, reasoningBudgetTokens: 2048 },
    },
    { name: 'off-values', model: 'claude-sonnet-4-5', sampler: OFF_VALUES },
  ],
  gemini: [
    { name: 'gemini-2-5', model: 'gemini-2.5-flash', sampler: FULL_SAMPLER },
    {
      name: 'gemini-3',
      model: 'gemini-3-pro-preview',
      sampler: { ...FULL_SAMPLER, reasoningEffort: 'high' },
    },
    { name: 'off-values', model: 'gemini-2.5-flash', sampler: OFF_VALUES },
  ],
};

export const samplerRequest = (scenario: SamplerScenario): ModelRequest => ({
  model: scenario.model,
  messages: [
    { role: 'system', parts: [{ type: 'text', text: 'You are Alice.' }] },
    { role: 'user', parts: [{ type: 'text', text: 'Tell me a story.' }] },
  ],
  tools: [],
  toolChoice: 'auto',
  sampler: scenario.sampler,
});
