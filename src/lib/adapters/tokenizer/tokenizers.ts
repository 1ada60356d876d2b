import type { TokenCounter } from '$lib/chat/prompt/budget';
import { calibrate, DEFAULT_CHARS_PER_TOKEN, estimateCounter } from '$lib/chat/prompt/estimate';
import type { SettingsStore } from '$lib/ports/stores';
import type { Tokenizers } from '$lib/ports/tokenizer';

/**
 * OpenAI's encodings through `gpt-tokenizer` (pure JavaScript, exact for OpenAI models, loaded on
 * first use: the o200k table is 2.4 MB), a calibrated estimate for every other model.
 */
export type OpenAiEncoding = 'o200k_base' | 'cl100k_base';

/** The OpenAI encoding a model uses, if it is one (SillyTavern TOKS:357-376 and newer models). */
export function openAiEncodingOf(model: string): OpenAiEncoding | null {
  const m = model.toLowerCase().replace(/^openai\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|gpt-oss)/.test(m)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5|text-embedding-3)/.test(m)) return 'cl100k_base';
  return null;
}

export async function openAiCounter(encoding: OpenAiEncoding): Promise<TokenCounter> {
  const { countTokens } =
    encoding === 'o200k_base'
      ? await import('gpt-tokenizer/encoding/o200k_base')
      : await import('gpt-tokenizer/encoding/cl100k_base');
  return { name: encoding, count: (text) => (text === '' ? 0 : countTokens(text)) };
}

const ratioKey = (model: string) => `tokenEstimate:${model}`;

export function createTokenizers(settings: SettingsStore): Tokenizers {
  const loaded = new Map<OpenAiEncoding, Promise<TokenCounter>>();
  return {
    async forModel(model) {
      const encoding = openAiEncodingOf(model);
      if (encoding) {
        if (!loaded.has(encoding)) loaded.set(encoding, openAiCounter(encoding));
        return loaded.get(encoding)!;
      }
      return estimateCounter((await settings.get<number>(ratioKey(model))) ?? DEFAULT_CHARS_PER_TOKEN);
    },
    async observe(model, counted, reported) {
      if (openAiEncodingOf(model)) return;
      const ratio = (await settings.get<number>(ratioKey(model))) ?? DEFAULT_CHARS_PER_TOKEN;
      await settings.set(ratioKey(model), calibrate(ratio, counted, reported));
    },
  };
}
