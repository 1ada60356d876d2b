import { Bash, type BashOptions, type CustomCommand } from 'just-bash/browser';
import {
  SHELL_OUTPUT_CHARS,
  type CallBuiltin,
  type ShellOutcome,
  type ShellRequest,
} from '$lib/ports/sandbox';
import { builtinCommands } from './builtin-commands';
import { mcpCommands, type InvokeMcp } from './mcp-commands';
import type { SandboxFs } from './sandbox-fs';

/**
 * just-bash's own limits, well inside the 30 s budget: `while true` ends at the command count,
 * runaway recursion at the call depth, and a flood of output at the output size (exit 126).
 */
const LIMITS: BashOptions['executionLimits'] = {
  maxCommandCount: 100_000,
  maxLoopIterations: 100_000,
  maxCallDepth: 100,
  maxOutputSize: 4 * SHELL_OUTPUT_CHARS,
  maxFileSystemBytes: 256 * 1024 * 1024,
};

const ENV = { HOME: '/', PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', USER: 'agent' };

/** Only the budget's share of stderr is kept when both streams overflow: errors stay readable. */
const STDERR_SHARE = SHELL_OUTPUT_CHARS / 5;

export type ShellExit = Extract<ShellOutcome, { kind: 'exited' | 'failed' }>;

/**
 * One shell call: a fresh shell over `fs`, a fresh copy of the request's files (the caller keeps
 * it to collect the changes); `commands` are the engines, `callBuiltin` runs `builtin.<name>`
 * and `callMcp` runs `mcp.invoke`.
 */
export async function runShell(
  fs: SandboxFs,
  request: ShellRequest,
  commands: readonly CustomCommand[],
  options: { signal?: AbortSignal; callBuiltin?: CallBuiltin; callMcp?: InvokeMcp } = {},
): Promise<ShellExit> {
  const bash = new Bash({
    fs,
    cwd: '/',
    env: ENV,
    customCommands: [
      ...commands,
      ...builtinCommands(request.builtins, options.callBuiltin),
      ...mcpCommands(request.mcp ?? [], options.callMcp),
    ],
    executionLimits: LIMITS,
  });
  if (!(await fs.exists(request.workdir))) {
    return exited(2, '', `bash: cd: ${request.workdir}: No such file or directory\n`);
  }
  try {
    const result = await bash.exec(request.command, { cwd: request.workdir, signal: options.signal });
    return exited(result.exitCode, result.stdout, result.stderr);
  } catch (e) {
    // just-bash lets a refused redirection (a read-only mount, outside the workspace) escape exec.
    const message = e instanceof Error ? e.message : String(e);
    if (/^E[A-Z]+: /.test(message)) return exited(1, '', `bash: ${message}\n`);
    return { kind: 'failed', message };
  }
}

function exited(exitCode: number, stdout: string, stderr: string): ShellExit {
  const total = stdout.length + stderr.length;
  if (total <= SHELL_OUTPUT_CHARS)
    return { kind: 'exited', exitCode, stdout, stderr, outputTruncated: false };
  const errKept = Math.min(stderr.length, Math.max(STDERR_SHARE, SHELL_OUTPUT_CHARS - stdout.length));
  return {
    kind: 'exited',
    exitCode,
    stdout: stdout.slice(0, SHELL_OUTPUT_CHARS - errKept),
    stderr: stderr.slice(0, errKept),
    outputTruncated: true,
  };
}
