import 'fake-indexeddb/auto';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import {
  DexieConnectionStore,
  DexieRunStore,
  DexieSessionStore,
  DexieSettingsStore,
} from '$lib/adapters/db/stores';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import { memorySkills } from './memory-skills';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import type { WorkspaceStore } from '$lib/ports/workspace';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import { sessionProfile, type ProfileV5 } from '$lib/domain/profile';
import { memoryLocks } from '$lib/adapters/system/locks';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import type { Connection } from '$lib/domain/connection';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { RunService } from '$lib/runtime/run-service';
import { SessionService, runLock, type SessionServiceDeps } from '$lib/runtime/sessions';
import { builtinProvider, toolProviders, type ToolProvider } from '$lib/runtime/tool-catalog';
import type { Locks } from '$lib/ports/locks';
import type { RunBus } from '$lib/ports/run-bus';
import type { Sandbox } from '$lib/ports/sandbox';
import { runtimeTools } from '$lib/tools/runtime-tools';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { nodeWasm } from './image-codecs';

let dbCounter = 0;
/** The real codecs, compiled from node_modules. */
const nodeImageNormalizer = new JsquashImageNormalizer({ loadWasm: nodeWasm });

/** The Session runtime on real Dexie (fake-indexeddb) and the memory workspace. */
export function runtimeHarness(
  gateway: ModelGateway,
  options: {
    maxRetries?: number;
    sandbox?: Sandbox;
    /** More tool sources; a function gets the runtime's database (MCP registrations live there). */
    providers?: ToolProvider[] | ((db: HearthDatabase) => ToolProvider[]);
    /** Wraps the memory store that holds the workspaces' files. */
    files?: (memory: WorkspaceStore) => WorkspaceStore;
    /** Changes the Session profile before it is stored. */
    profile?: (profile: ProfileV5) => void;
  } = {},
) {
  const db = openHearthDatabase(`hearth-test-${++dbCounter}-${Math.random()}`);
  const journal = new DexieJournal(db, systemClock);
  const runs = new DexieRunStore(db);
  const sessions = new DexieSessionStore(db);
  const memory = new MemoryWorkspaceStore();
  const workspaces = new TieredWorkspaceStore(options.files?.(memory) ?? memory, new DexieRecordStore(db));
  const profiles = new DexieProfileStore(db);
  // The Session profile with the retry policy under test (the built-in retries 3 times, 3 s apart).
  const profile: ProfileV5 = {
    ...sessionProfile(),
    run: { ...sessionProfile().run, modelRetry: { maxRetries: options.maxRetries ?? 3, intervalMs: 1000 } },
  };
  options.profile?.(profile);
  const ready = profiles.put(profile);
  const sleeps: number[] = [];
  /** The connections runs talked to, in order. */
  const connectionsUsed: Connection[] = [];
  const locks = memoryLocks();
  const deps = {
    sessions,
    runs,
    journal,
    connections: new DexieConnectionStore(db),
    settings: new DexieSettingsStore(db),
    workspaces,
    locks,
    gatewayFor: (connection: Connection) => {
      connectionsUsed.push(connection);
      return gateway;
    },
    providers: toolProviders([
      builtinProvider(runtimeTools.session),
      ...(typeof options.providers === 'function' ? options.providers(db) : (options.providers ?? [])),
    ]),
    sandbox: options.sandbox,
    images: nodeImageNormalizer,
    clock: systemClock,
    ids: randomIds,
    profiles,
    sleep: async (ms: number) => void sleeps.push(ms),
    skills: memorySkills(db, memory),
  };
  const tab = openTab(deps);
  /** `deps` lets a test start a second runtime on the same storage and locks: another tab. */
  return {
    db,
    journal,
    runs,
    sessions,
    workspaces,
    profiles,
    sleeps,
    connectionsUsed,
    deps,
    ready,
    skills: deps.skills,
    ...tab,
  };
}

/** One tab's runtime over shared storage and locks: its run service and its Session service. */
export function openTab(
  deps: Omit<SessionServiceDeps, 'service'> & { locks: Locks },
  options: { bus?: RunBus } = {},
) {
  const service = new RunService({
    runs: deps.runs,
    journal: deps.journal,
    locks: deps.locks,
    clock: deps.clock,
    ids: deps.ids,
    sandbox: deps.sandbox,
    bus: options.bus,
  });
  const sessions = new SessionService({ ...deps, service });
  return {
    /** The run service: watch, cancel, guide, decide, resume. */
    runService: service,
    /** The Session service: create, send. */
    service: sessions,
    recoverInterrupted: () => service.recoverInterrupted((run) => runLock(run.target)),
  };
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
