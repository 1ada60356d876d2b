import { describe, expect, it } from 'vitest';
import { DEMO_CONNECTION, draftFromPreset, type Connection } from '$lib/domain/connection';
import { contextWindowOf, knownContextWindow } from '$lib/domain/model-context';

const remote = (model: string, contextWindow?: number): Connection => ({
  ...draftFromPreset('custom'),
  kind: 'remote',
  id: 'x',
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKey: '',
  model,
  ...(contextWindow ? { contextWindow } : {}),
});

describe('knownContextWindow', () => {
  it.each([
    ['gpt-4o', 128_000],
    ['gpt-4o-mini-2024-07-18', 128_000],
    ['chatgpt-4o-latest', 128_000],
    ['gpt-4.1-nano', 1_047_576],
    ['gpt-5-mini', 400_000],
    ['gpt-5-chat-latest', 128_000],
    ['gpt-4-turbo', 128_000],
    ['gpt-4-1106-preview', 128_000],
    ['gpt-4', 8_192],
    ['gpt-4-0613', 8_192],
    ['gpt-4-32k', 32_768],
    ['gpt-3.5-turbo', 16_385],
    ['o1', 200_000],
    ['o1-mini', 128_000],
    ['o3-mini', 200_000],
    ['o4-mini-2025-04-16', 200_000],
    ['claude-3-5-sonnet-20241022', 200_000],
    ['claude-3-haiku-20240307', 200_000],
    ['claude-sonnet-4-5', 200_000],
    ['claude-opus-4-1-20250805', 200_000],
    ['claude-2', 100_000],
    ['claude-2.1', 200_000],
    ['gemini-1.5-pro-002', 2_097_152],
    ['gemini-1.5-flash', 1_048_576],
    ['gemini-2.0-flash', 1_048_576],
    ['gemini-2.5-pro', 1_048_576],
    ['gemini-flash-latest', 1_048_576],
    ['gemini-pro', 32_760],
    ['gemma-3-27b-it', 131_072],
    ['llama-3.3-70b-versatile', 131_072],
    ['llama3.1:8b', 131_072],
    ['llama3:8b', 8_192],
    ['mistral-large-latest', 131_072],
    ['open-mixtral-8x7b', 32_768],
    ['codestral-latest', 256_000],
    ['qwen2.5:14b', 32_768],
    ['qwen3-coder-480b-a35b-instruct', 262_144],
    ['deepseek-chat', 128_000],
    ['deepseek-reasoner', 128_000],
    ['grok-4', 256_000],
    ['command-r-plus', 128_000],
    ['phi-3-mini-4k-instruct', 4_096],
    ['moonshot-v1-128k', 131_072],
  ])('%s: %i tokens', (model, tokens) => {
    expect(knownContextWindow(model)).toBe(tokens);
  });

  it('reads the name without its provider prefix, in any case', () => {
    expect(knownContextWindow('openai/gpt-4o')).toBe(128_000);
    expect(knownContextWindow('anthropic/claude-3.7-sonnet')).toBe(200_000);
    expect(knownContextWindow('models/gemini-2.5-flash')).toBe(1_048_576);
    expect(knownContextWindow('meta-llama/Llama-3.3-70B-Instruct')).toBe(131_072);
    expect(knownContextWindow('Qwen/Qwen3-235B-A22B-Instruct-2507')).toBe(262_144);
    expect(knownContextWindow('us.anthropic.claude-3-5-haiku-20241022-v1:0')).toBe(200_000);
    expect(knownContextWindow('  DeepSeek-V3  ')).toBe(128_000);
  });

  it('knows nothing of a model it has no line for', () => {
    for (const model of ['', 'my-finetune', 'llama-guard-3-8b', 'demo-script', 'kimi'])
      expect(knownContextWindow(model)).toBeNull();
  });
});

describe('contextWindowOf', () => {
  it("the connection's own window overrides the known one", () => {
    expect(contextWindowOf(remote('gpt-4o', 32_000))).toEqual({ tokens: 32_000, source: 'connection' });
    expect(contextWindowOf(remote('gpt-4o'))).toEqual({ tokens: 128_000, source: 'known' });
  });

  it("reads the invocation's model, which a profile may set apart from the connection's", () => {
    expect(contextWindowOf(remote('my-finetune'), 'claude-3-opus')).toEqual({
      tokens: 200_000,
      source: 'known',
    });
  });

  it('none for an unknown model without a typed window, nor for the Demo', () => {
    expect(contextWindowOf(remote('my-finetune'))).toBeNull();
    expect(contextWindowOf(DEMO_CONNECTION)).toBeNull();
  });
});
