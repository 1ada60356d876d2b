import 'fake-indexeddb/auto';
import { test } from 'vitest';
import { RunService } from '$lib/runtime/run-service';
import { SessionService } from '$lib/runtime/sessions';
import { builtinProvider, toolProviders } from '$lib/runtime/tool-catalog';
import { runtimeHarness } from '../tests/support/runtime-harness';
import {
  instantModel,
  loopResult,
  measureBareModel,
  measureRounds,
  splitResult,
  timed,
  timedWorkspaceTools,
} from './loop';

const ROUNDS = 200;

test('runtime overhead per loop round (Node, fake-indexeddb, memory workspace)', async () => {
  const h = runtimeHarness(instantModel(ROUNDS));
  const { tools, writes } = timedWorkspaceTools();
  // fake-indexeddb is a slow, pure-JS stand-in: its share is reported apart from the runtime's own.
  const storage = { ms: 0 };
  const journal = timed(h.deps.journal, storage);
  const sessions = timed(h.deps.sessions, storage);
  const service = new SessionService({
    ...h.deps,
    journal,
    sessions,
    providers: toolProviders([builtinProvider(tools)]),
    service: new RunService({ ...h.deps, journal }),
  });
  const times = await measureRounds(service, ROUNDS, writes);
  const bare = await measureBareModel(ROUNDS);
  console.log(loopResult('loop-node', ROUNDS, times, writes, bare));
  console.log(splitResult('loop-node', times, storage.ms));
}, 120_000);
