/**
 * The client the MCP conformance suite runs (`conformance client --command "node client.mjs"`):
 * Hearth's own connector against the scenario's server, whose URL is the last argument and whose
 * scenario is in MCP_CONFORMANCE_SCENARIO. It connects and lists the tools (discovery), then makes
 * the call the scenario asks for, and exits 0 when all of that succeeded. Built by
 * tests/integration/mcp/conformance.test.ts.
 */
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import type { JsonObject } from '$lib/domain/json';
import type { McpTarget } from '$lib/ports/mcp';

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

async function main(): Promise<number> {
  const endpoint = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!endpoint || !/^https?:\/\//.test(endpoint)) return fail(`No server URL in ${process.argv.join(' ')}`);
  if (!(scenario in CALLS)) return fail(`No behaviour for the scenario "${scenario}"`);
  const call = CALLS[scenario];

  // Shorter waits than Hearth's: a call the adapter cannot complete (sse-retry) ends well within
  // the runner's timeout instead of being killed by it.
  const connector = new SdkMcpConnector(undefined, { connectMs: 10_000, listMs: 10_000, callMs: 10_000 });
  const target: McpTarget = { id: 'conformance', endpoint, headers: [], protocolVersion: 'auto' };
  const signal = new AbortController().signal;
  try {
    const found = await connector.discover(target, signal);
    if (!found.ok) return fail(`Discovery failed: ${found.error.message}`);
    console.log(`discovered ${JSON.stringify(found.value)}`);
    if (!call) return 0;
    if (!found.value.tools.some((t) => t.name === call.tool)) return fail(`No tool "${call.tool}" listed`);
    const outcome = await connector.call(target, call.tool, call.args, signal);
    console.log(`called ${call.tool}: ${JSON.stringify(outcome)}`);
    if (outcome.kind !== 'result' || outcome.result.isError) return fail(`The call did not succeed`);
    if (call.text && !JSON.stringify(outcome.result.content).includes(call.text)) {
      return fail(`The result does not say "${call.text}"`);
    }
    return 0;
  } finally {
    await connector.forget(target.id);
  }
}

function fail(message: string): number {
  console.error(message);
  return 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
