/**
 * Which invocations accept images (tools.md §11, decided when the snapshot is built): the
 * connection's Images setting, and for `auto` whether the model's name is a known vision model.
 */
import type { Connection } from './connection';

/**
 * Whether requests to `model` on `connection` carry images. `on` and `off` are the person's
 * word and win; `auto` trusts the list of known vision models. The Demo provider takes none.
 */
export function acceptsImages(connection: Connection, model: string = connection.model): boolean {
  if (connection.kind === 'demo') return false;
  switch (connection.capabilities.images) {
    case 'on':
      return true;
    case 'off':
      return false;
    case 'auto':
      return isKnownVisionModel(model);
  }
}

/**
 * Known not to take images, though a pattern below would match: audio, speech, search and
 * embedding variants, reasoning models released without vision, small text-only Gemma.
 */
const NOT_VISION: readonly RegExp[] = [
  /(?:audio|realtime|transcribe|tts|search|embed)/,
  /^o1-(?:mini|preview)/,
  /^o3-mini/,
  /^gpt-4-turbo-preview/,
  /^gemini-(?:1\.0-)?pro$/,
  /^gemma-?3n/,
  /^gemma-?3[:-](?:1b|270m)/,
];

/**
 * Known vision models, matched against the lowercased last segment of the name (so
 * `openai/gpt-4o`, `Qwen/Qwen2.5-VL-7B-Instruct` and `llava:13b` all count). Hosted: OpenAI
 * GPT-4o, 4.1, 4.5, 5 and o-series; Claude 3 and later; Gemini; Grok 4 and vision; Llama 4 and
 * 3.2 Vision; Pixtral and recent Mistral Small/Medium; Amazon Nova. Local families: LLaVA,
 * Qwen-VL, InternVL, MiniCPM-V, Moondream, Gemma 3, GLM-4V, Kimi-VL, DeepSeek-VL and any name
 * with "vision" or a "vl" token.
 */
const VISION: readonly RegExp[] = [
  /^(?:chat)?gpt-4o/,
  /^gpt-4\.(?:1|5)/,
  /^gpt-4-turbo/,
  /^gpt-5/,
  /^o1(?:$|-)/,
  /^o3(?:$|-)/,
  /^o4-/,
  /^computer-use/,
  /^claude-(?!2|instant)/,
  /^gemini-/,
  /^gemma-?3/,
  /^grok-(?:4|vision|2-vision)/,
  /^llama-?4/,
  /^llama-?3\.2.*vision/,
  /vision/,
  /(?:^|[-_.])vl\d*(?:$|[-_.:])/,
  /^qwen[\d.]*-?vl/,
  /^qvq/,
  /internvl/,
  /minicpm-?v/,
  /llava/,
  /moondream/,
  /pixtral/,
  /^mistral-small-?(?:3\.[12]|latest|25(?:0[3-9]|1\d))/,
  /^mistral-medium-?(?:3|latest|25)/,
  /^glm-[\d.]+v/,
  /^phi-?4-multimodal/,
  /^(?:amazon\.)?nova-(?:lite|pro|premier)/,
  /smolvlm|idefics|molmo/,
];

/** Pure: whether a model name is a known vision model (the `auto` setting). */
export function isKnownVisionModel(model: string): boolean {
  const name = model.trim().toLowerCase().split('/').at(-1) ?? '';
  if (name === '' || NOT_VISION.some((re) => re.test(name))) return false;
  return VISION.some((re) => re.test(name));
}
