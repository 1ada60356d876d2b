import type { z } from 'zod';
import { BUILTIN_TOOLS, type BuiltinToolName, type ToolFacts } from '$lib/domain/builtin-tools';
import type { ErrorCode } from '$lib/domain/errors';
import type { AwaitMode, DelegatedTask, HandoffBrief, TaskResult } from '$lib/domain/delegation';
import type { ExtensionTarget } from '$lib/domain/extension';
import type { ShellFileChange } from '$lib/domain/events';
import type { JsonObject, JsonValue } from '$lib/domain/json';
import type { EngineProgress } from '$lib/domain/run-update';
import { builtinCallName, builtinToolId, type ToolId } from '$lib/domain/tool-id';
import type { WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { ChatContext } from '$lib/ports/chat-context';
import type {
  CallBuiltin,
  McpCallHooks,
  Sandbox,
  ShellMcpCall,
  ShellMcpResult,
  ShellMcpTool,
} from '$lib/ports/sandbox';
import type { Workspace } from '$lib/ports/workspace';
import type { ReadState } from './workspace/read-state';

export type { ToolScope } from '$lib/domain/tool-scope';

/**
 * A file change a tool made: the runtime journals it and checkpoints the files. `content` is
 * the whole file as the tool left it (what `sha256` hashes): the checkpoint keeps it without
 * reading the file back. It is never journaled.
 */
export type FileEffect =
  | {
      type: 'file-written';
      path: string;
      mode: 'replace' | 'append';
      chars: number;
      words: number;
      sha256: string;
      content: Uint8Array;
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
      content: Uint8Array;
    }
  /** `workspace_shell` wrote these changes back. */
  | { type: 'shell-changed'; changes: ShellFileChange[] };

/**
 * A change to the run itself that only the runtime can make (`runtime/control.ts` performs them,
 * in one place): publishing a reply, ending the run; later delegating, awaiting, handing off and
 * returning a task. The tool checks its own arguments only.
 */
export type ControlEffect =
  /**
   * `workspace_commit` validated a commit (runtime.md §1.9): the path is visible, the mode valid,
   * the file exists, is UTF-8 and is not a blank required message body. `chars`, `words` and
   * `sha256` describe the whole file as read. `finish: true` ends the run after the commit (D6).
   */
  | {
      type: 'commit';
      path: string;
      mode: 'replace' | 'append';
      /** Trimmed; absent when the model gave none. */
      reason?: string;
      finish: boolean;
      chars: number;
      words: number;
      sha256: string;
    }
  /** `workspace_finish` asks to end the run (runtime.md §1.10). */
  | { type: 'finish'; reason?: string }
  /** `agent_delegate`: start a task with another agent (runtime.md §2.2). */
  | { type: 'delegate'; agentId: string; task: DelegatedTask }
  /** `agent_await`: wait for delegated tasks (runtime.md §2.7). */
  | { type: 'await'; taskIds?: string[]; mode: AwaitMode; timeoutMs: number }
  /** `task_return`: a delegated task's result; ends the child (runtime.md §2.6). */
  | { type: 'task_return'; result: TaskResult }
  /** `agent_handoff`: another agent takes the rest of the run; ends this one (runtime.md §2.10). */
  | { type: 'handoff'; agentId: string; brief: HandoffBrief };

export type ToolEffect = FileEffect | ControlEffect;

/** Every control effect's type (a Record, so adding an effect without listing it does not compile). */
const CONTROL_EFFECTS: Record<ControlEffect['type'], true> = {
  commit: true,
  finish: true,
  delegate: true,
  await: true,
  task_return: true,
  handoff: true,
};
export const isControlEffect = (effect: ToolEffect): effect is ControlEffect =>
  Object.hasOwn(CONTROL_EFFECTS, effect.type);

/** What a tool returns; the runtime adds call id and tool id to make an AgentToolResult. */
export interface ToolOutcome {
  content: string;
  structured?: JsonValue;
  isError: boolean;
  errorCode?: ErrorCode;
  resourceRefs: string[];
  /** Images the tool returned, as bytes: the dispatcher normalizes and stores them (tools.md §11). */
  images: ToolImage[];
  effects: ToolEffect[];
}

/** An image a tool returned, before ingestion; `label` says where it stood ("image 1 of the result"). */
export interface ToolImage {
  bytes: Uint8Array;
  label: string;
}

/** Builtins callable from inside the shell, by native name, with a JSON object of arguments. */
export interface ShellBuiltins {
  names: readonly string[];
  call: CallBuiltin;
}

/** The MCP tools the shell can list, check and invoke (`mcp.*`, tools.md §13.12). */
export interface ShellMcp {
  tools: readonly ShellMcpTool[];
  /** One `mcp.invoke`, made as a nested call of the shell call whose context is `ctx`. */
  invoke(call: ShellMcpCall, hooks: McpCallHooks, ctx: ToolContext): Promise<ShellMcpResult>;
}

/** A call one tool makes of another tool of the invocation (the shell's `mcp.invoke`). */
export interface NestedCallRequest {
  callName: string;
  arguments: JsonObject;
  /** Ends the call early: the calling command ended, or the call's own time ran out. */
  signal: AbortSignal;
  /** The call starts (true) or stops (false) waiting for the person: that time is not the tool's. */
  waiting?: (pending: boolean) => void;
}

/** Runs that publish a reply (Chats): where the reply is drafted. */
export interface CommitCapability {
  /** The profile's message-body artifact path, the default of `workspace_commit`'s `path`. */
  messageBodyPath: string;
  /** Committing that file while it is blank fails with `workspace.required_artifact_empty`. */
  messageBodyRequired: boolean;
}

/** Runs with a sandbox: the shell and what it may call back. */
export interface ShellCapability {
  sandbox: Sandbox;
  /** The builtins the shell can call as `builtin.<name> '<json>'` (tools.md §13.12). */
  builtins: ShellBuiltins;
  /** Runs with MCP tools: the shell's `mcp.*` commands reach them. */
  mcp?: ShellMcp;
  /** Engine download progress of a call (the first Python call), for the person watching. */
  onProgress?: (progress: EngineProgress) => void;
}

/**
 * Everything a builtin tool may touch; tools reach the outside world only through this. The core
 * is always there; each capability is there only in runs that have it (a tool without the one it
 * needs says so to the model).
 */
export interface ToolContext {
  workspace: Workspace;
  roots: WorkspaceRoots;
  /** Per-invocation read-state for CAS (tools.md §12.3). */
  readState: ReadState;
  signal: AbortSignal;
  /** Chat runs: the bound chat and the frozen World Info activation. */
  chat?: ChatContext;
  commit?: CommitCapability;
  shell?: ShellCapability;
  /** Uniform random numbers in [0, 1) for `dice.roll`; default a `crypto.getRandomValues` source. */
  random?: () => number;
  /**
   * A call of another tool of the invocation from inside this one, through the one dispatch path
   * (journaled, asked about when set to Ask, executed by its provider); its result comes back here
   * instead of joining the conversation. Only a call the model made has it.
   */
  callTool?: (request: NestedCallRequest) => Promise<ToolOutcome>;
  /** The run the call belongs to, told to tools outside Hearth (an extension's call payload). */
  run?: RunIdentity;
  /** The call itself (set by dispatch for the provider that executes it). */
  call?: { invocationId: string; callId: string };
}

/** A run as a tool outside Hearth is told about it: its id and whether it is a Chat or a Session. */
export interface RunIdentity {
  runId: string;
  target: ExtensionTarget;
}

/**
 * A builtin tool: data plus one `execute`. `parameters` is a closed zod object; the runtime
 * validates arguments before `execute`, which therefore only sees valid input. `execute`
 * returns recoverable errors as outcomes and throws only for system failures.
 */
export interface BuiltinTool<S extends z.ZodObject = z.ZodObject> {
  id: ToolId;
  /** Native name, e.g. `workspace.read_file`. */
  name: BuiltinToolName;
  /** Fixed model-facing call name, e.g. `workspace_read_file`. */
  callName: string;
  description: string;
  parameters: S;
  facts: ToolFacts;
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

/**
 * Defines a builtin by its native name: its id, call name and facts come from the builtin table
 * (`domain/builtin-tools.ts`), and the zod inference of `execute` stays tied to `parameters`.
 */
export const defineTool = <S extends z.ZodObject>(tool: {
  name: BuiltinToolName;
  description: string;
  parameters: S;
  execute(input: z.infer<S>, ctx: ToolContext): Promise<ToolOutcome>;
}): BuiltinTool<S> => ({
  ...tool,
  id: builtinToolId(tool.name),
  callName: builtinCallName(tool.name),
  facts: BUILTIN_TOOLS[tool.name],
});
