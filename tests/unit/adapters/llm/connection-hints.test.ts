import { describe, expect, it } from 'vitest';
import { hearthError } from '$lib/domain/errors';
import { hintFor } from '$lib/adapters/llm/connection-hints';

const ctx = { baseUrl: 'https://example.test/v1', model: 'm' };

describe('hintFor', () => {
  it('names the API root of the wire the connection speaks', () => {
    const notFound = hearthError('model.request_failed', 'Not found (HTTP 404).', { status: 404 });
    expect(hintFor(notFound, { ...ctx, wire: 'openai-chat' })).toContain('usually ends in /v1');
    expect(hintFor(notFound, { ...ctx, wire: 'anthropic' })).toContain('https://api.anthropic.com/v1');
    expect(hintFor(notFound, { ...ctx, wire: 'gemini' })).toContain(
      'https://generativelanguage.googleapis.com/v1beta',
    );
    const odd = hearthError('model.upstream_invalid_response', 'Not JSON.');
    expect(hintFor(odd, { ...ctx, wire: 'gemini' })).toContain('not like the Gemini API');
    expect(hintFor(odd, { ...ctx, wire: 'anthropic' })).not.toContain('OpenAI');
  });

  it('gives local-server CORS advice only to OpenAI-compatible connections', () => {
    const unreachable = hearthError('model.network_error', 'Failed to fetch.');
    expect(hintFor(unreachable, { ...ctx, wire: 'openai-chat' })).toContain('OLLAMA_ORIGINS');
    for (const wire of ['anthropic', 'gemini'] as const) {
      const hint = hintFor(unreachable, { ...ctx, wire });
      expect(hint).not.toContain('OLLAMA_ORIGINS');
      expect(hint).toContain('CORS relay URL');
    }
  });

  it('points at the listed models when the named one is missing', () => {
    const notFound = hearthError('model.request_failed', 'Not found (HTTP 404).', { status: 404 });
    expect(hintFor(notFound, { ...ctx, wire: 'anthropic', models: ['a', 'b'] })).toBe(
      'The server does not offer a model named "m". Pick one of the 2 models it lists.',
    );
  });
});
