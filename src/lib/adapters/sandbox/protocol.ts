import type { JsonObject } from '$lib/domain/json';
import type { EngineProgress } from '$lib/domain/run-update';
import type { SandboxChange, ShellOutcome, ShellRequest } from '$lib/ports/sandbox';

/** The runtime worker to a sandbox worker: one call at a time, and the answers to its builtin calls. */
export type ToSandbox =
  | { type: 'run'; id: number; request: ShellRequest }
  | { type: 'builtin-result'; id: number; requestId: number; text: string; isError: boolean };

/**
 * A sandbox worker to the runtime worker. `changes` is the whole set of changes so far (sent
 * while a call runs, so a call that is stopped keeps what it completed); `done` ends the call.
 */
export type FromSandbox =
  | { type: 'progress'; id: number; progress: EngineProgress }
  | { type: 'builtin'; id: number; requestId: number; name: string; args: JsonObject }
  | { type: 'changes'; id: number; changes: SandboxChange[] }
  | {
      type: 'done';
      id: number;
      outcome: Extract<ShellOutcome, { kind: 'exited' | 'failed' }>;
      changes: SandboxChange[];
      /** The worker cannot serve more calls (its Python crashed): end it instead of reusing it. */
      retire: boolean;
    };
