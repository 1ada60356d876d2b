import 'fake-indexeddb/auto';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { nodeWasm } from '../../support/image-codecs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieMcpCredentialStore, DexieMcpStore } from '$lib/adapters/db/mcp-store';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import { systemClock } from '$lib/adapters/system/clock';
import { McpServers } from '$lib/runtime/mcp-servers';
import { startHostileMcpServer, type HostileMcpServer } from '../../support/hostile-mcp-server';
import { startOAuthServer, type OAuthServer, visitAuthorization } from '../../support/oauth-server';

/**
 * Signing in to an OAuth-protected MCP server (tools.md §15, D1) with the SDK's client in Node:
 * metadata discovery, dynamic registration, PKCE, the `state` check, refresh when the access
 * token runs out, sign-out; the test plays the person following the authorization page.
 */
let oauth: OAuthServer;
let mcpServer: HostileMcpServer;
const REDIRECT = 'http://127.0.0.1:9/oauth/callback.html';
const never = new AbortController().signal;

beforeAll(async () => {
  mcpServer = await startHostileMcpServer({
    behaviour: 'ok',
    bearer: {
      accepts: (token) => oauth.accepts(token),
      get resourceMetadataUrl() {
        return oauth.resourceMetadataUrl;
      },
    },
  });
  oauth = await startOAuthServer({ resource: mcpServer.url, autoApprove: true });
});
afterAll(async () => {
  await mcpServer.close();
  await oauth.close();
});

function setup() {
  const db = openHearthDatabase(`hearth-oauth-${Math.random()}`);
  const credentials = new DexieMcpCredentialStore(db);
  let n = 0;
  const mcp = new McpServers({
    store: new DexieMcpStore(db),
    credentials,
    connector: new SdkMcpConnector(
      fetch,
      {},
      {
        credentials,
        now: () => Date.now(),
        newState: () => `state-${n++}-${Math.random().toString(36).slice(2)}`,
      },
    ),
    images: new JsquashImageNormalizer({ loadWasm: nodeWasm }),
    clock: systemClock,
    newId: () => crypto.randomUUID(),
  });
  return { mcp, db };
}

const visit = (authorizationUrl: string, answer: 'approve' | 'deny' = 'approve') =>
  visitAuthorization(authorizationUrl, REDIRECT, answer);

const reason = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as { error: { code: string; message: string } },
  );

describe('OAuth sign-in to an MCP server', () => {
  it('signs in with registration and PKCE, refreshes a token that ran out, and signs out', async () => {
    const { mcp } = setup();
    const { server } = await mcp.create({
      displayName: 'Guarded',
      endpoint: mcpServer.url,
      headers: [],
      protocolVersion: 'auto',
    });

    const refused = await reason(mcp.discover(server.id, never));
    expect(refused?.error.code).toBe('mcp.auth_required');
    expect(refused?.error.message).toMatch(/Sign in/);

    const step = await mcp.signIn(server.id, REDIRECT, never);
    if (step.kind !== 'visit') throw new Error('expected a visit');
    const authorization = new URL(step.authorizationUrl);
    expect(authorization.origin).toBe(oauth.url);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('redirect_uri')).toBe(REDIRECT);
    expect(authorization.searchParams.get('resource')).toBe(mcpServer.url);
    expect(oauth.clients()).toContain(authorization.searchParams.get('client_id'));

    const callback = await visit(step.authorizationUrl);
    expect(callback.code).toBeDefined();
    // A code that comes back with another state is not this sign-in's.
    const forged = await reason(mcp.finishSignIn({ ...callback, state: 'forged' }, never));
    expect(forged?.error.code).toBe('mcp.sign_in_unknown');

    const signedIn = await mcp.finishSignIn(callback, never);
    expect(signedIn.signIn.signedIn).toBe(true);
    expect(JSON.stringify(signedIn)).not.toMatch(/at-|rt-|code-/);
    // The state is used up.
    expect((await reason(mcp.finishSignIn(callback, never)))?.error.code).toBe('mcp.sign_in_unknown');

    const found = await mcp.discover(server.id, never);
    expect(found.tools.map((t) => t.name)).toEqual(['echo', 'add']);
    const echoed = await mcp.tryCall(server.id, 'echo', { message: 'hi' }, never);
    expect(echoed.content).toContain('Echo: hi');

    oauth.expireAccessTokens();
    const refreshes = oauth.log.filter((l) => l === 'token:refresh_token').length;
    const again = await mcp.tryCall(server.id, 'echo', { message: 'again' }, never);
    expect(again.content).toContain('Echo: again');
    expect(oauth.log.filter((l) => l === 'token:refresh_token')).toHaveLength(refreshes + 1);

    const out = await mcp.signOut(server.id);
    expect(out.signIn.signedIn).toBe(false);
    const after = await mcp.tryCall(server.id, 'echo', { message: 'x' }, never);
    expect(after.outcome).toBe('not_sent');
    expect(after.content).toMatch(/sign in/i);
  });

  it('a denied sign-in says so, and a changed endpoint forgets the sign-in', async () => {
    const { mcp } = setup();
    const { server } = await mcp.create({
      displayName: 'Guarded',
      endpoint: mcpServer.url,
      headers: [],
      protocolVersion: 'auto',
    });
    const first = await mcp.signIn(server.id, REDIRECT, never);
    if (first.kind !== 'visit') throw new Error('expected a visit');
    const denied = await reason(mcp.finishSignIn(await visit(first.authorizationUrl, 'deny'), never));
    expect(denied?.error.code).toBe('mcp.auth_failed');
    expect(denied?.error.message).toContain('access_denied');

    const second = await mcp.signIn(server.id, REDIRECT, never);
    if (second.kind !== 'visit') throw new Error('expected a visit');
    expect((await mcp.finishSignIn(await visit(second.authorizationUrl), never)).signIn.signedIn).toBe(true);
    // Signed in: signing in again needs no visit.
    expect((await mcp.signIn(server.id, REDIRECT, never)).kind).toBe('signed_in');

    const moved = await mcp.update(server.id, {
      displayName: 'Guarded',
      endpoint: `${mcpServer.url}?v=2`,
      headers: [],
      protocolVersion: 'auto',
    });
    expect(moved.signIn.signedIn).toBe(false);
  });

  it('uses a pre-registered client id instead of registering one', async () => {
    const { mcp } = setup();
    const clientId = oauth.preRegister([REDIRECT]);
    const { server } = await mcp.create({
      displayName: 'Guarded',
      endpoint: mcpServer.url,
      headers: [],
      protocolVersion: 'auto',
      oauthClientId: clientId,
    });
    const registered = oauth.log.filter((l) => l === 'register').length;
    const step = await mcp.signIn(server.id, REDIRECT, never);
    if (step.kind !== 'visit') throw new Error('expected a visit');
    expect(new URL(step.authorizationUrl).searchParams.get('client_id')).toBe(clientId);
    expect((await mcp.finishSignIn(await visit(step.authorizationUrl), never)).signIn.signedIn).toBe(true);
    expect(oauth.log.filter((l) => l === 'register')).toHaveLength(registered);
  });
});
