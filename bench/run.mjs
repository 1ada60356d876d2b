// `npm run bench`: builds if needed, then runs every benchmark and prints its RESULT lines:
// vitest (bench/*.node.bench.ts, then bench/*.browser.bench.ts in Chromium), the first-page
// load, and the Playwright benchmarks against the built app (bench/e2e/).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const run = (cmd, args) => {
  console.log(`\n$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', shell: false });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

if (!existsSync('build/index.html')) run('npx', ['vite', 'build']);
run('npx', ['vitest', 'run', '--config', 'bench/vitest.config.ts']);
run('node', ['bench/page-load.mjs']);
run('npx', ['playwright', 'test', '--config', 'bench/playwright.config.ts']);
