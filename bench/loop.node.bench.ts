import 'fake-indexeddb/auto';
import { test } from 'vitest';
import { runtimeHarness } from '../tests/support/runtime-harness';
import { instantModel, measureBareModel, measureRounds, median } from './loop';

const ROUNDS = 200;

test('runtime overhead per loop round (Node, fake-indexeddb, memory workspace)', async () => {
  const h = runtimeHarness(instantModel(ROUNDS));
  const perRound = await measureRounds(h.service, ROUNDS);
  const bare = await measureBareModel(ROUNDS);
  console.log(
    `RESULT loop-node rounds=${ROUNDS} median_ms_per_round=${median(perRound).toFixed(3)} ` +
      `baseline_bare_model_median_ms=${median(bare).toFixed(4)}`,
  );
}, 120_000);
