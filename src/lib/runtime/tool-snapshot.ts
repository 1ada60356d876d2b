import { allocateCallNames, type CallNameEntry } from '$lib/domain/call-names';
import type { HearthError } from '$lib/domain/errors';
import type { ModelToolSpec } from '$lib/domain/model';
import { err, ok, type Result } from '$lib/domain/result';
import type { ToolId } from '$lib/domain/tool-id';
import type { ToolBinding } from './tool-bindings';

/** How an invocation may end (runtime.md §1.1): root and handoff runs finish; children return. */
export type ExitPolicy = 'run_finish_allowed' | 'task_return_required';

export interface SnapshotBinding extends ToolBinding {
  callName: string;
}

/**
 * The frozen tool surface of one invocation (tools.md §4): descriptions, parameters and the
 * call-name map. Model calls are decoded only through `byCallName`; output revisions reuse it.
 */
export interface ToolSnapshot {
  readonly id: string;
  readonly exitPolicy: ExitPolicy;
  readonly bindings: readonly SnapshotBinding[];
  readonly byCallName: ReadonlyMap<string, SnapshotBinding>;
  readonly byToolId: ReadonlyMap<ToolId, SnapshotBinding>;
  /** What the model is offered, in binding order. */
  readonly specs: readonly ModelToolSpec[];
  /** The invocation's model takes images (tools.md §11): decided here, once, from its connection. */
  readonly acceptsImages: boolean;
}

/**
 * Applies the completion protocol (return-mode children lose commit, finish and delegation and
 * gain `task.return`), allocates call names (builtins first) and freezes the result.
 */
export function createSnapshot(
  id: string,
  bindings: readonly ToolBinding[],
  exitPolicy: ExitPolicy,
  options: { taskReturn?: ToolBinding; acceptsImages?: boolean } = {},
): Result<ToolSnapshot, HearthError> {
  const { taskReturn, acceptsImages = false } = options;
  let bound = [...bindings];
  if (exitPolicy === 'task_return_required') {
    bound = bound.filter((b) => b.tool.facts.forChildren);
    if (taskReturn) bound.push(taskReturn);
  }
  const names = allocateCallNames(
    bound.map(({ tool }): CallNameEntry =>
      tool.source === 'mcp'
        ? { toolId: tool.toolId, source: 'mcp', name: tool.nativeName, serverName: tool.serverName ?? '' }
        : { toolId: tool.toolId, source: tool.source, name: tool.nativeName },
    ),
  );
  if (!names.ok) return names;
  const snapshotBindings = bound.map((b) => ({ ...b, callName: names.value.get(b.tool.toolId)! }));
  const byCallName = new Map(snapshotBindings.map((b) => [b.callName, b] as const));
  const byToolId = new Map(snapshotBindings.map((b) => [b.tool.toolId, b] as const));
  if (byToolId.size !== snapshotBindings.length) {
    return err({ code: 'tool.snapshot_duplicate_id', message: 'A tool is bound twice in one snapshot.' });
  }
  return ok(
    Object.freeze({
      id,
      exitPolicy,
      bindings: Object.freeze(snapshotBindings),
      byCallName,
      byToolId,
      specs: snapshotBindings.map((b) => ({
        name: b.callName,
        description: b.description,
        parameters: b.parameters,
      })),
      acceptsImages,
    }),
  );
}

export const callNames = (snapshot: ToolSnapshot): string[] => snapshot.bindings.map((b) => b.callName);
