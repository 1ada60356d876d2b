/// <reference lib="webworker" />
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import {
  DexieConnectionStore,
  DexieRunStore,
  DexieSessionStore,
  DexieSettingsStore,
} from '$lib/adapters/db/stores';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import { webLocks } from '$lib/adapters/system/locks';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import { RunService } from '$lib/runtime/run-service';
import { SessionService } from '$lib/runtime/sessions';
import { builtinProvider, toolProviders } from '$lib/runtime/tool-catalog';
import { instantModel, measureBareModel, measureRounds, timed, timedWorkspaceTools } from './loop';

/**
 * The loop benchmark where the runtime really runs: a dedicated worker, with the stores the
 * runtime worker composes (OPFS files, IndexedDB journal and records).
 */
const scope = self as unknown as DedicatedWorkerGlobalScope;
scope.onmessage = async (e: MessageEvent<{ rounds: number }>) => {
  const { rounds } = e.data;
  const db = openHearthDatabase(`hearth-bench-${Date.now()}`);
  const runs = new DexieRunStore(db);
  // IndexedDB's share of a round, apart from the runtime's own work.
  const storage = { ms: 0 };
  const journal = timed(new DexieJournal(db, systemClock), storage);
  const locks = webLocks(navigator.locks);
  const { tools, writes } = timedWorkspaceTools();
  const service = new SessionService({
    sessions: timed(new DexieSessionStore(db), storage),
    runs,
    journal,
    connections: new DexieConnectionStore(db),
    settings: new DexieSettingsStore(db),
    workspaces: new TieredWorkspaceStore(new OpfsWorkspaceStore(), new DexieRecordStore(db)),
    locks,
    gatewayFor: () => instantModel(rounds),
    providers: toolProviders([builtinProvider(tools)]),
    clock: systemClock,
    ids: randomIds,
    profiles: new DexieProfileStore(db),
    sleep: async () => {},
    images: new JsquashImageNormalizer(),
    service: new RunService({ runs, journal, locks, clock: systemClock, ids: randomIds }),
  });
  const times = await measureRounds(service, rounds, writes);
  const bare = await measureBareModel(rounds);
  db.close();
  scope.postMessage({ times, writes, bare, storageMs: storage.ms });
};
