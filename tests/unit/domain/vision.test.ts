import { describe, expect, it } from 'vitest';
import { DEMO_CONNECTION, draftFromPreset, type Connection } from '$lib/domain/connection';
import type { ImageSupport } from '$lib/domain/provider-presets';
import { acceptsImages, isKnownVisionModel } from '$lib/domain/vision';

const remote = (model: string, images: ImageSupport): Connection => ({
  ...draftFromPreset('custom'),
  kind: 'remote',
  id: 'x',
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKey: '',
  model,
  capabilities: { tools: true, images, reasoning: false },
});

describe('acceptsImages', () => {
  it('auto follows the known vision models; on and off are the person’s word', () => {
    expect(acceptsImages(remote('gpt-4o-mini', 'auto'))).toBe(true);
    expect(acceptsImages(remote('deepseek-chat', 'auto'))).toBe(false);
    expect(acceptsImages(remote('deepseek-chat', 'on'))).toBe(true);
    expect(acceptsImages(remote('gpt-4o-mini', 'off'))).toBe(false);
  });

  it('judges the invocation’s model, which a profile may set apart from the connection’s', () => {
    expect(acceptsImages(remote('deepseek-chat', 'auto'), 'gpt-4.1')).toBe(true);
    expect(acceptsImages(remote('gpt-4.1', 'auto'), 'qwen3:8b')).toBe(false);
  });

  it('the Demo provider takes no images', () => {
    expect(acceptsImages(DEMO_CONNECTION)).toBe(false);
  });

  it('every preset starts on auto', () => {
    for (const id of ['openai', 'anthropic', 'gemini', 'ollama', 'custom'] as const)
      expect(draftFromPreset(id).capabilities.images).toBe('auto');
  });
});

describe('isKnownVisionModel', () => {
  it.each([
    'gpt-4o',
    'gpt-4o-mini-2024-07-18',
    'chatgpt-4o-latest',
    'gpt-4.1-nano',
    'gpt-4-turbo-2024-04-09',
    'gpt-5',
    'gpt-5-mini',
    'o1',
    'o3',
    'o4-mini',
    'claude-3-5-sonnet-20241022',
    'claude-sonnet-4-5',
    'claude-opus-4-1-20250805',
    'anthropic/claude-3.7-sonnet',
    'gemini-2.5-flash',
    'models/gemini-3-pro-preview',
    'google/gemini-2.0-flash-001',
    'gemma3:4b',
    'google/gemma-3-12b',
    'grok-4',
    'grok-2-vision-1212',
    'meta-llama/llama-4-scout-17b-16e-instruct',
    'llama3.2-vision:11b',
    'meta-llama/Llama-3.2-11B-Vision-Instruct',
    'llava:13b',
    'bakllava',
    'qwen2.5vl:7b',
    'Qwen/Qwen2.5-VL-7B-Instruct',
    'qwen3-vl:8b',
    'qwen-vl-max',
    'deepseek-vl2',
    'OpenGVLab/InternVL2_5-8B',
    'minicpm-v',
    'moondream',
    'pixtral-12b-2409',
    'mistral-small-latest',
    'mistral-small3.1',
    'mistral-medium-latest',
    'glm-4.5v',
    'granite3.2-vision',
  ])('%s takes images', (model) => {
    expect(isKnownVisionModel(model)).toBe(true);
  });

  it.each([
    '',
    'gpt-3.5-turbo',
    'gpt-4',
    'gpt-4-turbo-preview',
    'gpt-4o-audio-preview',
    'gpt-4o-mini-realtime-preview',
    'gpt-4o-mini-tts',
    'gpt-4o-search-preview',
    'openai/gpt-oss-120b',
    'o1-mini',
    'o3-mini',
    'claude-2.1',
    'claude-instant-1.2',
    'gemini-2.5-flash-preview-tts',
    'gemini-embedding-001',
    'gemma3:1b',
    'gemma3n:e4b',
    'deepseek-chat',
    'deepseek-reasoner',
    'llama-3.3-70b-versatile',
    'qwen3:8b',
    'Qwen/Qwen3-8B',
    'mistral-large-latest',
    'mistral-small-2501',
    'grok-3',
    'local',
    'demo-script',
  ])('%s does not', (model) => {
    expect(isKnownVisionModel(model)).toBe(false);
  });
});
