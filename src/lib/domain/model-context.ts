/**
 * How many tokens a model takes per request, for models Hearth knows: a Session compacts to fit
 * it without the person typing a number. The connection's own `contextWindow` overrides it.
 */
import type { Connection } from './connection';

/**
 * Known context windows, matched in order against the lowercased model name without its
 * provider prefix (`openai/`, `models/`, `anthropic.` on Bedrock); the first match wins. Where
 * hosts serve a model with less than its card says (Llama 4, Qwen), the smaller common value.
 */
const KNOWN: readonly (readonly [RegExp, number])[] = [
  // OpenAI
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-5-chat/, 128_000],
  [/^gpt-5/, 400_000],
  [/^(?:chatgpt-4o|gpt-4o)/, 128_000],
  [/^gpt-4\.5/, 128_000],
  [/^gpt-4-turbo|^gpt-4-\d{4}-preview|^gpt-4-vision/, 128_000],
  [/^gpt-4(?:$|-\d{4}$|-0613|-0314)/, 8_192],
  [/^gpt-3\.5-turbo/, 16_385],
  [/^gpt-oss/, 131_072],
  [/^o1-(?:mini|preview)/, 128_000],
  [/^o[134](?:$|-)/, 200_000],
  // Anthropic
  [/^claude-(?:instant|2\.0|2$)/, 100_000],
  [/^claude-/, 200_000],
  // Google
  [/^gemini-1\.5-pro/, 2_097_152],
  [/^gemini-(?:flash|flash-lite|pro)-latest/, 1_048_576],
  [/^gemini-(?:1\.5|2|3)/, 1_048_576],
  [/^gemini-(?:1\.0-)?pro/, 32_760],
  [/^gemma-?3/, 131_072],
  [/^gemma/, 8_192],
  // Meta
  [/^(?:meta-)?llama-?3\.[1-3]/, 131_072],
  [/^(?:meta-)?llama-?4/, 131_072],
  [/^(?:meta-)?llama-?3/, 8_192],
  [/^(?:meta-)?llama-?2/, 4_096],
  // Mistral
  [/^codestral/, 256_000],
  [/^magistral/, 40_000],
  [/^(?:open-)?(?:mistral-7b|mixtral-8x7b)/, 32_768],
  [/^(?:open-)?mixtral-8x22b/, 65_536],
  [/^(?:open-)?mistral-(?:large|medium|small|nemo|saba)|^ministral|^pixtral/, 131_072],
  // Qwen
  [/^qwen3-coder|^qwen3-.*2507/, 262_144],
  [/^qwen-turbo/, 1_000_000],
  [/^qwen-max/, 32_768],
  [/^qwen-plus|^qwq/, 131_072],
  [/^qwen/, 32_768],
  // DeepSeek
  [/^deepseek-coder(?!-v2)/, 16_384],
  [/^deepseek/, 128_000],
  // xAI, Cohere, Moonshot, Zhipu
  [/^grok-4-fast/, 2_000_000],
  [/^grok-(?:4|code)/, 256_000],
  [/^grok-/, 131_072],
  [/^command-a/, 256_000],
  [/^command-r/, 128_000],
  [/^kimi-k2/, 131_072],
  [/^glm-4\.[56]/, 131_072],
];

/** A size in the name, such as `gpt-4-32k` or `moonshot-v1-128k`, says its size itself. */
const SIZE_IN_NAME = /(?:^|[-_:.])(\d{1,4})k(?:$|[-_:.])/;

/** The model's name as the table reads it: lowercased, its provider prefix removed. */
const nameOf = (model: string): string =>
  (model.trim().toLowerCase().split('/').at(-1) ?? '').replace(
    /^(?:[a-z]{2}\.)?(?:anthropic|meta|mistral|amazon|cohere|deepseek|qwen)\./,
    '',
  );

/** Pure: how many tokens a well-known model takes, or null when Hearth does not know it. */
export function knownContextWindow(model: string): number | null {
  const name = nameOf(model);
  if (name === '') return null;
  const size = SIZE_IN_NAME.exec(name);
  if (size) return Number(size[1]) * 1024;
  return KNOWN.find(([re]) => re.test(name))?.[1] ?? null;
}

/**
 * The context size requests on `connection` must fit: the one typed into the connection, else the
 * model's known one; null for the Demo and for models Hearth does not know.
 */
export function contextWindowOf(
  connection: Connection,
  model: string = connection.model,
): { tokens: number; source: 'connection' | 'known' } | null {
  if (connection.kind === 'demo') return null;
  if (connection.contextWindow) return { tokens: connection.contextWindow, source: 'connection' };
  const known = knownContextWindow(model);
  return known === null ? null : { tokens: known, source: 'known' };
}
