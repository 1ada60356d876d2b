import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The official MCP conformance suite's client scenarios against Hearth's connector
 * (tests/conformance/README.md): tests/conformance/client.ts is built for Node, and the suite's
 * CLI runs it against each scenario's server, with the expected failures as its baseline.
 */
interface Scenario {
  name: string;
  /** An expected failure (expected-failures.yml says why): checks it fails, for that reason. */
  fails?: string[];
  /**
   * The scenario wants the client to give up (the suite allows its error): it passes with the
   * client exiting 1, after refusing the sign-in or signing in once.
   */
  givesUp?: boolean;
}

/** Every client scenario the suite has. */
const SCENARIOS: Scenario[] = [
  { name: 'initialize' },
  { name: 'tools_call' },
  {
    name: 'elicitation-sep1034-client-defaults',
    fails: [
      'client-elicitation-sep1034-boolean-default',
      'client-elicitation-sep1034-enum-default',
      'client-elicitation-sep1034-integer-default',
      'client-elicitation-sep1034-number-default',
      'client-elicitation-sep1034-string-default',
    ],
  },
  { name: 'sse-retry', fails: ['client-sse-graceful-reconnect'] },
  { name: 'auth/metadata-default' },
  { name: 'auth/metadata-var1' },
  { name: 'auth/metadata-var2' },
  { name: 'auth/metadata-var3' },
  { name: 'auth/basic-cimd', fails: ['cimd-client-id-used'] },
  { name: 'auth/scope-from-www-authenticate' },
  { name: 'auth/scope-from-scopes-supported' },
  { name: 'auth/scope-omitted-when-undefined' },
  { name: 'auth/scope-step-up', fails: ['scope-step-up-escalation'] },
  { name: 'auth/scope-retry-limit', givesUp: true },
  { name: 'auth/token-endpoint-auth-basic' },
  { name: 'auth/token-endpoint-auth-post' },
  { name: 'auth/token-endpoint-auth-none' },
  { name: 'auth/pre-registration', fails: ['pre-registration-auth'] },
  { name: 'auth/2025-03-26-oauth-metadata-backcompat' },
  { name: 'auth/2025-03-26-oauth-endpoint-fallback' },
  { name: 'auth/resource-mismatch', givesUp: true },
  { name: 'auth/offline-access-scope' },
  { name: 'auth/offline-access-not-supported' },
  {
    name: 'auth/client-credentials-jwt',
    fails: ['client-credentials-grant-type', 'client-credentials-jwt-verified'],
  },
  {
    name: 'auth/client-credentials-basic',
    fails: ['client-credentials-basic-auth', 'client-credentials-grant-type'],
  },
  {
    name: 'auth/cross-app-access-complete-flow',
    fails: ['complete-flow-jwt-bearer', 'complete-flow-token-exchange'],
  },
];

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CONFORMANCE = join(ROOT, 'tests/conformance');
const EXPECTED_FAILURES = join(CONFORMANCE, 'expected-failures.yml');
const CLI = [join(CONFORMANCE, 'node20.mjs'), join(ROOT, 'tests/support/loopback-preload.mjs')].flatMap(
  (file) => ['--import', file],
);
CLI.push(join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'));

let dir: string;
let client: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-conformance-'));
  await build({
    configFile: false,
    envDir: false,
    publicDir: false,
    root: ROOT,
    logLevel: 'warn',
    resolve: { alias: { $lib: join(ROOT, 'src/lib') } },
    // Bundled whole: the output runs from a directory with no node_modules.
    ssr: { noExternal: true },
    build: {
      ssr: join(CONFORMANCE, 'client.ts'),
      outDir: join(dir, 'client'),
      target: 'node20',
      minify: false,
      emptyOutDir: true,
      rolldownOptions: { output: { entryFileNames: 'client.mjs' } },
    },
  });
  client = join(dir, 'client', 'client.mjs');
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function conformance(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI, ...args],
      { cwd: ROOT, maxBuffer: 32 * 1024 * 1024, timeout: 170_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function expectedFailures(): Promise<string[]> {
  const yaml = await readFile(EXPECTED_FAILURES, 'utf8');
  return [...yaml.matchAll(/^\s*-\s+(\S+)\s*$/gm)].map(([, name]) => name!);
}

/** The ids of the checks that failed or warned, from the run's checks.json. */
async function failedChecks(output: string): Promise<string[]> {
  const files = (await readdir(output, { recursive: true })).filter((f) => f.endsWith('checks.json'));
  expect(files).toHaveLength(1);
  const checks = JSON.parse(await readFile(join(output, files[0]!), 'utf8')) as {
    id: string;
    status: string;
  }[];
  const failed = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  return [...new Set(failed.map((c) => c.id))].sort();
}

describe('MCP conformance, client scenarios', () => {
  it('runs every client scenario the suite has, and the expected failures are those listed', async () => {
    const listed = await conformance('list', '--client');
    expect(listed.code, listed.stderr).toBe(0);
    const names = [...listed.stdout.matchAll(/^\s+- (\S+)/gm)].map(([, name]) => name!);
    expect(names.length).toBeGreaterThan(0);
    expect(names.sort()).toEqual(SCENARIOS.map((s) => s.name).sort());
    expect((await expectedFailures()).sort()).toEqual(
      SCENARIOS.filter((s) => s.fails)
        .map((s) => s.name)
        .sort(),
    );
  });

  for (const scenario of SCENARIOS) {
    const verdict = scenario.fails ? 'fails as expected' : 'passes';
    it(`${scenario.name} ${verdict}`, { timeout: 180_000 }, async () => {
      const output = join(dir, 'results', scenario.name);
      // The command is split at spaces by the CLI, which appends the scenario server's URL.
      const run = await conformance(
        'client',
        '--command',
        `${process.execPath} ${client}`,
        '--scenario',
        scenario.name,
        '--expected-failures',
        EXPECTED_FAILURES,
        '--timeout',
        '60000',
        '-o',
        output,
      );
      const log = `${run.stdout}\n${run.stderr}`;
      // With the baseline the CLI exits 0 when a listed scenario fails and an unlisted one passes.
      expect(run.code, log).toBe(0);
      const failed = await failedChecks(output);
      if (scenario.fails) {
        expect(failed, log).toEqual(expect.arrayContaining(scenario.fails));
      } else {
        expect(failed, log).toEqual([]);
        // The baseline looks at the checks only; this verdict also needs the client to exit 0,
        // or, where the scenario wants it to give up, to exit 1.
        expect(run.stderr, log).toContain('OVERALL: PASSED');
        if (scenario.givesUp) expect(run.stderr, log).toContain('Client exited with code 1');
        else expect(run.stderr, log).not.toContain('Client exited with code');
      }
    });
  }
});
