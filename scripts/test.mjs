// `npm test`: every check, in order, stopping at the first failure.
// Select steps with `npm test -- --only=unit,e2e`.
import { ensureChromium, ensureDependencies, run } from './setup.mjs';

/** @typedef {{ name: string, commands: string[][], needsChromium?: boolean }} Step */

/** @type {Step[]} */
const STEPS = [
  { name: 'lint', commands: [['eslint', '.']] },
  { name: 'format', commands: [['prettier', '--check', '.']] },
  {
    name: 'check',
    commands: [
      ['svelte-kit', 'sync'],
      ['svelte-check', '--tsconfig', './tsconfig.json', '--fail-on-warnings'],
    ],
  },
  { name: 'unit', commands: [['vitest', 'run', '--project', 'unit']] },
  { name: 'integration', commands: [['vitest', 'run', '--project', 'integration']] },
  { name: 'browser', commands: [['vitest', 'run', '--project', 'browser']], needsChromium: true },
  {
    name: 'build',
    commands: [
      ['vite', 'build'],
      ['node', 'scripts/check-budget.mjs'],
    ],
  },
  { name: 'e2e', commands: [['playwright', 'test']], needsChromium: true },
];

/** @param {string[]} argv */
function selectSteps(argv) {
  const only = argv.find((arg) => arg.startsWith('--only='));
  if (!only) return STEPS;
  const names = only.slice('--only='.length).split(',').filter(Boolean);
  const unknown = names.filter((name) => !STEPS.some((step) => step.name === name));
  if (unknown.length > 0 || names.length === 0) {
    console.error(`Unknown step(s): ${unknown.join(', ') || '(none given)'}`);
    console.error(`Steps: ${STEPS.map((step) => step.name).join(', ')}`);
    process.exit(2);
  }
  return STEPS.filter((step) => names.includes(step.name));
}

/** @param {Step} step */
async function runStep(step) {
  console.log(`\n━━━ ${step.name} ━━━ ${step.commands.map((command) => command.join(' ')).join(' && ')}\n`);
  for (const [command = '', ...args] of step.commands) {
    const code = await run(command, args);
    if (code !== 0) return false;
  }
  return true;
}

/**
 * @param {Map<string, { ok: boolean, ms: number }>} results
 * @param {Step[]} steps
 */
function printSummary(results, steps) {
  console.log('\n━━━ summary ━━━');
  for (const step of steps) {
    const result = results.get(step.name);
    const status = !result ? 'skipped' : result.ok ? 'passed' : 'FAILED';
    const time = result ? `${(result.ms / 1000).toFixed(1)}s` : '';
    console.log(`${status.padEnd(8)} ${step.name.padEnd(12)} ${time}`);
  }
}

const steps = selectSteps(process.argv.slice(2));
await ensureDependencies();
if (steps.some((step) => step.needsChromium)) await ensureChromium();

/** @type {Map<string, { ok: boolean, ms: number }>} */
const results = new Map();
for (const step of steps) {
  const started = performance.now();
  const ok = await runStep(step);
  results.set(step.name, { ok, ms: performance.now() - started });
  if (!ok) break;
}
printSummary(results, steps);
process.exit([...results.values()].every((result) => result.ok) ? 0 : 1);
