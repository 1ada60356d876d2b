// Shared by start.mjs and test.mjs: run commands, install dependencies and Chromium when missing.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const binDir = path.join(repoRoot, 'node_modules', '.bin');

/**
 * Runs a command with inherited stdio from the repo root; resolves to its exit code.
 * @param {string} command
 * @param {string[]} [args]
 * @param {{ env?: Record<string, string> }} [options]
 * @returns {Promise<number>}
 */
export function run(command, args = [], { env = {} } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: repoRoot,
      stdio: 'inherit',
      shell: process.platform === 'win32',
      // The local binaries (vite, eslint, ...) come first, as under `npm run`.
      env: { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`, ...env },
    });
    child.on('error', (error) => {
      console.error(`Could not start ${command}: ${error.message}`);
      resolve(127);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * @param {string} command
 * @param {string[]} args
 * @param {{ env?: Record<string, string> }} [options]
 */
export async function runOrExit(command, args, options) {
  const code = await run(command, args, options);
  if (code !== 0) {
    console.error(`\n${[command, ...args].join(' ')} failed (exit code ${code}).`);
    process.exit(code);
  }
}

/** @param {string} file */
function mtime(file) {
  return existsSync(file) ? statSync(file).mtimeMs : 0;
}

/** Installs dependencies when node_modules is missing or older than package-lock.json. */
export async function ensureDependencies() {
  const lock = path.join(repoRoot, 'package-lock.json');
  const modules = path.join(repoRoot, 'node_modules');
  // npm rewrites node_modules/.package-lock.json on every install; the directory's own mtime is unreliable.
  const installedAt = mtime(path.join(modules, '.package-lock.json')) || mtime(modules);
  const hasLock = existsSync(lock);
  if (installedAt && (!hasLock || installedAt >= mtime(lock))) return;
  const args = hasLock ? ['ci'] : ['install'];
  console.log(
    `\n> npm ${args.join(' ')} (${installedAt ? 'package-lock.json changed' : 'no node_modules yet'})\n`,
  );
  await runOrExit('npm', args);
}

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Makes sure the system Chromium used by the browser tests exists, installing it with apt as root. */
export async function ensureChromium() {
  if (existsSync(chromiumPath)) return;
  const isRoot = process.getuid?.() === 0;
  if (process.env.CHROMIUM_PATH || !isRoot || !existsSync('/usr/bin/apt-get')) {
    console.error(
      [
        `\nChromium was not found at ${chromiumPath}; the browser and end-to-end tests need it.`,
        'Install it, then run npm test again:',
        '  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install -y chromium',
        '  elsewhere:      install Chromium and set CHROMIUM_PATH=/path/to/chromium',
      ].join('\n'),
    );
    process.exit(1);
  }
  console.log('\n> Installing Chromium with apt-get (about a minute)\n');
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  await runOrExit('apt-get', ['update'], { env });
  await runOrExit('apt-get', ['install', '-y', 'chromium'], { env });
  if (!existsSync(chromiumPath)) {
    console.error(`apt-get installed chromium, but ${chromiumPath} is still missing.`);
    process.exit(1);
  }
}
