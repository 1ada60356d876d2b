import type { PresetId } from '$lib/domain/provider-presets';
import type { ReasoningEffort, SamplerSettings } from '$lib/domain/sampler';
import { activeSampler, notSent, type SamplerKey, type SamplerMapping } from '$lib/domain/sampler-mapping';

/** The sampler fields of a Chat Completions body. */
export interface ChatSamplerFields {
  temperature?: number;
  top_p?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string[];
  seed?: number;
  random_seed?: number;
  reasoning_effort?: ReasoningEffort;
  /** OpenRouter's one reasoning setting: an effort or a budget, not both. */
  reasoning?: { effort: ReasoningEffort } | { max_tokens: number };
  top_k?: number;
  min_p?: number;
  repetition_penalty?: number;
  repeat_penalty?: number;
}

type ExtraKey = 'topK' | 'minP' | 'repetitionPenalty';
type ExtraField = 'top_k' | 'min_p' | 'repetition_penalty' | 'repeat_penalty';

/** What an OpenAI-compatible host takes beyond OpenAI's own sampler fields, and how. */
export interface ChatSamplerHost {
  /** The provider, as the notes name it. */
  name: string;
  /** Top-k, min-p and repetition penalty under the host's names; a setting not listed is refused. */
  extras: Partial<Record<ExtraKey, ExtraField>>;
  /** Mistral calls the seed `random_seed`. */
  seedField: 'seed' | 'random_seed';
  /**
   * `openai`: `reasoning_effort`, which only OpenAI's reasoning models take; `effort`:
   * `reasoning_effort` as it is; `openrouter`: OpenRouter's `reasoning` object (effort or
   * budget); `none`: the host refuses both.
   */
  reasoning: 'openai' | 'effort' | 'openrouter' | 'none';
  /** The most stop strings the host takes. */
  maxStop?: number;
}

const STANDARD_EXTRAS = { topK: 'top_k', minP: 'min_p', repetitionPenalty: 'repetition_penalty' } as const;
const LLAMA_CPP_EXTRAS = { topK: 'top_k', minP: 'min_p', repetitionPenalty: 'repeat_penalty' } as const;

const host = (name: string, over: Partial<ChatSamplerHost> = {}): ChatSamplerHost => ({
  name,
  extras: {},
  seedField: 'seed',
  reasoning: 'effort',
  ...over,
});

/**
 * What each OpenAI-compatible preset takes, from its provider's API reference. The extra
 * samplers go only where the host documents them: OpenRouter and vLLM under the common names,
 * llama.cpp's server and LM Studio under llama.cpp's (`repeat_penalty`; LM Studio has no min-p);
 * a custom endpoint is most often a local server of that kind (vLLM, TabbyAPI, KoboldCpp,
 * text-generation-webui), so it gets the common names. OpenAI, DeepSeek, Groq, Mistral, xAI and
 * Ollama's OpenAI endpoint do not take them.
 */
export const CHAT_SAMPLER_HOSTS: Record<Exclude<PresetId, 'anthropic' | 'gemini'>, ChatSamplerHost> = {
  openai: host('OpenAI', { reasoning: 'openai', maxStop: 4 }),
  openrouter: host('OpenRouter', { extras: STANDARD_EXTRAS, reasoning: 'openrouter' }),
  deepseek: host('DeepSeek', { reasoning: 'none' }),
  groq: host('Groq', { maxStop: 4 }),
  mistral: host('Mistral', { seedField: 'random_seed', reasoning: 'none' }),
  xai: host('xAI'),
  ollama: host('Ollama'),
  lmstudio: host('LM Studio', { extras: { topK: 'top_k', repetitionPenalty: 'repeat_penalty' } }),
  llamacpp: host('llama.cpp server', { extras: LLAMA_CPP_EXTRAS }),
  vllm: host('vLLM', { extras: STANDARD_EXTRAS }),
  custom: host('this endpoint', { extras: STANDARD_EXTRAS }),
};

export const chatSamplerHost = (preset: PresetId): ChatSamplerHost =>
  preset === 'anthropic' || preset === 'gemini' ? CHAT_SAMPLER_HOSTS.custom : CHAT_SAMPLER_HOSTS[preset];

const modelName = (model: string) => model.trim().toLowerCase().split('/').at(-1) ?? '';

/** OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and later, not the gpt-5 chat models). */
export function isOpenAiReasoningModel(model: string): boolean {
  const name = modelName(model);
  return /^o\d+(?:-|$)/.test(name) || (/^gpt-[5-9]/.test(name) && !/^gpt-[5-9](?:\.\d+)?-chat/.test(name));
}

/** What a model refuses wherever it is served, and why. */
const MODEL_RULES: {
  applies: (name: string) => boolean;
  refuses: SamplerKey[];
  why: (model: string) => string;
}[] = [
  {
    applies: isOpenAiReasoningModel,
    refuses: ['temperature', 'topP', 'frequencyPenalty', 'presencePenalty', 'stop'],
    why: (model) => `${model} is one of OpenAI’s reasoning models (o1, o3, o4, gpt-5), which refuse it`,
  },
  {
    applies: (name) => /^grok-(?:4|3-mini)/.test(name),
    refuses: ['frequencyPenalty', 'presencePenalty', 'stop'],
    why: (model) => `${model} is one of xAI’s reasoning models, which refuse it`,
  },
  {
    applies: (name) => /^grok-4/.test(name),
    refuses: ['reasoningEffort'],
    why: (model) => `${model} refuses it`,
  },
];

/**
 * Sampler settings → Chat Completions fields for one host and model. Pure. `maxTokensField`
 * is the name the wire already uses for the reply's length (OpenAI's API: `max_completion_tokens`).
 */
export function mapChatSampler(
  sampler: SamplerSettings | undefined,
  target: { model: string; host: ChatSamplerHost; maxTokensField: 'max_tokens' | 'max_completion_tokens' },
): SamplerMapping<ChatSamplerFields> {
  const { host: h, model } = target;
  const s = activeSampler(sampler);
  const fields: ChatSamplerFields = {};
  const notes: string[] = [];
  const name = modelName(model);
  const refusedBy = (key: SamplerKey) => MODEL_RULES.find((r) => r.refuses.includes(key) && r.applies(name));
  /** Whether `key` is set and the model takes it (a note otherwise). */
  const takes = (key: SamplerKey): boolean => {
    if (s[key] === undefined) return false;
    const rule = refusedBy(key);
    if (rule) notes.push(notSent(key, rule.why(model)));
    return !rule;
  };

  if (takes('temperature')) fields.temperature = s.temperature;
  if (takes('topP')) fields.top_p = s.topP;
  if (takes('frequencyPenalty')) fields.frequency_penalty = s.frequencyPenalty;
  if (takes('presencePenalty')) fields.presence_penalty = s.presencePenalty;
  if (s.maxOutputTokens !== undefined) fields[target.maxTokensField] = s.maxOutputTokens;
  if (takes('seed')) fields[h.seedField] = s.seed;
  if (takes('stop') && s.stop) {
    const kept = h.maxStop === undefined ? s.stop : s.stop.slice(0, h.maxStop);
    fields.stop = kept;
    if (kept.length < s.stop.length)
      notes.push(
        `${s.stop.length - kept.length} of ${s.stop.length} stop strings were not sent: ${h.name} takes at most ${h.maxStop}.`,
      );
  }
  for (const key of ['topK', 'minP', 'repetitionPenalty'] as const) {
    const value = s[key];
    if (value === undefined) continue;
    const field = h.extras[key];
    if (field) fields[field] = value;
    else notes.push(notSent(key, `${h.name} does not take it`));
  }
  mapReasoning(s, target, fields, notes, takes);
  return { fields, notes };
}

function mapReasoning(
  s: SamplerSettings,
  target: { model: string; host: ChatSamplerHost },
  fields: ChatSamplerFields,
  notes: string[],
  takes: (key: SamplerKey) => boolean,
): void {
  const { host: h, model } = target;
  const effort = takes('reasoningEffort') ? s.reasoningEffort : undefined;
  const budget = s.reasoningBudgetTokens;
  switch (h.reasoning) {
    case 'none':
      if (effort !== undefined) notes.push(notSent('reasoningEffort', `${h.name} does not take it`));
      if (budget !== undefined) notes.push(notSent('reasoningBudgetTokens', `${h.name} does not take it`));
      return;
    case 'openai':
      if (effort === undefined) break;
      if (!isOpenAiReasoningModel(model))
        notes.push(notSent('reasoningEffort', `${model} is not one of OpenAI’s reasoning models`));
      else if (effort === 'minimal' && /^o\d/.test(modelName(model)))
        notes.push(notSent('reasoningEffort', `${model} takes low, medium or high, not minimal`));
      else fields.reasoning_effort = effort;
      break;
    case 'effort':
      if (effort !== undefined) fields.reasoning_effort = effort;
      break;
    case 'openrouter':
      if (effort !== undefined) fields.reasoning = { effort };
      else if (budget !== undefined && budget > 0) fields.reasoning = { max_tokens: budget };
      if (effort !== undefined && budget !== undefined)
        notes.push(
          notSent(
            'reasoningBudgetTokens',
            'OpenRouter takes a reasoning effort or a budget, and the effort was sent',
          ),
        );
      return;
  }
  if (budget !== undefined)
    notes.push(
      notSent(
        'reasoningBudgetTokens',
        `${h.name} takes no budget of reasoning tokens on this API; set a reasoning effort`,
      ),
    );
}
