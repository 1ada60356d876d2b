import { describe, expect, it } from 'vitest';
import { relayFetch } from '$lib/adapters/llm/relay';

describe('CORS relay', () => {
  it('sends every request to <relay>/<provider URL> with headers and body unchanged', async () => {
    const seen: { url: string; init?: RequestInit }[] = [];
    const fake = (async (input: RequestInfo | URL, init?: RequestInit) => {
      seen.push({ url: String(input), init });
      return new Response('ok');
    }) as typeof fetch;
    const f = relayFetch('https://relay.example/', fake);
    await f('https://api.openai.com/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: '{}',
    });
    expect(seen[0]).toMatchObject({
      url: 'https://relay.example/https://api.openai.com/v1/chat/completions',
      init: { method: 'POST', headers: { authorization: 'Bearer k' }, body: '{}' },
    });
  });
});
