import type { JsonObject } from '$lib/domain/json';
import type { EngineProgress } from '$lib/domain/run-update';
import type { ShellMounts } from '$lib/domain/shell-mounts';
import type { WorkspacePath } from '$lib/domain/workspace-path';

/** A file of the workspace copy a shell call starts from. */
export interface SandboxFile {
  path: WorkspacePath;
  bytes: Uint8Array;
}

/** A change a call made to a writable workspace file: new bytes, or null when it removed the file. */
export interface SandboxChange {
  path: WorkspacePath;
  bytes: Uint8Array | null;
}

export interface ShellRequest {
  /**
   * The workspace the call belongs to (its store key): a sandbox serves one workspace only, so no
   * state a program leaves behind reaches another one.
   */
  workspace: string;
  command: string;
  /** Absolute shell path of the working directory (`/`, `/work`). */
  workdir: string;
  mounts: ShellMounts;
  files: SandboxFile[];
  /** Native names of the builtins the command may call as `builtin.<name> '<json>'`. */
  builtins: string[];
  /** The MCP tools the command may list, check and invoke (`mcp.*`), from the frozen snapshot. */
  mcp?: ShellMcpTool[];
}

/** Runs a builtin for a `builtin.<name>` command inside the shell. */
export type CallBuiltin = (name: string, args: JsonObject) => Promise<{ text: string; isError: boolean }>;

/** An MCP tool the invocation has, as the shell's `mcp.*` commands show it. */
export interface ShellMcpTool {
  serverId: string;
  /** The server's display name. */
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  approval: 'ask' | 'allow';
}

/** One `mcp.invoke`: the tool, its arguments and its own time limit, if it was given one. */
export interface ShellMcpCall {
  serverId: string;
  tool: string;
  arguments: JsonObject;
  timeoutMs?: number;
}

/**
 * How an `mcp.invoke` ended (tools.md §13.12): 0 with the result, 1 failed (`text` says whether it
 * was sent), 124 no answer (it may have run), 2 usage. `text` goes to stdout on 0, else to stderr.
 */
export interface ShellMcpResult {
  exitCode: 0 | 1 | 2 | 124;
  text: string;
}

export interface McpCallHooks {
  /** Aborts when the shell call ends (stopped, out of time) while the MCP call runs. */
  signal: AbortSignal;
  /** The call waits for the person: the shell's budget stands still until the returned resume. */
  hold(): () => void;
}

/** Runs an `mcp.invoke` for the shell, through the runtime's one call path. */
export type CallMcp = (call: ShellMcpCall, hooks: McpCallHooks) => Promise<ShellMcpResult>;

export interface ShellOutput {
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
}

/** How a call ended (tools.md §13.12): exited with a status, stopped, out of time, or the engine broke. */
export type ShellOutcome =
  | ({ kind: 'exited'; exitCode: number } & ShellOutput)
  | { kind: 'cancelled' }
  | { kind: 'timeout' }
  | { kind: 'failed'; message: string };

export interface ShellRun {
  outcome: ShellOutcome;
  /** Every change the call completed, also when it was cancelled or timed out. */
  changes: SandboxChange[];
}

/**
 * Runs shell commands in a sandbox (docs/architecture.md, "The boundary"): no network, no storage,
 * and nothing shared between workspaces.
 */
export interface Sandbox {
  /** The workspace's run ended: whatever served it ends too (a later call starts fresh). */
  release?(workspace: string): void;
  /** A shell call is likely soon: start Python in the background, for whichever workspace calls first. */
  warm?(): void;
  run(
    request: ShellRequest,
    options: {
      signal: AbortSignal;
      onProgress?: (progress: EngineProgress) => void;
      callBuiltin?: CallBuiltin;
      callMcp?: CallMcp;
    },
  ): Promise<ShellRun>;
}

/** The limits of one call (tools.md §13.12). */
export const SHELL_TIMEOUT_MS = 30_000;
export const SHELL_OUTPUT_CHARS = 100_000;
