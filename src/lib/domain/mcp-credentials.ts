import { z } from 'zod';

/**
 * What signing in to an MCP server left on this device (tools.md §15, D1): the OAuth client
 * Hearth registered (or the person's pre-registered id), the tokens, and a sign-in under way.
 * Bound to the endpoint it was made for; every value here is a secret that stays on this
 * device: never exported, logged, journaled or shown.
 */
export const mcpCredentialsSchema = z.object({
  serverId: z.string(),
  endpoint: z.string(),
  /** The callback page the authorization server sends the person back to. */
  redirectUrl: z.string(),
  /** As the SDK saves them (OAuthClientInformation, OAuthTokens, discovery state): opaque here. */
  client: z.record(z.string(), z.unknown()).optional(),
  tokens: z.record(z.string(), z.unknown()).optional(),
  /** When the tokens were saved, for their `expires_in`. */
  tokensAt: z.number().optional(),
  discovery: z.record(z.string(), z.unknown()).optional(),
  codeVerifier: z.string().optional(),
  /** A sign-in waiting for its callback: its `state`, checked when the code comes back. */
  pending: z.object({ state: z.string(), startedAt: z.number() }).optional(),
});
export type McpCredentials = z.infer<typeof mcpCredentialsSchema>;

/** A sign-in left unfinished this long is forgotten: its code, if it comes, is refused. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

/** What the page may know of a server's sign-in: never a token. */
export interface McpSignInStatus {
  signedIn: boolean;
  /** When the access token runs out (it is refreshed then, when the server allows). */
  expiresAt?: number;
}

export function signInStatus(credentials: McpCredentials | undefined, endpoint: string): McpSignInStatus {
  const tokens = credentials?.endpoint === endpoint ? credentials.tokens : undefined;
  if (typeof tokens?.access_token !== 'string') return { signedIn: false };
  const expiresIn = tokens.expires_in;
  return typeof expiresIn === 'number' && credentials?.tokensAt !== undefined
    ? { signedIn: true, expiresAt: credentials.tokensAt + expiresIn * 1000 }
    : { signedIn: true };
}
