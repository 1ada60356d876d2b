import type { z } from 'zod';
import type { ErrorCode } from '$lib/domain/errors';
import type { JsonValue } from '$lib/domain/json';
import type { ImageRef } from '$lib/domain/model';
import type { ToolId } from '$lib/domain/tool-id';
import type { WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { ShellFileChange } from '$lib/domain/events';
import type { ChatContext } from '$lib/ports/chat-context';
import type { EngineProgress } from '$lib/domain/run-update';
import type { CallBuiltin, Sandbox } from '$lib/ports/sandbox';
import type { Workspace } from '$lib/ports/workspace';
import type { ReadState } from './workspace/read-state';

export type { ToolScope } from '$lib/domain/tool-scope';
import type { ToolScope } from '$lib/domain/tool-scope';

/** A change a tool made that the runtime must journal and checkpoint. */
export type ToolEffect =
  | {
      type: 'file-written';
      path: string;
      mode: 'replace' | 'append';
      chars: number;
      words: number;
      sha256: string;
    }
  | {
      type: 'file-patched';
      path: string;
      chars: number;
      words: number;
      oldSha256: string;
      sha256: string;
      /** Occurrences of `old_string` replaced (all of them with `replace_all`, else 1). */
      replacements: number;
    }
  /** `workspace_shell` wrote these changes back; the runtime journals them and checkpoints the written files. */
  | { type: 'shell-changed'; changes: ShellFileChange[] }
  /**
   * `workspace_commit` validated a commit (runtime.md §1.9): the path is visible, the mode valid,
   * the file exists, is UTF-8 and is not a blank required message body. `chars`, `words` and
   * `sha256` describe the whole file as read. The tool's outcome is the success result; its
   * `structured.messageId`/`messageIndex` are `null` until the host answers. The runtime must:
   * 1. journal `chat_commit_started {commitId: commit_<uuid>, invocationId, callId, path, mode, reason}`;
   * 2. status `creating_checkpoint`, checkpoint the file with reason `chat_commit` (`checkpoint_created`);
   * 3. register the pending host commit, status `awaiting_host_commit`, journal `chat_commit_requested`
   *    {commitId, invocationId, callId, run identity, path, mode, reason, chars, words, sha256, checkpointId};
   * 4. wait for the host: cancellation drops the pending commit and ends the run `cancelled`; a host
   *    error journals `chat_commit_failed` and is the system failure `agent.chat_commit_failed`
   *    (the tool's outcome is discarded);
   * 5. on success record `{path, mode, messageId, round}` in the run's commit ledger (shared along the
   *    handoff chain), status `dispatching_tool`, journal `chat_commit_completed` (with `messageIndex`)
   *    and `chat_commit_recorded`, and return `commitCompleted(outcome, messageId)` (commit.ts);
   * 6. when `finish` is true (D6), then finish the run exactly as for a `finish` effect — the commit
   *    just succeeded, so `agent.foreground_commit_required` cannot apply.
   * Commit is never offered to return-mode children (tools.md §4.2), so the tool does not check that.
   */
  | {
      type: 'commit';
      path: string;
      mode: 'replace' | 'append';
      /** Trimmed; absent when the model gave none. */
      reason?: string;
      /** `workspace_commit` with `finish: true`: end the run after this commit (D6). */
      finish: boolean;
      chars: number;
      words: number;
      sha256: string;
    }
  /**
   * `workspace_finish` asks to end the run (runtime.md §1.10). The tool checks only its arguments;
   * the runtime must, in order, replace the outcome with a recoverable error when
   * - the invocation is a return-mode child: `agent.child_finish_denied` (tell it to call `task_return`);
   * - the run is a foreground run whose commit ledger is empty (a commit by an earlier handoff owner
   *   counts): `agent.foreground_commit_required` (tell it to call `workspace_commit` first);
   * - it is not the last call of its turn: per D6 the calls after it get `agent.tool_after_finish`.
   * Otherwise cancel the invocation's unfinished return-mode tasks without waiting, end the tool loop
   * and run `finishRun` (persist promotion, persistent-state metadata handshake, `completed`).
   */
  | { type: 'finish'; reason?: string };

/** What a tool returns; the runtime adds call id and tool id to make an AgentToolResult. */
export interface ToolOutcome {
  content: string;
  structured?: JsonValue;
  isError: boolean;
  errorCode?: ErrorCode;
  resourceRefs: string[];
  images: ImageRef[];
  effects: ToolEffect[];
}

/** Everything a builtin tool may touch; tools reach the outside world only through this. */
export interface ToolContext {
  workspace: Workspace;
  roots: WorkspaceRoots;
  /** Per-invocation read-state for CAS (tools.md §12.3). */
  readState: ReadState;
  signal: AbortSignal;
  /** Chat runs: the bound chat and the frozen World Info activation; absent in Sessions. */
  chat?: ChatContext;
  /**
   * Chat runs: the profile's message-body artifact path, the default of `workspace_commit`'s
   * `path`. Default `output/main.md`.
   */
  messageBodyPath?: string;
  /**
   * Whether that artifact is `required`: committing it while it is blank fails with
   * `workspace.required_artifact_empty`. Default true (the built-in `main` artifact is required).
   */
  messageBodyRequired?: boolean;
  /** Runs `workspace_shell` calls; absent where no sandbox exists (the shell then reports it). */
  sandbox?: Sandbox;
  /** The builtins the shell can call as `builtin.<name> '<json>'` (tools.md §13.12). */
  shellBuiltins?: ShellBuiltins;
  /** Engine download progress of a shell call (the first Python call), for the person watching. */
  onShellProgress?: (progress: EngineProgress) => void;
  /** Uniform random numbers in [0, 1) for `dice.roll`; default a `crypto.getRandomValues` source. */
  random?: () => number;
}

/** Builtins callable from inside the shell, by native name, with a JSON object of arguments. */
export interface ShellBuiltins {
  names: readonly string[];
  call: CallBuiltin;
}

/**
 * A builtin tool: data plus one `execute`. `parameters` is a closed zod object; the runtime
 * validates arguments before `execute`, which therefore only sees valid input. `execute`
 * returns recoverable errors as outcomes and throws only for system failures.
 */
export interface BuiltinTool<S extends z.ZodObject = z.ZodObject> {
  id: ToolId;
  /** Native name, e.g. `workspace.read_file`. */
  name: string;
  /** Fixed model-facing call name, e.g. `workspace_read_file`. */
  callName: string;
  description: string;
  parameters: S;
  scopes: readonly ToolScope[];
  execute(input: z.infer<S>, ctx: ToolContext): Promise<ToolOutcome>;
}

export const success = (
  content: string,
  extra: Partial<Omit<ToolOutcome, 'content' | 'isError'>> = {},
): ToolOutcome => ({ content, isError: false, resourceRefs: [], images: [], effects: [], ...extra });

/** A recoverable error: `content` is the message; `structured` records the code (tools.md §8.1). */
export const failure = (code: ErrorCode, message: string): ToolOutcome => ({
  content: message,
  structured: { error: { code, message } },
  isError: true,
  errorCode: code,
  resourceRefs: [],
  images: [],
  effects: [],
});

/** Helper that keeps the zod inference of `execute` tied to `parameters`. */
export const defineTool = <S extends z.ZodObject>(tool: BuiltinTool<S>): BuiltinTool<S> => tool;
