import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { hearthError, type HearthError } from '$lib/domain/errors';
import { isJsonObject } from '$lib/domain/json';
import { MCP_LIMITS, type McpTool, type McpToolAnnotations } from '$lib/domain/mcp';
import { err, ok, type Result } from '$lib/domain/result';
import type { McpTarget } from '$lib/ports/mcp';
import { PinnedVersionRefused, type RequestWatch } from './limited-fetch';
import { SignInNeeded } from './oauth-provider';

/** What a server must answer to a page on another origin (the CORS headers), for the person to pass on. */
export function corsAdvice(target: McpTarget): string {
  const custom = target.headers.map((h) => h.name);
  const allow = [
    'Content-Type',
    'Accept',
    'Authorization',
    'Mcp-Session-Id',
    'MCP-Protocol-Version',
    'Last-Event-ID',
    ...custom,
  ];
  return (
    `If the server is running, it may not allow requests from this page (CORS): it must answer with ` +
    `Access-Control-Allow-Origin (this page's origin or *), Access-Control-Allow-Methods: GET, POST, DELETE, ` +
    `Access-Control-Allow-Headers: ${[...new Set(allow)].join(', ')}, and ` +
    `Access-Control-Expose-Headers: Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, on every response.`
  );
}

/**
 * A failure to reach or understand a server, as a person can act on it: the address, the server
 * being down or refusing this page (CORS), a wrong endpoint, sign-in, the protocol version,
 * garbage, a limit, a timeout.
 */
export function describeFailure(
  e: unknown,
  target: McpTarget,
  watch: RequestWatch,
  stage: string,
): HearthError {
  const host = new URL(target.endpoint).host;
  if (watch.tooLarge) {
    return hearthError(
      'mcp.response_too_large',
      `${host} sent an answer larger than ${MCP_LIMITS.responseBytes / 1024 / 1024} MiB while ${stage}; nothing of it was kept.`,
    );
  }
  if (stage === 'cancelled') return hearthError('mcp.timeout', `Stopped before ${host} answered.`);
  if (e instanceof SignInNeeded || e instanceof UnauthorizedError) return signInRequired(host, watch);
  if (e instanceof PinnedVersionRefused) {
    return hearthError(
      'mcp.protocol_unsupported',
      `${e.message} Choose "auto" or ${e.offered} as the protocol version.`,
    );
  }
  if (e instanceof Error && /protocol version is not supported/i.test(e.message)) {
    return hearthError(
      'mcp.protocol_unsupported',
      `${host} speaks an MCP version Hearth does not support (${e.message.split(': ').at(-1)}).`,
    );
  }
  if (
    e instanceof McpError &&
    e.code === -32001 &&
    typeof (e.data as { timeout?: unknown } | undefined)?.timeout === 'number'
  ) {
    return hearthError('mcp.timeout', `${host} did not answer in time while ${stage}.`);
  }
  if (e instanceof StreamableHTTPError || (watch.status !== undefined && watch.status >= 400)) {
    const code = e instanceof StreamableHTTPError ? (e.code ?? 0) : 0;
    const status = code > 0 ? code : (watch.status ?? 0);
    if (status === 401 || status === 403) return signInRequired(host, watch, status);
    if (status === 404 || status === 405) {
      return hearthError(
        'mcp.http_error',
        `${host} answered HTTP ${status} at ${target.endpoint}: this is not its MCP endpoint (Streamable HTTP endpoints often end in /mcp).`,
        { status },
      );
    }
    return hearthError('mcp.http_error', `${host} answered HTTP ${status} while ${stage}.`, {
      status,
      retryable: status >= 500,
    });
  }
  if (e instanceof TypeError && watch.status === undefined) {
    return hearthError(
      'mcp.unreachable',
      `Could not reach ${target.endpoint}: the server is not answering, the address is wrong, or this device is offline. ${corsAdvice(target)}`,
    );
  }
  if (
    e instanceof SyntaxError ||
    (e instanceof Error && /JSON|parse|invalid_type|Unexpected/i.test(e.message))
  ) {
    return hearthError(
      'mcp.invalid_response',
      `${host} sent something that is not an MCP message while ${stage}.`,
    );
  }
  if (e instanceof McpError)
    return hearthError('mcp.server_error', `${host} answered with an error while ${stage}: ${e.message}`);
  return hearthError(
    'mcp.invalid_response',
    `${host} failed while ${stage}: ${e instanceof Error ? e.message : String(e)}`,
  );
}

function signInRequired(host: string, watch: RequestWatch, status?: number): HearthError {
  const via =
    watch.signInHost && watch.signInHost !== host
      ? ` Signing in goes through ${watch.signInHost}, which the server names; nothing is sent there until you press Sign in.`
      : '';
  return hearthError(
    'mcp.auth_required',
    `${host} asks to sign in${status ? ` (HTTP ${status})` : ''}.${via} Press Sign in on its card on the MCP servers page, or add the credentials it expects as a header (for example Authorization: Bearer …).`,
    status ? { status } : {},
  );
}

/** Why a sign-in could not start or finish, with what the person can do about it. */
export function describeSignInFailure(
  e: unknown,
  target: McpTarget,
  watch: RequestWatch,
  timedOut: boolean,
): HearthError {
  const host = new URL(target.endpoint).host;
  if (timedOut) return hearthError('mcp.timeout', `Signing in to ${host} did not finish in time.`);
  if (e instanceof OAuthError) {
    return hearthError(
      'mcp.auth_failed',
      `Signing in to ${host} failed: the authorization server answered ${e.errorCode}${e.message ? ` (${e.message})` : ''}. Try again; if it keeps failing, the server may need a client id registered for Hearth.`,
    );
  }
  if (e instanceof TypeError && watch.status !== undefined) {
    return hearthError(
      'mcp.auth_failed',
      `Signing in to ${host} failed: its authorization server could not be reached from this page. It may be down, or it may not allow requests from other sites (CORS on its metadata, registration and token endpoints); a pre-registered client id does not avoid that.`,
    );
  }
  if (e instanceof Error && watch.status === undefined)
    return describeFailure(e, target, watch, 'signing in');
  return hearthError(
    'mcp.auth_failed',
    `Signing in to ${host} failed: ${e instanceof Error ? e.message : String(e)}`,
  );
}

/** A tool as listed, reduced to what Hearth keeps; a tool without a usable name stops discovery. */
export function readTool(raw: unknown): Result<McpTool, HearthError> {
  if (!isJsonObject(raw) || typeof raw.name !== 'string' || raw.name === '' || raw.name.includes(':')) {
    return err(hearthError('mcp.invalid_response', 'The server listed a tool without a usable name.'));
  }
  const annotations = isJsonObject(raw.annotations) ? hints(raw.annotations) : undefined;
  return ok({
    name: raw.name,
    ...(typeof raw.title === 'string' ? { title: raw.title } : {}),
    ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
    inputSchema: isJsonObject(raw.inputSchema) ? raw.inputSchema : {},
    ...(annotations ? { annotations } : {}),
  });
}

function hints(a: Record<string, unknown>): McpToolAnnotations {
  const out: McpToolAnnotations = {};
  if (typeof a.title === 'string') out.title = a.title;
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    if (typeof a[key] === 'boolean') out[key] = a[key];
  }
  return out;
}
