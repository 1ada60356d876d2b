/**
 * The client the MCP conformance suite runs (`conformance client --command "node client.mjs"`):
 * Hearth's own MCP servers service (McpServers over SdkMcpConnector, wired as the runtime worker
 * wires it, on fake-indexeddb) against the scenario's server, whose URL is the last argument and
 * whose scenario is in MCP_CONFORMANCE_SCENARIO. It registers the server, discovers its tools,
 * then makes the call the scenario asks for, and exits 0 when all of that succeeded. A step
 * refused for want of a sign-in is followed by what the person would do on the servers page:
 * Sign in, the authorization page (which the suite's authorization server answers at once with
 * a redirect to the callback), the callback, and the step again, once.
 * Built by tests/integration/mcp/conformance.test.ts.
 */
import 'fake-indexeddb/auto';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { nodeWasm } from '../support/image-codecs';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieMcpCredentialStore, DexieMcpStore } from '$lib/adapters/db/mcp-store';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import { systemClock } from '$lib/adapters/system/clock';
import { HearthFailure } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import { McpServers, type McpSignInCallback, type McpTryResult } from '$lib/runtime/mcp-servers';

interface Call {
  tool: string;
  args: JsonObject;
  /** Text the result must contain, when the scenario's tool answers something known. */
  text?: string;
}

/** Per scenario, the call made after discovery; `null`: discovery is all it asks for. */
const CALLS: Record<string, Call | null> = {
  initialize: null,
  tools_call: { tool: 'add_numbers', args: { a: 5, b: 3 }, text: 'The sum of 5 and 3 is 8' },
  'elicitation-sep1034-client-defaults': { tool: 'test_client_elicitation_defaults', args: {} },
  'sse-retry': { tool: 'test_reconnection', args: {} },
};
/** Every auth/* scenario's server guards the same tool, which answers "test". */
const AUTH_CALL: Call = { tool: 'test-tool', args: {}, text: 'test' };

/** The app's callback page (never fetched here: the redirect to it is read, not followed). */
const REDIRECT = 'http://127.0.0.1:9/oauth/callback.html';

async function main(): Promise<number> {
  const endpoint = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!endpoint || !/^https?:\/\//.test(endpoint)) return fail(`No server URL in ${process.argv.join(' ')}`);
  const call = scenario in CALLS ? CALLS[scenario] : scenario.startsWith('auth/') ? AUTH_CALL : undefined;
  if (call === undefined) return fail(`No behaviour for the scenario "${scenario}"`);
  // Pre-registered client credentials: Hearth takes a client id (the server form's OAuth client
  // id), nothing else; a secret or a key has nowhere to go in a public client.
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<string, unknown>;
  const clientId = typeof context.client_id === 'string' ? context.client_id : undefined;
  const unused = Object.keys(context).filter((k) => k !== 'name' && k !== 'client_id');
  if (unused.length) console.log(`context not used by Hearth: ${unused.join(', ')}`);

  const db = openHearthDatabase(`hearth-conformance-${process.pid}`);
  const credentials = new DexieMcpCredentialStore(db);
  // Shorter waits than Hearth's: a call the adapter cannot complete (sse-retry) ends well within
  // the runner's timeout instead of being killed by it.
  const connector = new SdkMcpConnector(
    fetch,
    { connectMs: 10_000, listMs: 10_000, callMs: 10_000 },
    { credentials, now: () => systemClock.now(), newState: () => crypto.randomUUID() },
  );
  const mcp = new McpServers({
    store: new DexieMcpStore(db),
    credentials,
    connector,
    images: new JsquashImageNormalizer({ loadWasm: nodeWasm }),
    clock: systemClock,
    newId: () => crypto.randomUUID(),
  });
  const signal = new AbortController().signal;
  const { server } = await mcp.create({
    displayName: 'Conformance',
    endpoint,
    headers: [],
    protocolVersion: 'auto',
    ...(clientId ? { oauthClientId: clientId } : {}),
  });

  /** Sign in as the servers page does, the person following the authorization page. */
  const signIn = async () => {
    const step = await mcp.signIn(server.id, REDIRECT, signal);
    console.log(`sign-in: ${step.kind}`);
    if (step.kind === 'signed_in') return;
    const callback = await visit(step.authorizationUrl);
    const view = await mcp.finishSignIn(callback, signal);
    console.log(`signed in: ${view.signIn.signedIn}`);
  };

  try {
    let found;
    try {
      found = await mcp.discover(server.id, signal);
    } catch (e) {
      if (!(e instanceof HearthFailure && e.code === 'mcp.auth_required')) throw e;
      console.log(`discovery: ${e.message}`);
      await signIn();
      found = await mcp.discover(server.id, signal);
    }
    console.log(`discovered ${JSON.stringify(found.tools.map((t) => t.name))}`);
    if (!call) return 0;
    if (!found.tools.some((t) => t.name === call.tool)) return fail(`No tool "${call.tool}" listed`);
    let result = await mcp.tryCall(server.id, call.tool, call.args, signal);
    if (needsSignIn(result)) {
      console.log(`call: ${result.content}`);
      await signIn();
      result = await mcp.tryCall(server.id, call.tool, call.args, signal);
    }
    console.log(`called ${call.tool}: ${JSON.stringify(result)}`);
    if (result.outcome !== 'result' || result.isError) return fail(`The call did not succeed`);
    if (call.text && !result.content.includes(call.text))
      return fail(`The result does not say "${call.text}"`);
    return 0;
  } finally {
    await connector.forget(server.id);
  }
}

const needsSignIn = (result: McpTryResult) =>
  result.outcome === 'not_sent' &&
  (result.structured.error as { code?: unknown } | undefined)?.code === 'mcp.auth_required';

/** The person on the authorization page: its redirects, up to the callback's query. */
async function visit(authorizationUrl: string): Promise<McpSignInCallback> {
  let url = authorizationUrl;
  for (let hop = 0; hop < 5 && !url.startsWith(REDIRECT); hop++) {
    const response = await fetch(url, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (!location) throw new Error(`No redirect from ${url}: HTTP ${response.status}`);
    url = new URL(location, url).href;
  }
  if (!url.startsWith(REDIRECT)) throw new Error(`The authorization page never came back to ${REDIRECT}`);
  const q = new URL(url).searchParams;
  const text = (name: string) => q.get(name) || undefined;
  const [code, error, errorDescription] = [text('code'), text('error'), text('error_description')];
  return {
    state: q.get('state') ?? '',
    ...(code ? { code } : {}),
    ...(error ? { error } : {}),
    ...(errorDescription ? { errorDescription } : {}),
  };
}

function fail(message: string): number {
  console.error(message);
  return 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof HearthFailure ? `${e.code}: ${e.message}` : e);
    process.exit(1);
  },
);
