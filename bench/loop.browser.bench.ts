import { test } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import {
  DexieConnectionStore,
  DexieRunStore,
  DexieSessionStore,
  DexieSettingsStore,
} from '$lib/adapters/db/stores';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import { webLocks } from '$lib/adapters/system/locks';
import { RunService } from '$lib/runtime/run-service';
import { SessionService } from '$lib/runtime/sessions';
import { builtinProvider, toolProviders } from '$lib/runtime/tool-catalog';
import { workspaceTools } from '$lib/tools/workspace';
import { instantModel, measureBareModel, measureRounds, median } from './loop';

const ROUNDS = 200;

test('runtime overhead per loop round (Chromium, IndexedDB, OPFS)', async () => {
  const db = openHearthDatabase(`hearth-bench-${Date.now()}`);
  const runs = new DexieRunStore(db);
  const journal = new DexieJournal(db, systemClock);
  const locks = webLocks(navigator.locks);
  const service = new SessionService({
    sessions: new DexieSessionStore(db),
    runs,
    journal,
    connections: new DexieConnectionStore(db),
    settings: new DexieSettingsStore(db),
    workspaces: new OpfsWorkspaceStore(),
    locks,
    gatewayFor: () => instantModel(ROUNDS),
    providers: toolProviders([builtinProvider(workspaceTools)]),
    clock: systemClock,
    ids: randomIds,
    profiles: new DexieProfileStore(db),
    sleep: async () => {},
    service: new RunService({ runs, journal, locks, clock: systemClock, ids: randomIds }),
  });
  const perRound = await measureRounds(service, ROUNDS);
  const bare = await measureBareModel(ROUNDS);
  console.log(
    `RESULT loop-chromium rounds=${ROUNDS} median_ms_per_round=${median(perRound).toFixed(3)} ` +
      `baseline_bare_model_median_ms=${median(bare).toFixed(4)}`,
  );
  db.close();
}, 120_000);
