import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HearthDatabase } from '$lib/adapters/db/database';
import { DexieMcpCredentialStore, DexieMcpStore } from '$lib/adapters/db/mcp-store';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import { systemClock } from '$lib/adapters/system/clock';
import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { sessionProfile } from '$lib/domain/profile';
import type { ToolId } from '$lib/domain/tool-id';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { McpServers } from '$lib/runtime/mcp-servers';
import type { SessionService } from '$lib/runtime/sessions';
import { prepareBindings, type ToolPolicy } from '$lib/runtime/tool-bindings';
import {
  buildCatalog,
  builtinProvider,
  currentCatalog,
  toolProviders,
  type ToolProvider,
  type ToolProviders,
} from '$lib/runtime/tool-catalog';
import { createSnapshot } from '$lib/runtime/tool-snapshot';
import type { ToolContext } from '$lib/tools/tool';
import { runtimeTools } from '$lib/tools/runtime-tools';
import { measureRounds, median, timed, type RoundTimes } from './loop';

/**
 * Issue 14, MCP (shared by bench/mcp.node.bench.ts and bench/mcp.worker.ts): a tool call through
 * Hearth's pipeline beside the SDK's own `callTool`, the same call inside a Session run,
 * discovery of 500 tools beside a raw `listTools` loop, and an invocation's snapshot with 500
 * MCP tools bound beside builtins alone. Each part is given its database, so the same code runs on
 * fake-indexeddb in Node and on IndexedDB in a Chromium worker.
 */

export const p95 = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)]!;
};
const f = (x: number, digits = 3) => x.toFixed(digits);
const both = (label: string, xs: number[]) =>
  `${label}_median_ms=${f(median(xs))} ${label}_p95_ms=${f(p95(xs))}`;
const signal = () => new AbortController().signal;

/** An already-connected SDK client with the transport's defaults: the baseline. */
export async function rawClient(url: string): Promise<Client> {
  const client = new Client({ name: 'bench-raw', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function rawListTools(client: Client): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    count += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

const textOf = (content: unknown): string => (content as { text?: string }[] | undefined)?.[0]?.text ?? '';

/** Composed as the runtime worker composes it (src/lib/worker/context.ts), `spent` timing the store. */
function mcpServers(db: HearthDatabase, spent: { ms: number } = { ms: 0 }) {
  const store = new DexieMcpStore(db);
  const credentials = new DexieMcpCredentialStore(db);
  const connector = new SdkMcpConnector(
    globalThis.fetch.bind(globalThis),
    {},
    {
      credentials,
      now: () => systemClock.now(),
      newState: () => crypto.randomUUID(),
    },
  );
  let n = 0;
  const mcp = new McpServers({
    store: timed(store, spent),
    credentials,
    connector,
    images: new JsquashImageNormalizer(),
    clock: systemClock,
    newId: () => `14141414-1414-4141-8141-${String(++n).padStart(12, '0')}`,
  });
  return { mcp, connector, store };
}

/** Registers and discovers a server; every tool Allow, or every other one Ask; then Active. */
async function registered(mcp: McpServers, displayName: string, endpoint: string, someAsk = false) {
  const view = await mcp.create({ displayName, endpoint, headers: [], protocolVersion: 'auto' });
  const id = view.server.id;
  const found = await mcp.discover(id, signal());
  await mcp.setPermission(id, null, 'allow');
  if (someAsk) {
    for (const [i, tool] of found.tools.entries()) if (i % 2) await mcp.setPermission(id, tool.name, 'ask');
  }
  await mcp.setState(id, 'active');
  return id;
}

// 1. One call ------------------------------------------------------------------------------------

export interface CallTimes {
  /** The provider's `execute`, as the run engine calls it: registration read, connector, mapping. */
  pipeline: number[];
  /** `SdkMcpConnector.call` alone on the same pooled connection. */
  connector: number[];
  raw: number[];
  /** Mean time per pipeline call spent reading the registration from the store. */
  storeGetMs: number;
}

/** `echo` on server-everything, the three ways interleaved (the order turns each iteration). */
export async function measureCalls(
  db: HearthDatabase,
  url: string,
  warmup: number,
  iterations: number,
): Promise<CallTimes> {
  const spent = { ms: 0 };
  const { mcp, connector, store } = mcpServers(db, spent);
  const id = await registered(mcp, 'Everything', url);
  const provider = mcp.provider();
  await provider.ready!();
  const tool = provider.list().find((t) => t.nativeName === 'echo');
  if (!tool) throw new Error('server-everything offers no echo tool');
  const server = (await store.get(id))!;
  const raw = await rawClient(url);
  const ctx = { signal: signal() } as ToolContext;
  const out: CallTimes = { pipeline: [], connector: [], raw: [], storeGetMs: 0 };
  const lanes = [out.pipeline, out.connector, out.raw];
  for (let i = 0; i < warmup + iterations; i++) {
    if (i === warmup) spent.ms = 0;
    const args = { message: `call ${i}` };
    for (let k = 0; k < 3; k++) {
      const lane = (i + k) % 3;
      const t = performance.now();
      let text: string;
      if (lane === 0) text = (await provider.execute(tool, args, ctx)).content;
      else if (lane === 1) {
        const outcome = await connector.call(server, 'echo', args, ctx.signal);
        text = outcome.kind === 'result' ? textOf(outcome.result.content) : outcome.kind;
      } else text = textOf((await raw.callTool({ name: 'echo', arguments: args })).content);
      const ms = performance.now() - t;
      if (text !== `Echo: call ${i}`) throw new Error(`lane ${lane}: unexpected answer ${text}`);
      if (i >= warmup) lanes[lane]!.push(ms);
    }
  }
  out.storeGetMs = spent.ms / iterations;
  await raw.close();
  await connector.forget(id);
  return out;
}

export function callResult(label: string, t: CallTimes) {
  const raw = median(t.raw);
  return (
    `RESULT mcp-call-${label} server=everything tool=echo iterations=${t.raw.length} ` +
    `${both('pipeline', t.pipeline)} ${both('connector', t.connector)} ` +
    `store_get_mean_ms=${f(t.storeGetMs)} ${both('baseline_raw_callTool', t.raw)} ` +
    `ratio=${f(median(t.pipeline) / raw, 2)} goal_ms=${f(1.2 * raw + 2)}`
  );
}

// 1b. The same call inside a Session run -----------------------------------------------------

/** Asks for one call of `callName` per round until `rounds` are done, then answers. */
export function instantCallModel(rounds: number, callName: string): ModelGateway {
  let round = 0;
  return {
    provider: 'bench',
    async *stream(_request: ModelRequest): AsyncIterable<StreamPart> {
      round++;
      yield { type: 'turn-start', warnings: [] };
      if (round < rounds) {
        yield {
          type: 'tool-call',
          callId: `c${round}`,
          name: callName,
          rawArguments: JSON.stringify({ message: `round ${round}` }),
        };
        yield { type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: {} };
      } else {
        yield { type: 'text-delta', blockId: 't', delta: 'done' };
        yield { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: {} };
      }
    },
  };
}

/**
 * A Session service on the environment's stores, with the Session builtins and this MCP
 * provider; `storage` adds up its time awaiting the journal and session messages.
 */
export type SessionFactory = (
  model: ModelGateway,
  mcp: ToolProvider,
) => Promise<{ service: SessionService; storage: { ms: number } }>;

export interface RunCallTimes {
  times: RoundTimes;
  /** The provider's `execute` inside the run, per call. */
  execute: number[];
  raw: number[];
  storageMs: number;
}

export async function measureRunCalls(
  db: HearthDatabase,
  url: string,
  rounds: number,
  session: SessionFactory,
): Promise<RunCallTimes> {
  const { mcp, connector } = mcpServers(db);
  const id = await registered(mcp, 'Everything', url);
  const provider = mcp.provider();
  const execute: number[] = [];
  const timedProvider: ToolProvider = {
    ...provider,
    execute: async (tool, input, ctx) => {
      const t = performance.now();
      const outcome = await provider.execute(tool, input, ctx);
      execute.push(performance.now() - t);
      if (outcome.isError) throw new Error(outcome.content);
      return outcome;
    },
  };
  const { service, storage } = await session(
    instantCallModel(rounds, 'mcp__Everything__echo'),
    timedProvider,
  );
  const times = await measureRounds(service, rounds, execute);
  if (execute.length !== rounds - 1) throw new Error(`expected ${rounds - 1} calls, saw ${execute.length}`);
  const raw: number[] = [];
  const client = await rawClient(url);
  for (let i = 0; i < rounds + 10; i++) {
    const t = performance.now();
    await client.callTool({ name: 'echo', arguments: { message: `raw ${i}` } });
    if (i >= 10) raw.push(performance.now() - t);
  }
  await client.close();
  await connector.forget(id);
  return { times, execute, raw, storageMs: storage.ms };
}

export function runCallResult(label: string, r: RunCallTimes) {
  const rounds = r.times.round.length;
  const overhead = r.times.overhead.reduce((a, b) => a + b, 0) / rounds;
  return [
    `RESULT mcp-run-${label} rounds=${rounds} tool=mcp__Everything__echo ` +
      `${both('round', r.times.round)} ${both('execute_in_run', r.execute)} ` +
      `${both('call_elapsed', r.times.call)} ${both('call_started_to_completed', r.times.callSeen)} ` +
      `${both('round_minus_execute', r.times.overhead)} ${both('baseline_raw_callTool', r.raw)}`,
    `RESULT mcp-run-${label}-split mean_round_minus_execute_ms=${f(overhead)} ` +
      `database_mean_ms=${f(r.storageMs / rounds)} runtime_own_mean_ms=${f(overhead - r.storageMs / rounds)}`,
  ];
}

// 2. Discovery -----------------------------------------------------------------------------------

export interface DiscoveryTimes {
  connector: number[];
  servers: number[];
  raw: number[];
  /** A new connection each time: `forget` first / a new client (connect, list, close). */
  connectorCold: number[];
  rawCold: number[];
  /** Mean store time per `McpServers.discover` (its reads of every registration and catalog, the write). */
  serversStoreMs: number;
  tools: number;
  catalogKb: number;
}

export async function measureDiscovery(
  db: HearthDatabase,
  url: string,
  expected: number,
  warmup: number,
  iterations: number,
): Promise<DiscoveryTimes> {
  const spent = { ms: 0 };
  const { mcp, connector } = mcpServers(db, spent);
  const { server } = await mcp.create({
    displayName: 'Many',
    endpoint: url,
    headers: [],
    protocolVersion: 'auto',
  });
  const raw = await rawClient(url);
  const out: DiscoveryTimes = {
    connector: [],
    servers: [],
    raw: [],
    connectorCold: [],
    rawCold: [],
    serversStoreMs: 0,
    tools: expected,
    catalogKb: 0,
  };
  const check = (what: string, n: number) => {
    if (n !== expected) throw new Error(`${what}: ${n} tools, expected ${expected}`);
  };
  let storeMs = 0;
  let cold: Client | undefined;
  for (let i = 0; i < warmup + iterations; i++) {
    const keep = i >= warmup;
    for (let k = 0; k < 5; k++) {
      const lane = (i + k) % 5;
      let t = performance.now();
      if (lane === 0) {
        const found = await connector.discover(server, signal());
        if (!found.ok) throw new Error(found.error.message);
        check('connector', found.value.tools.length);
        out.catalogKb = JSON.stringify(found.value.tools).length / 1024;
      } else if (lane === 1) {
        spent.ms = 0;
        check('McpServers', (await mcp.discover(server.id, signal())).tools.length);
        if (keep) storeMs += spent.ms;
      } else if (lane === 2) check('raw', await rawListTools(raw));
      else if (lane === 3) {
        await connector.forget(server.id);
        t = performance.now();
        const found = await connector.discover(server, signal());
        if (!found.ok) throw new Error(found.error.message);
        check('connector cold', found.value.tools.length);
      } else cold = await rawClient(url);
      if (cold) check('raw cold', await rawListTools(cold));
      const ms = performance.now() - t;
      await cold?.close();
      cold = undefined;
      if (keep) [out.connector, out.servers, out.raw, out.connectorCold, out.rawCold][lane]!.push(ms);
    }
  }
  out.serversStoreMs = storeMs / iterations;
  await raw.close();
  await connector.forget(server.id);
  return out;
}

export function discoveryResult(label: string, schemas: string, t: DiscoveryTimes) {
  return (
    `RESULT mcp-discovery-${label} schemas=${schemas} tools=${t.tools} pages=${Math.ceil(t.tools / 100)} ` +
    `catalog_kb=${f(t.catalogKb, 0)} iterations=${t.raw.length} ` +
    `${both('connector_discover', t.connector)} ${both('mcp_servers_discover', t.servers)} ` +
    `mcp_servers_store_mean_ms=${f(t.serversStoreMs)} ${both('baseline_raw_listTools', t.raw)} ` +
    `${both('cold_connector_discover', t.connectorCold)} ${both('cold_baseline_raw_connect_listTools', t.rawCold)}`
  );
}

// 3. Snapshot preparation ------------------------------------------------------------------------

export interface SnapshotTimes {
  total: number[];
  /** `currentCatalog` inside `total`: every provider's `ready`, then `buildCatalog`. */
  catalog: number[];
  ready: number[];
  buildCatalog: number[];
  mcpList: number[];
  bindings: number[];
  snapshot: number[];
  baseline: number[];
  bound: number;
  asked: number;
  baselineBound: number;
}

/** What `SessionService` does per run (`#snapshot`): the catalog as storage has it, the profile's bindings, the snapshot. */
async function prepare(providers: ToolProviders, policy: ToolPolicy, i: number) {
  const t0 = performance.now();
  const catalog = await currentCatalog(providers);
  if (!catalog.ok) throw new Error(catalog.error.message);
  const t1 = performance.now();
  const { bindings } = prepareBindings(catalog.value, policy, 'session');
  const t2 = performance.now();
  const snapshot = createSnapshot(`snapshot_${i}`, bindings, 'run_finish_allowed');
  const t3 = performance.now();
  if (!snapshot.ok) throw new Error(snapshot.error.message);
  return { catalog: t1 - t0, bindings: t2 - t1, snapshot: t3 - t2, total: t3 - t0, value: snapshot.value };
}

export async function measureSnapshot(
  db: HearthDatabase,
  url: string,
  expected: number,
  warmup: number,
  iterations: number,
): Promise<SnapshotTimes> {
  const { mcp, connector } = mcpServers(db);
  const id = await registered(mcp, 'Realistic', url, true);
  await connector.forget(id);
  const provider = mcp.provider();
  const builtins = builtinProvider(runtimeTools.session);
  const providers = toolProviders([builtins, provider]);
  const baselineProviders = toolProviders([builtins]);
  const profile = sessionProfile();
  const policy: ToolPolicy = {
    allow: profile.tools.allow as ToolId[],
    deny: profile.tools.deny as ToolId[],
    toolDescriptions: profile.tools.toolDescriptions,
    ask: (profile.tools.ask ?? []) as ToolId[],
  };
  const out: SnapshotTimes = {
    total: [],
    catalog: [],
    ready: [],
    buildCatalog: [],
    mcpList: [],
    bindings: [],
    snapshot: [],
    baseline: [],
    bound: 0,
    asked: 0,
    baselineBound: 0,
  };
  for (let i = 0; i < warmup + iterations; i++) {
    const p = await prepare(providers, policy, i);
    const b = await prepare(baselineProviders, policy, i);
    // The parts of `currentCatalog`, apart.
    const r0 = performance.now();
    await provider.ready!();
    const r1 = performance.now();
    buildCatalog(providers.values());
    const r2 = performance.now();
    provider.list();
    const r3 = performance.now();
    if (i < warmup) continue;
    out.total.push(p.total);
    out.catalog.push(p.catalog);
    out.bindings.push(p.bindings);
    out.snapshot.push(p.snapshot);
    out.baseline.push(b.total);
    out.ready.push(r1 - r0);
    out.buildCatalog.push(r2 - r1);
    out.mcpList.push(r3 - r2);
    out.bound = p.value.bindings.length;
    out.asked = p.value.bindings.filter((x) => x.approval === 'ask').length;
    out.baselineBound = b.value.bindings.length;
  }
  if (out.bound !== out.baselineBound + expected)
    throw new Error(`bound ${out.bound}, expected ${out.baselineBound} builtins + ${expected}`);
  return out;
}

export function snapshotResult(label: string, t: SnapshotTimes) {
  return (
    `RESULT mcp-snapshot-${label} mcp_tools=${t.bound - t.baselineBound} bound=${t.bound} ask=${t.asked} ` +
    `iterations=${t.total.length} ${both('prepare', t.total)} current_catalog_median_ms=${f(median(t.catalog))} ` +
    `ready_store_read_alone_median_ms=${f(median(t.ready))} ` +
    `build_catalog_median_ms=${f(median(t.buildCatalog))} mcp_list_median_ms=${f(median(t.mcpList))} ` +
    `prepare_bindings_median_ms=${f(median(t.bindings))} create_snapshot_median_ms=${f(median(t.snapshot))} ` +
    `baseline_builtins_only_bound=${t.baselineBound} ${both('baseline_builtins_only', t.baseline)}`
  );
}
