import { test } from 'vitest';
import { extensionHarness, moduleFile } from '../tests/support/extension-harness';
import { median } from './loop';

/**
 * Extension calls in Chromium (tools.md §14): a call's round trip to the extension's isolated worker,
 * bare (the RPC) and as a run makes it (the provider: the record read again, the receipt checked),
 * side by side with calling the same function directly in the page; and how long an extension takes
 * to start (spawn, isolation check, its code loaded, its tools registered).
 */
const ROUNDS = 300;
/** The tool's handler: called in the page for the baseline, and sent as the extension's code. */
const total = ({ values }: { values: number[] }) => ({
  total: values.reduce((a, b) => a + b, 0),
  count: values.length,
});
const SOURCE = `const total = ${total.toString()};
hearth.registerTool({ name: 'total', description: 'Adds numbers.', inputSchema: { type: 'object' }, handler: total });`;
const args = { values: Array.from({ length: 20 }, (_, i) => i * 1.5) };

test('extension calls and starts (Chromium)', async () => {
  const harness = extensionHarness();
  try {
    const startCold = performance.now();
    await harness.install([moduleFile({ id: 'bench' }, SOURCE)]);
    const install = performance.now() - startCold;

    // The same function, called in the page (its arguments and value copied as a call copies them).
    const directTimes: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      JSON.parse(JSON.stringify(await total(structuredClone(args))));
      directTimes.push(performance.now() - t);
    }

    const first = performance.now();
    await harness.call('extension/bench:total', args);
    const firstCall = performance.now() - first;

    const providerTimes: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      const outcome = await harness.call('extension/bench:total', args);
      providerTimes.push(performance.now() - t);
      if (outcome.isError) throw new Error(outcome.content);
    }

    // Starts with the policy frame already there (a restart after a timeout, another extension).
    const starts: number[] = [];
    for (let i = 0; i < 10; i++) {
      await harness.extensions.setEnabled('bench', false);
      await harness.extensions.setEnabled('bench', true);
      const t = performance.now();
      await harness.call('extension/bench:total', args);
      starts.push(performance.now() - t);
    }

    const d = median(directTimes);
    const p = median(providerTimes);
    console.log(
      `RESULT extension_call rounds=${ROUNDS} through_worker_median_ms=${p.toFixed(3)} ` +
        `baseline_direct_in_page_median_ms=${d.toFixed(3)} added_median_ms=${(p - d).toFixed(3)} ` +
        `p95_ms=${[...providerTimes].sort((a, b) => a - b)[Math.floor(ROUNDS * 0.95)]!.toFixed(3)}`,
    );
    console.log(
      `RESULT extension_start install_with_inspection_ms=${install.toFixed(1)} ` +
        `first_call_with_start_ms=${firstCall.toFixed(1)} restart_and_call_median_ms=${median(starts).toFixed(1)}`,
    );
  } finally {
    await harness.close();
  }
}, 300_000);
