import 'fake-indexeddb/auto';
import { afterAll, beforeAll, test } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { RunService } from '$lib/runtime/run-service';
import { SessionService } from '$lib/runtime/sessions';
import { runtimeHarness } from '../tests/support/runtime-harness';
import { timed } from './loop';
import {
  callResult,
  discoveryResult,
  measureCalls,
  measureDiscovery,
  measureRunCalls,
  measureSnapshot,
  runCallResult,
  snapshotResult,
  type SessionFactory,
} from './mcp';
import { startMcpBenchServers } from './mcp-servers';
import { MCP_BENCH_TOOLS, plainTools, realisticTools } from './mcp-tools';

/** Issue 14 in Node: fake-indexeddb; server-everything in its own process, the hostile servers in this one. */
let servers: Awaited<ReturnType<typeof startMcpBenchServers>>;
beforeAll(async () => {
  servers = await startMcpBenchServers({ plain: plainTools(), realistic: realisticTools() });
}, 60_000);
afterAll(() => servers.close());

const db = () => openHearthDatabase(`hearth-bench-mcp-${Math.random()}`);

const session: SessionFactory = async (model, mcp) => {
  const h = runtimeHarness(model, { providers: [mcp] });
  await h.ready;
  const storage = { ms: 0 };
  const journal = timed(h.deps.journal, storage);
  const sessions = timed(h.deps.sessions, storage);
  const service = new SessionService({
    ...h.deps,
    journal,
    sessions,
    service: new RunService({ ...h.deps, journal }),
  });
  return { service, storage };
};

test('MCP tool call: the provider pipeline beside raw SDK callTool', async () => {
  console.log(callResult('node', await measureCalls(db(), servers.urls.everything, 30, 300)));
}, 120_000);

test('MCP tool call inside a Session run', async () => {
  for (const line of runCallResult(
    'node',
    await measureRunCalls(db(), servers.urls.everything, 200, session),
  ))
    console.log(line);
}, 120_000);

test('discovery of 500 tools beside a raw listTools loop', async () => {
  for (const [schemas, url] of [
    ['plain', servers.urls.plain],
    ['realistic', servers.urls.realistic],
  ] as const) {
    console.log(discoveryResult('node', schemas, await measureDiscovery(db(), url, MCP_BENCH_TOOLS, 3, 20)));
  }
}, 300_000);

test('snapshot preparation with 500 MCP tools bound beside builtins only', async () => {
  const t = await measureSnapshot(db(), servers.urls.realistic, MCP_BENCH_TOOLS, 20, 100);
  console.log(snapshotResult('node', t));
}, 300_000);
