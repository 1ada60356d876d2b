import { describe, expect, it } from 'vitest';
import { LazyMcpConnector } from '$lib/adapters/mcp/lazy-connector';
import type { McpTarget } from '$lib/ports/mcp';

const target: McpTarget = {
  id: '11111111-1111-4111-8111-111111111111',
  endpoint: 'https://mcp.example/mcp',
  headers: [],
  protocolVersion: 'auto',
};

/** A fetch that refuses every request and remembers what was asked. */
function refusingFetch() {
  const urls: string[] = [];
  const fetch = (async (input: RequestInfo | URL) => {
    urls.push(input instanceof Request ? input.url : String(input));
    throw new TypeError('Failed to fetch');
  }) as typeof globalThis.fetch;
  return { fetch, urls };
}

describe('LazyMcpConnector', () => {
  it('reaches the server through the SDK connector built with its arguments', async () => {
    const { fetch, urls } = refusingFetch();
    const connector = new LazyMcpConnector([fetch, { connectMs: 1_000 }]);
    const found = await connector.discover(target, new AbortController().signal);
    expect(found.ok).toBe(false);
    expect(urls[0]).toBe(target.endpoint);
  });
});
