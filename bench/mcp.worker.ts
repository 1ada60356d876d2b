/// <reference lib="webworker" />
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import {
  DexieConnectionStore,
  DexieRunStore,
  DexieSessionStore,
  DexieSettingsStore,
} from '$lib/adapters/db/stores';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import { webLocks } from '$lib/adapters/system/locks';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import { RunService } from '$lib/runtime/run-service';
import { SessionService } from '$lib/runtime/sessions';
import { builtinProvider, toolProviders } from '$lib/runtime/tool-catalog';
import { runtimeTools } from '$lib/tools/runtime-tools';
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
import type { McpBenchUrls } from './mcp-servers';
import { MCP_BENCH_TOOLS } from './mcp-tools';

/** Issue 14 where the runtime runs: a dedicated worker, IndexedDB, OPFS, the worker's own fetch. */
const LABEL = 'chromium-worker';
const db = () => openHearthDatabase(`hearth-bench-mcp-${Date.now()}-${Math.random()}`);

const session: SessionFactory = async (model, mcp) => {
  const d = db();
  const runs = new DexieRunStore(d);
  const storage = { ms: 0 };
  const journal = timed(new DexieJournal(d, systemClock), storage);
  const locks = webLocks(navigator.locks);
  const service = new SessionService({
    sessions: timed(new DexieSessionStore(d), storage),
    runs,
    journal,
    connections: new DexieConnectionStore(d),
    settings: new DexieSettingsStore(d),
    workspaces: new TieredWorkspaceStore(new OpfsWorkspaceStore(), new DexieRecordStore(d)),
    locks,
    gatewayFor: () => model,
    providers: toolProviders([builtinProvider(runtimeTools.session), mcp]),
    clock: systemClock,
    ids: randomIds,
    profiles: new DexieProfileStore(d),
    sleep: async () => {},
    images: new JsquashImageNormalizer(),
    service: new RunService({ runs, journal, locks, clock: systemClock, ids: randomIds }),
  });
  return { service, storage };
};

const scope = self as unknown as DedicatedWorkerGlobalScope;
scope.onmessage = async (e: MessageEvent<McpBenchUrls>) => {
  const urls = e.data;
  try {
    const lines = [
      callResult(LABEL, await measureCalls(db(), urls.everything, 30, 300)),
      ...runCallResult(LABEL, await measureRunCalls(db(), urls.everything, 200, session)),
      discoveryResult(LABEL, 'plain', await measureDiscovery(db(), urls.plain, MCP_BENCH_TOOLS, 3, 20)),
      discoveryResult(
        LABEL,
        'realistic',
        await measureDiscovery(db(), urls.realistic, MCP_BENCH_TOOLS, 3, 20),
      ),
      snapshotResult(LABEL, await measureSnapshot(db(), urls.realistic, MCP_BENCH_TOOLS, 20, 100)),
    ];
    scope.postMessage({ lines });
  } catch (error) {
    scope.postMessage({ error: error instanceof Error ? `${error.message}\n${error.stack}` : String(error) });
  }
};
