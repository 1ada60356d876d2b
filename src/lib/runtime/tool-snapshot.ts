import { allocateCallNames, type CallNameEntry } from '$lib/domain/call-names';
import { HearthFailure, type ErrorCode, type HearthError } from '$lib/domain/errors';
import type { ModelToolSpec } from '$lib/domain/model';
import { err, ok, type Result } from '$lib/domain/result';
import { builtinToolId, type ToolId } from '$lib/domain/tool-id';
import type { ToolScope } from '$lib/domain/tool-scope';
import { prepareBindings, type BindingDiagnostic, type ToolBinding, type ToolPolicy } from './tool-bindings';
import { currentCatalog, type ToolProviders } from './tool-catalog';

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
  /** Tools left out when it was made, and why (journaled with `context_assembled`). */
  readonly diagnostics: readonly BindingDiagnostic[];
}

/**
 * Applies the completion protocol (return-mode children lose commit, finish and delegation and
 * gain `task.return`), allocates call names (builtins first) and freezes the result.
 */
export function createSnapshot(
  id: string,
  bindings: readonly ToolBinding[],
  exitPolicy: ExitPolicy,
  options: {
    taskReturn?: ToolBinding;
    acceptsImages?: boolean;
    diagnostics?: readonly BindingDiagnostic[];
  } = {},
): Result<ToolSnapshot, HearthError> {
  const { taskReturn, acceptsImages = false, diagnostics = [] } = options;
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
      diagnostics: Object.freeze([...diagnostics]),
    }),
  );
}

/** The tool part of a profile, as snapshots read it. */
type ProfileTools = {
  tools: {
    allow: readonly string[];
    deny: readonly string[];
    ask?: readonly string[];
    toolDescriptions: ToolPolicy['toolDescriptions'];
  };
};

/** Tools a run's kind withholds on top of the catalog's own (delegation with no agent to call). */
export type Withheld = ReadonlyMap<string, { code: ErrorCode; message: string }>;

/**
 * An invocation's snapshot: the catalog as every provider has it now, narrowed by the profile's
 * tools (deny wins) for this kind of run and model, with what was left out. A return-mode child
 * (`task_return_required`) also gets `task.return` and loses what children may not have.
 */
export async function invocationSnapshot(
  id: string,
  providers: ToolProviders,
  profile: ProfileTools,
  options: { scope: ToolScope; acceptsImages: boolean; exitPolicy?: ExitPolicy; withheld?: Withheld },
): Promise<ToolSnapshot> {
  const catalog = await currentCatalog(providers);
  if (!catalog.ok) throw new HearthFailure(catalog.error);
  const tools = catalog.value.map((t) => {
    const withheld = options.withheld?.get(t.toolId);
    return withheld && !t.withheld ? { ...t, withheld } : t;
  });
  const policy: ToolPolicy = {
    allow: profile.tools.allow as ToolId[],
    deny: profile.tools.deny as ToolId[],
    toolDescriptions: profile.tools.toolDescriptions,
    ask: (profile.tools.ask ?? []) as ToolId[],
  };
  const { bindings, diagnostics } = prepareBindings(tools, policy, options.scope, options.acceptsImages);
  const exitPolicy = options.exitPolicy ?? 'run_finish_allowed';
  const taskReturnTool = tools.find((t) => t.toolId === TASK_RETURN);
  const snapshot = createSnapshot(id, bindings, exitPolicy, {
    acceptsImages: options.acceptsImages,
    diagnostics,
    ...(exitPolicy === 'task_return_required' && taskReturnTool
      ? {
          taskReturn: {
            tool: taskReturnTool,
            description: taskReturnTool.description,
            parameters: taskReturnTool.parameters,
            approval: 'allow' as const,
          },
        }
      : {}),
  });
  if (!snapshot.ok) throw new HearthFailure(snapshot.error);
  return snapshot.value;
}

const TASK_RETURN = builtinToolId('task.return');

/** A new run's root snapshot (see `invocationSnapshot`). */
export const rootSnapshot = (
  runId: string,
  providers: ToolProviders,
  profile: ProfileTools,
  scope: ToolScope,
  acceptsImages: boolean,
  withheld?: Withheld,
): Promise<ToolSnapshot> =>
  invocationSnapshot(`snapshot_${runId}`, providers, profile, { scope, acceptsImages, withheld });

export const callNames = (snapshot: ToolSnapshot): string[] => snapshot.bindings.map((b) => b.callName);
