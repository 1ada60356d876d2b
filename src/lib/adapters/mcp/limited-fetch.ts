import type { McpTarget } from '$lib/ports/mcp';

/** What the fetch of one connection saw of its current request (a connection serves one at a time). */
export interface RequestWatch {
  /** The HTTP status of the last response, undefined while none arrived. */
  status: number | undefined;
  /** The response ran past `MCP_LIMITS.responseBytes` and was cut off. */
  tooLarge: boolean;
  /** The protocol version the server answered `initialize` with. */
  protocolVersion: string | undefined;
  /** The host a 401 named for its sign-in metadata (`resource_metadata`), when it named one. */
  signInHost: string | undefined;
  reset(): void;
}

export function requestWatch(): RequestWatch {
  const watch: RequestWatch = {
    status: undefined,
    tooLarge: false,
    protocolVersion: undefined,
    signInHost: undefined,
    reset() {
      watch.status = undefined;
      watch.tooLarge = false;
      watch.signInHost = undefined;
    },
  };
  return watch;
}

/**
 * The fetch the SDK's transport uses. Requests to the endpoint carry the registration's headers,
 * follow no redirects, get no standalone event stream (a GET is answered 405 here, as a server
 * without one would), and a pinned protocol version is asked for in `initialize` and checked in
 * its answer. The sign-in's requests (metadata, registration, tokens) go to the authorization
 * server without those headers. Every response is cut at `maxBytes`.
 */
export function limitedFetch(
  base: typeof fetch,
  watch: RequestWatch,
  target: McpTarget,
  maxBytes: number,
): typeof fetch {
  const endpoint = new URL(target.endpoint).href;
  return async (input, init = {}) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = (init.method ?? 'GET').toUpperCase();
    if (url !== endpoint) {
      const response = await base(input, { ...init, redirect: method === 'GET' ? 'follow' : 'error' });
      return limited(response, maxBytes, () => {});
    }
    if (method === 'GET') return new Response(null, { status: 405 });
    const headers = new Headers(init.headers);
    for (const h of target.headers) headers.set(h.name, h.value);
    let body = init.body;
    const pinned = target.protocolVersion !== 'auto' ? target.protocolVersion : null;
    const message =
      typeof body === 'string'
        ? (JSON.parse(body) as { method?: string; params?: { protocolVersion?: string } })
        : null;
    const initializing = message?.method === 'initialize';
    if (pinned && initializing && message.params) {
      message.params.protocolVersion = pinned;
      body = JSON.stringify(message);
    }
    const response = await base(input, { ...init, headers, body, redirect: 'error' });
    watch.status = response.status;
    if (response.status === 401) watch.signInHost = signInHostOf(response.headers.get('www-authenticate'));
    const agreed = response.headers.get('mcp-protocol-version');
    if (agreed) watch.protocolVersion = agreed;
    const read = limited(response, maxBytes, () => (watch.tooLarge = true));
    if (!initializing) return read;
    return watchInitialize(read, watch, pinned);
  };
}

/** The host of `resource_metadata` in a `WWW-Authenticate` header, read without contacting it. */
function signInHostOf(header: string | null): string | undefined {
  const url = header ? /resource_metadata="([^"]+)"/.exec(header)?.[1] : undefined;
  try {
    return url ? new URL(url).host : undefined;
  } catch {
    return undefined;
  }
}

function limited(response: Response, maxBytes: number, onTooLarge: () => void): Response {
  if (!response.body) return response;
  let seen = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) {
          onTooLarge();
          controller.error(new Error(`The response is larger than ${maxBytes} bytes.`));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** Reads `initialize`'s answer for its protocol version (and refuses another one than pinned). */
async function watchInitialize(
  response: Response,
  watch: RequestWatch,
  pinned: string | null,
): Promise<Response> {
  if (!response.ok) return response;
  const text = await response.text();
  const version = /"protocolVersion"\s*:\s*"([^"]+)"/.exec(text)?.[1];
  if (version) watch.protocolVersion = version;
  if (pinned && version && version !== pinned) {
    throw new PinnedVersionRefused(pinned, version);
  }
  return new Response(text, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

export class PinnedVersionRefused extends Error {
  constructor(
    readonly pinned: string,
    readonly offered: string,
  ) {
    super(`The server speaks MCP ${offered}; this registration asks for ${pinned}.`);
  }
}
