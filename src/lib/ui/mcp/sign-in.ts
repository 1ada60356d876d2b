import type { HearthClient } from '$lib/client/hearth';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { McpServerView, McpSignInCallback } from '$lib/worker/protocol';

/** The channel `static/oauth/callback.js` answers on. */
const CHANNEL = 'hearth-oauth';

/** The app's static callback page, beside the app wherever it is served from. */
export const callbackUrl = () => new URL('oauth/callback.html', document.baseURI).href;

export interface SignInPopup {
  /** Resolves with the server signed in, or rejects with what went wrong. */
  done: Promise<McpServerView>;
  /** Set when the browser blocked the popup: the page shows it as a link the person opens. */
  blockedUrl?: string;
}

/**
 * Signing in to an MCP server from a click (D1): a popup opened at once (popups need the
 * click), sent to the authorization page once the worker has prepared the sign-in; the static
 * callback page broadcasts the answer, which the worker checks against the `state` it made.
 * The app's own page never navigates, so the runtime worker and the router keep running.
 */
export async function signInWithPopup(
  client: HearthClient,
  serverId: string,
  signal: AbortSignal,
): Promise<SignInPopup> {
  const popup = window.open('about:blank', `hearth-oauth-${serverId}`, 'popup,width=520,height=720');
  let step;
  try {
    step = await client.mcp.signIn(serverId, callbackUrl(), signal);
  } catch (e) {
    popup?.close();
    throw e;
  }
  if (step.kind === 'signed_in') {
    popup?.close();
    const view = (await client.mcp.list()).find((v) => v.server.id === serverId);
    if (!view) throw new HearthFailure(hearthError('mcp.server_not_found', 'The server was removed.'));
    return { done: Promise.resolve(view) };
  }
  if (popup) popup.location.href = step.authorizationUrl;
  const done = waitForCallback(client, popup, signal);
  return popup ? { done } : { done, blockedUrl: step.authorizationUrl };
}

function waitForCallback(
  client: HearthClient,
  popup: Window | null,
  signal: AbortSignal,
): Promise<McpServerView> {
  return new Promise((resolve, reject) => {
    const channel = new BroadcastChannel(CHANNEL);
    let finishing = false;
    const stop = () => {
      channel.close();
      clearInterval(watch);
      signal.removeEventListener('abort', onAbort);
    };
    const fail = (message: string) => {
      stop();
      reject(new HearthFailure(hearthError('mcp.auth_failed', message)));
    };
    const onAbort = () => {
      popup?.close();
      fail('Sign-in stopped.');
    };
    signal.addEventListener('abort', onAbort);
    // A window closed before it came back is a sign-in given up.
    const watch = setInterval(() => {
      if (popup?.closed && !finishing) fail('The sign-in window was closed before signing in finished.');
    }, 500);
    channel.onmessage = (event: MessageEvent<unknown>) => {
      const answer = readCallback(event.data);
      if (!answer || finishing) return;
      finishing = true;
      client.mcp.finishSignIn(answer, signal).then(
        (view) => {
          stop();
          resolve(view);
        },
        (e: unknown) => {
          stop();
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    };
  });
}

/** The callback page's message, as far as it is one; the worker checks its `state`. */
function readCallback(data: unknown): McpSignInCallback | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  if (d.type !== 'hearth-oauth-callback' || typeof d.state !== 'string') return null;
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const code = text(d.code);
  const error = text(d.error);
  const errorDescription = text(d.errorDescription);
  return {
    state: d.state,
    ...(code ? { code } : {}),
    ...(error ? { error } : {}),
    ...(errorDescription ? { errorDescription } : {}),
  };
}
