/** The wire formats Hearth speaks (runtime.md §4.2). */
export type WireFormat = 'openai-chat' | 'anthropic' | 'gemini';

/**
 * Whether requests carry images: `auto` when the model is a known vision model
 * (`isKnownVisionModel`), `on` and `off` when the person says so for this connection.
 */
export const IMAGE_SUPPORT = ['auto', 'on', 'off'] as const;
export type ImageSupport = (typeof IMAGE_SUPPORT)[number];

export interface ModelCapabilities {
  tools: boolean;
  images: ImageSupport;
  reasoning: boolean;
}

export interface ProviderPreset {
  label: string;
  wire: WireFormat;
  baseUrl: string;
  /** Hosted APIs need a key; local servers usually do not. */
  needsKey: boolean;
  capabilities: ModelCapabilities;
  modelPlaceholder: string;
  /** Shown under the form: what this provider needs to work from a browser. */
  hint?: string;
}

const ALL: ModelCapabilities = { tools: true, images: 'auto', reasoning: true };
const TOOLS_ONLY: ModelCapabilities = { tools: true, images: 'auto', reasoning: false };
const LOCAL_HINT = 'Local servers must allow this page’s origin (CORS).';

/** Presets: the right base URL, wire format and defaults per provider (D17 quirks in the hints). */
export const PROVIDER_PRESETS = {
  openai: {
    label: 'OpenAI',
    wire: 'openai-chat',
    baseUrl: 'https://api.openai.com/v1',
    needsKey: true,
    capabilities: { tools: true, images: 'auto', reasoning: false },
    modelPlaceholder: 'gpt-4o-mini',
  },
  anthropic: {
    label: 'Anthropic',
    wire: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    needsKey: true,
    capabilities: ALL,
    modelPlaceholder: 'claude-sonnet-4-5',
  },
  gemini: {
    label: 'Google Gemini',
    wire: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    needsKey: true,
    capabilities: ALL,
    modelPlaceholder: 'gemini-2.5-flash',
  },
  openrouter: {
    label: 'OpenRouter',
    wire: 'openai-chat',
    baseUrl: 'https://openrouter.ai/api/v1',
    needsKey: true,
    capabilities: ALL,
    modelPlaceholder: 'openai/gpt-4o-mini',
  },
  deepseek: {
    label: 'DeepSeek',
    wire: 'openai-chat',
    baseUrl: 'https://api.deepseek.com/v1',
    needsKey: true,
    capabilities: { tools: true, images: 'auto', reasoning: true },
    modelPlaceholder: 'deepseek-chat',
  },
  groq: {
    label: 'Groq',
    wire: 'openai-chat',
    baseUrl: 'https://api.groq.com/openai/v1',
    needsKey: true,
    capabilities: TOOLS_ONLY,
    modelPlaceholder: 'llama-3.3-70b-versatile',
  },
  mistral: {
    label: 'Mistral',
    wire: 'openai-chat',
    baseUrl: 'https://api.mistral.ai/v1',
    needsKey: true,
    capabilities: TOOLS_ONLY,
    modelPlaceholder: 'mistral-large-latest',
  },
  xai: {
    label: 'xAI',
    wire: 'openai-chat',
    baseUrl: 'https://api.x.ai/v1',
    needsKey: true,
    capabilities: ALL,
    modelPlaceholder: 'grok-4',
  },
  ollama: {
    label: 'Ollama',
    wire: 'openai-chat',
    baseUrl: 'http://localhost:11434/v1',
    needsKey: false,
    capabilities: TOOLS_ONLY,
    modelPlaceholder: 'qwen3:8b',
    hint: 'Start Ollama with OLLAMA_ORIGINS set to this page’s origin, e.g. OLLAMA_ORIGINS="https://hearth.example" ollama serve.',
  },
  lmstudio: {
    label: 'LM Studio',
    wire: 'openai-chat',
    baseUrl: 'http://localhost:1234/v1',
    needsKey: false,
    capabilities: TOOLS_ONLY,
    modelPlaceholder: 'qwen3-8b',
    hint: 'In LM Studio’s server settings, turn on “Enable CORS”.',
  },
  llamacpp: {
    label: 'llama.cpp server',
    wire: 'openai-chat',
    baseUrl: 'http://localhost:8080/v1',
    needsKey: false,
    capabilities: TOOLS_ONLY,
    modelPlaceholder: 'local',
    hint: `${LOCAL_HINT} Start llama-server with --jinja so tool calls work.`,
  },
  vllm: {
    label: 'vLLM',
    wire: 'openai-chat',
    baseUrl: 'http://localhost:8000/v1',
    needsKey: false,
    capabilities: TOOLS_ONLY,
    modelPlaceholder: 'Qwen/Qwen3-8B',
    hint: `${LOCAL_HINT} Start vLLM with --allowed-origins and --enable-auto-tool-choice.`,
  },
  custom: {
    label: 'Custom (OpenAI-compatible)',
    wire: 'openai-chat',
    baseUrl: '',
    needsKey: false,
    capabilities: TOOLS_ONLY,
    modelPlaceholder: 'model name',
  },
} as const satisfies Record<string, ProviderPreset>;

export type PresetId = keyof typeof PROVIDER_PRESETS;
export const PRESET_IDS = Object.keys(PROVIDER_PRESETS) as PresetId[];
export const presetOf = (id: string): ProviderPreset | undefined =>
  Object.hasOwn(PROVIDER_PRESETS, id) ? PROVIDER_PRESETS[id as PresetId] : undefined;
