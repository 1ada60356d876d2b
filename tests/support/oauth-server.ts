/**
 * An OAuth 2.1 authorization server for tests, on `node:http` at 127.0.0.1 (random port), with
 * what an MCP client needs of one: protected-resource metadata (RFC 9728) for the MCP endpoint it
 * guards, authorization-server metadata (RFC 8414), dynamic client registration (RFC 7591), the
 * authorization endpoint (PKCE S256 required, `state` passed back) and the token endpoint
 * (authorization code and refresh token grants). Every answer carries CORS headers, as a browser
 * client needs. `accepts(token)` is what the guarded MCP server asks.
 *
 * The authorization page shows Approve and Deny links (a person clicks one); `autoApprove` sends
 * the browser straight back with a code, for clients that follow the redirect themselves.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface OAuthServerOptions {
  /** The MCP endpoint this server issues tokens for (the protected resource). */
  resource: string;
  /** Lifetime of an access token, in seconds (default 3600). */
  accessTtlSeconds?: number;
  autoApprove?: boolean;
}

export interface OAuthServer {
  /** `http://127.0.0.1:<port>` (the issuer). */
  url: string;
  resourceMetadataUrl: string;
  /** The guarded server's question: is this access token current? */
  accepts(token: string): boolean;
  /** Every access token issued so far runs out now. */
  expireAccessTokens(): void;
  /** What each endpoint was asked, in order: `register`, `authorize`, `token:<grant>`. */
  log: string[];
  /** Client ids registered dynamically. */
  clients(): string[];
  /**
   * Every secret of the protocol this server made or was shown, in order: the access and refresh
   * tokens it issued, the authorization codes, and the PKCE code verifiers sent to its token
   * endpoint (for tests that look for them where they must not be).
   */
  secrets: { accessTokens: string[]; refreshTokens: string[]; codes: string[]; codeVerifiers: string[] };
  /** Registers a client the way an administrator would, outside the protocol. */
  preRegister(redirectUris: string[]): string;
  close(): Promise<void>;
}

interface Client {
  redirectUris: string[];
}
interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
}

export async function startOAuthServer(options: OAuthServerOptions): Promise<OAuthServer> {
  const ttl = options.accessTtlSeconds ?? 3600;
  const clients = new Map<string, Client>();
  const codes = new Map<string, Grant>();
  const access = new Map<string, number>();
  const refresh = new Map<string, string>();
  const log: string[] = [];
  const secrets: OAuthServer['secrets'] = {
    accessTokens: [],
    refreshTokens: [],
    codes: [],
    codeVerifiers: [],
  };
  const sockets = new Set<Socket>();
  let origin = '';

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => json(res, 500, { error: 'server_error', detail: String(e) }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const issue = (clientId: string) => {
    const token = `at-${randomUUID()}`;
    const refreshToken = `rt-${randomUUID()}`;
    secrets.accessTokens.push(token);
    secrets.refreshTokens.push(refreshToken);
    access.set(token, Date.now() + ttl * 1000);
    refresh.set(refreshToken, clientId);
    return { access_token: token, token_type: 'Bearer', expires_in: ttl, refresh_token: refreshToken };
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'Content-Type, Authorization, MCP-Protocol-Version');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    const url = new URL(req.url ?? '/', origin);
    const body = await readBody(req);
    switch (url.pathname) {
      case '/.well-known/oauth-protected-resource':
        return json(res, 200, { resource: options.resource, authorization_servers: [origin] });
      case '/.well-known/oauth-authorization-server':
        return json(res, 200, {
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          registration_endpoint: `${origin}/register`,
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none'],
        });
      case '/register': {
        log.push('register');
        const meta = JSON.parse(body || '{}') as { redirect_uris?: string[] };
        if (!Array.isArray(meta.redirect_uris) || meta.redirect_uris.length === 0) {
          return json(res, 400, { error: 'invalid_redirect_uri' });
        }
        const clientId = `client-${randomUUID()}`;
        clients.set(clientId, { redirectUris: meta.redirect_uris });
        return json(res, 201, {
          ...meta,
          client_id: clientId,
          client_id_issued_at: Math.floor(Date.now() / 1000),
        });
      }
      case '/authorize':
        log.push('authorize');
        return authorize(url, res);
      case '/authorize/answer':
        return answer(url, res);
      case '/token':
        return token(new URLSearchParams(body), res);
      default:
        return json(res, 404, { error: 'not_found' });
    }
  }

  function authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const client = clients.get(q.get('client_id') ?? '');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!client || !client.redirectUris.includes(redirectUri)) {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('Unknown client or redirect_uri.');
    }
    if (
      q.get('response_type') !== 'code' ||
      q.get('code_challenge_method') !== 'S256' ||
      !q.get('code_challenge')
    ) {
      return redirectBack(res, redirectUri, { error: 'invalid_request', state: q.get('state') });
    }
    const approve = `/authorize/answer?${q.toString()}&answer=approve`;
    const deny = `/authorize/answer?${q.toString()}&answer=deny`;
    if (options.autoApprove) return void res.writeHead(302, { location: approve }).end();
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        `<!doctype html><title>Test authorization server</title><h1>Let Hearth use the test server?</h1>` +
          `<p><a href="${escape(approve)}">Approve</a> <a href="${escape(deny)}">Deny</a></p>`,
      );
  }

  function answer(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri') ?? '';
    const state = q.get('state');
    if (q.get('answer') !== 'approve')
      return redirectBack(res, redirectUri, { error: 'access_denied', state });
    const code = `code-${randomUUID()}`;
    secrets.codes.push(code);
    codes.set(code, {
      clientId: q.get('client_id') ?? '',
      redirectUri,
      challenge: q.get('code_challenge') ?? '',
    });
    redirectBack(res, redirectUri, { code, state, iss: origin });
  }

  function token(params: URLSearchParams, res: ServerResponse): void {
    const grant = params.get('grant_type');
    log.push(`token:${grant}`);
    const clientId = params.get('client_id') ?? '';
    if (grant === 'authorization_code') {
      const code = codes.get(params.get('code') ?? '');
      codes.delete(params.get('code') ?? '');
      const verifier = params.get('code_verifier') ?? '';
      if (verifier) secrets.codeVerifiers.push(verifier);
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!code || code.clientId !== clientId || code.redirectUri !== params.get('redirect_uri')) {
        return json(res, 400, { error: 'invalid_grant', error_description: 'unknown code' });
      }
      if (code.challenge !== challenge) {
        return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
      }
      return json(res, 200, issue(clientId));
    }
    if (grant === 'refresh_token') {
      const presented = params.get('refresh_token') ?? '';
      if (refresh.get(presented) !== clientId) return json(res, 400, { error: 'invalid_grant' });
      refresh.delete(presented);
      return json(res, 200, issue(clientId));
    }
    json(res, 400, { error: 'unsupported_grant_type' });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource`,
    accepts: (t) => (access.get(t) ?? 0) > Date.now(),
    expireAccessTokens: () => {
      for (const t of access.keys()) access.set(t, 0);
    },
    log,
    clients: () => [...clients.keys()],
    secrets,
    preRegister: (redirectUris) => {
      const clientId = `pre-${randomUUID()}`;
      clients.set(clientId, { redirectUris });
      return clientId;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The person on the authorization page: follows its redirects until they reach `redirectUrl`,
 * and returns what the callback would get (the Approve link, or Deny when `answer` says so).
 */
export async function visitAuthorization(
  authorizationUrl: string,
  redirectUrl: string,
  answer: 'approve' | 'deny' = 'approve',
): Promise<{ state: string; code?: string; error?: string }> {
  let url = authorizationUrl;
  for (let hop = 0; hop < 5; hop++) {
    if (url.startsWith(redirectUrl)) break;
    if (answer === 'deny') url = url.replace('answer=approve', 'answer=deny');
    const response = await fetch(url, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (!location) throw new Error(`no redirect from ${url}: ${response.status}`);
    url = new URL(location, url).href;
  }
  const q = new URL(url).searchParams;
  return {
    state: q.get('state') ?? '',
    ...(q.get('code') ? { code: q.get('code')! } : {}),
    ...(q.get('error') ? { error: q.get('error')! } : {}),
  };
}

function redirectBack(res: ServerResponse, redirectUri: string, params: Record<string, string | null>): void {
  const target = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null) target.searchParams.set(k, v);
  res.writeHead(302, { location: target.href }).end();
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
