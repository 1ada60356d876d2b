/**
 * A CORS relay (D17): every request goes to `<relayUrl>/<full provider URL>`, the convention of
 * cors-anywhere-style reverse proxies. Headers and body pass through unchanged.
 */
export function relayFetch(relayUrl: string, fetchImpl: typeof fetch): typeof fetch {
  const base = relayUrl.replace(/\/+$/, '');
  return (input, init) => {
    const target = input instanceof Request ? input.url : String(input);
    const relayed = `${base}/${target}`;
    return input instanceof Request ? fetchImpl(new Request(relayed, input), init) : fetchImpl(relayed, init);
  };
}
