import type { HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import type { Result } from '$lib/domain/result';
import type { McpCallOutcome, McpConnector, McpDiscovery, McpSignInStep, McpTarget } from '$lib/ports/mcp';
import type { SdkMcpConnector } from './connector';

/**
 * The SDK connector, loaded the first time a server is reached: the MCP SDK and its schema
 * validators are a large part of the runtime worker, which every first visit starts.
 */
export class LazyMcpConnector implements McpConnector {
  #connector?: Promise<SdkMcpConnector>;

  constructor(private readonly args: ConstructorParameters<typeof SdkMcpConnector>) {}

  #load(): Promise<SdkMcpConnector> {
    this.#connector ??= import('./connector').then(
      ({ SdkMcpConnector }) => new SdkMcpConnector(...this.args),
      (error: unknown) => {
        this.#connector = undefined; // the next call tries again
        throw error;
      },
    );
    return this.#connector;
  }

  async discover(target: McpTarget, signal: AbortSignal): Promise<Result<McpDiscovery, HearthError>> {
    return (await this.#load()).discover(target, signal);
  }

  async call(
    target: McpTarget,
    tool: string,
    args: JsonObject,
    signal: AbortSignal,
  ): Promise<McpCallOutcome> {
    return (await this.#load()).call(target, tool, args, signal);
  }

  async signIn(
    target: McpTarget,
    redirectUrl: string,
    signal: AbortSignal,
  ): Promise<Result<McpSignInStep, HearthError>> {
    return (await this.#load()).signIn(target, redirectUrl, signal);
  }

  async finishSignIn(
    target: McpTarget,
    code: string,
    signal: AbortSignal,
  ): Promise<Result<void, HearthError>> {
    return (await this.#load()).finishSignIn(target, code, signal);
  }

  /** Before the first connection there is none to end. */
  async forget(serverId: string): Promise<void> {
    if (this.#connector) await (await this.#connector).forget(serverId);
  }
}
