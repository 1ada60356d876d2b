import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpCredentials } from '$lib/domain/mcp-credentials';
import type { McpCredentialStore, McpTarget } from '$lib/ports/mcp';

/** Reaching the server needs the person: a sign-in nobody started, or one that ran out. */
export class SignInNeeded extends Error {
  constructor() {
    super('Signing in is needed.');
  }
}

export interface OAuthProviderOptions {
  /**
   * A sign-in the person started: Hearth may register a client and send them to the
   * authorization page. Otherwise (discovery, runs) only stored tokens and their refresh are used.
   */
  interactive: boolean;
  /** The callback page; a non-interactive provider uses the one its sign-in was made with. */
  redirectUrl?: string;
  now: () => number;
  newState: () => string;
}

/**
 * The SDK's OAuth client (PKCE, metadata discovery, client registration, refresh: tools.md §15,
 * D1) over the credentials stored for one server. What the SDK hands over is saved as it is.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  /** Where the person must go to sign in, once the SDK asked for it. */
  authorizationUrl: URL | undefined;
  #credentials: McpCredentials | undefined;

  constructor(
    private readonly store: McpCredentialStore,
    private readonly target: McpTarget,
    stored: McpCredentials | undefined,
    private readonly options: OAuthProviderOptions,
  ) {
    // Credentials made for another endpoint are not this server's.
    this.#credentials = stored?.endpoint === target.endpoint ? stored : undefined;
  }

  get redirectUrl(): string | undefined {
    return this.options.redirectUrl ?? this.#credentials?.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Hearth',
      redirect_uris: this.redirectUrl ? [this.redirectUrl] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  async state(): Promise<string> {
    const state = this.options.newState();
    await this.#save({ pending: { state, startedAt: this.options.now() } });
    return state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const client = this.#credentials?.client as OAuthClientInformationMixed | undefined;
    if (client) return client;
    if (this.target.oauthClientId) return { client_id: this.target.oauthClientId };
    // Registering a client is the first step of a sign-in, which only the person starts.
    if (!this.options.interactive) throw new SignInNeeded();
    return undefined;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    if (!this.options.interactive && !this.#credentials?.client) throw new SignInNeeded();
    await this.#save({ client: { ...client } });
  }

  tokens(): OAuthTokens | undefined {
    return this.#credentials?.tokens as OAuthTokens | undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.#save({ tokens: { ...tokens }, tokensAt: this.options.now(), codeVerifier: undefined });
  }

  redirectToAuthorization(url: URL): void {
    if (!this.options.interactive) throw new SignInNeeded();
    this.authorizationUrl = url;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.#save({ codeVerifier });
  }

  codeVerifier(): string {
    const verifier = this.#credentials?.codeVerifier;
    if (!verifier) throw new SignInNeeded();
    return verifier;
  }

  async saveDiscoveryState(state: object): Promise<void> {
    await this.#save({ discovery: { ...state } });
  }

  discoveryState() {
    // Discovery fetches metadata wherever the server's 401 points, possibly another host: with
    // nothing of a sign-in stored here, only a sign-in the person started may go there.
    if (!this.options.interactive && !this.#credentials?.tokens && !this.#credentials?.codeVerifier)
      throw new SignInNeeded();
    return this.#credentials?.discovery as Awaited<
      ReturnType<NonNullable<OAuthClientProvider['discoveryState']>>
    >;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const all = scope === 'all';
    await this.#save({
      ...(all || scope === 'client' ? { client: undefined } : {}),
      ...(all || scope === 'tokens' ? { tokens: undefined, tokensAt: undefined } : {}),
      ...(all || scope === 'verifier' ? { codeVerifier: undefined } : {}),
      ...(all || scope === 'discovery' ? { discovery: undefined } : {}),
    });
  }

  async #save(change: Partial<McpCredentials>): Promise<void> {
    const redirectUrl = this.redirectUrl;
    if (!redirectUrl) throw new SignInNeeded();
    const next: McpCredentials = {
      ...(this.#credentials ?? { serverId: this.target.id, endpoint: this.target.endpoint, redirectUrl }),
      redirectUrl,
      ...change,
    };
    for (const key of Object.keys(next) as (keyof McpCredentials)[]) {
      if (next[key] === undefined) delete next[key];
    }
    this.#credentials = next;
    await this.store.put(next);
  }
}
