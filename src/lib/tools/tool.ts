import type { z } from 'zod';
import type { ErrorCode } from '$lib/domain/errors';
import type { JsonValue } from '$lib/domain/json';
import type { ImageRef } from '$lib/domain/model';
import type { ToolId } from '$lib/domain/tool-id';
import type { WorkspaceRoots } from '$lib/domain/workspace-roots';
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
    };

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
