import { HearthFailure, type HearthError } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import type { ToolChoice } from '$lib/domain/model';
import type { InvocationId } from '$lib/domain/run';
import { invalidArgumentsMessage, normalizeToolArguments } from '$lib/domain/tool-arguments';
import { builtinToolId, type ToolId } from '$lib/domain/tool-id';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { AgentToolResult } from '$lib/domain/tool-result';
import type { Workspace } from '$lib/ports/workspace';
import { failure, type ToolContext, type ToolEffect, type ToolOutcome } from '$lib/tools/tool';
import { validateToolInput } from '$lib/tools/validate';
import { callStem, type AuditPaths } from './audit-paths';
import type { CheckpointReason } from './checkpoints';
import type { ModelToolCall } from './model-turn';
import type { RunRecorder } from './run-recorder';
import { DEFAULT_INLINE_CHAR_LIMIT, projectLongResult } from './result-projection';
import { shellBuiltins } from './shell-builtins';
import { gateToolCall } from './tool-gate';
import type { SnapshotBinding, ToolSnapshot } from './tool-snapshot';

/** Runs MCP or extension calls. Recoverable failures are outcomes; system failures throw. */
export interface ExternalToolExecutor {
  execute(
    binding: SnapshotBinding,
    args: JsonObject,
    call: { callId: string; signal: AbortSignal },
  ): Promise<ToolOutcome>;
}

export interface DispatchDeps {
  snapshot: ToolSnapshot;
  toolChoice: ToolChoice;
  toolContext: ToolContext;
  workspace: Workspace;
  audit: AuditPaths;
  recorder: RunRecorder;
  invocationId: InvocationId;
  clock: { now(): number };
  external?: Partial<Record<'mcp' | 'extension', ExternalToolExecutor>>;
  /** The profile's `tools.externalResultInlineCharLimit`. */
  inlineCharLimit?: number;
  /** Performs a Chat run's commit or finish; returns the call's outcome (or an error instead). */
  onControl?: (
    effect: Extract<ToolEffect, { type: 'commit' | 'finish' }>,
    outcome: ToolOutcome,
  ) => Promise<ToolOutcome>;
  /** Copies changed files into a new checkpoint; throws on failure (a system failure). */
  checkpoint?: (
    reason: CheckpointReason,
    paths: string[],
    eventSeq: number,
  ) => Promise<{ checkpointId: string }>;
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2));

async function writeAudit(workspace: Workspace, path: Parameters<Workspace['write']>[0], value: unknown) {
  const written = await workspace.write(path, encode(value), { kind: 'absent' });
  if (!written.ok) {
    throw new HearthFailure({
      code: 'storage.failed',
      message: `Could not store ${path}: ${written.error.message}`,
    });
  }
}

/**
 * One call, start to finish (tools.md §7.1): audit the raw arguments, pass the gate, normalize
 * arguments once (ToolArguments), validate, dispatch explicitly to Builtin, MCP or Extension,
 * journal effects, store and journal the result. Recoverable problems become error results the
 * model reads; system failures are journaled and thrown.
 */
export async function dispatchToolCall(
  call: ModelToolCall,
  round: number,
  deps: DispatchDeps,
): Promise<AgentToolResult> {
  const { recorder, invocationId, snapshot } = deps;
  const stem = await callStem(call.callId);
  const args = normalizeToolArguments(call.rawArguments);
  const decision = gateToolCall(call.name, snapshot, {
    snapshotId: snapshot.id,
    toolChoice: deps.toolChoice,
  });
  const binding = decision.kind === 'dispatch' ? decision.binding : null;
  const ids = {
    round,
    invocationId,
    callId: call.callId,
    toolId: binding?.tool.toolId ?? null,
    name: binding?.tool.nativeName ?? null,
    callName: call.name,
  };

  const argsPath = deps.audit.toolArgs(round, stem);
  await writeAudit(deps.workspace, argsPath, {
    ...ids,
    arguments: args.kind === 'object' ? args.value : null,
    rawArguments: args.kind === 'invalid' ? args.raw : undefined,
  });
  await recorder.emit({
    type: 'tool_call_requested',
    payload: { ...ids, snapshotId: snapshot.id, argumentsRef: argsPath },
  });
  if (decision.kind === 'fail') throw await failSystem(deps, ids, decision.error);

  const started = deps.clock.now();
  let outcome: ToolOutcome;
  if (decision.kind === 'reject') outcome = failure(decision.code, decision.message);
  else if (args.kind === 'invalid')
    outcome = failure('tool.invalid_arguments', invalidArgumentsMessage(args.raw));
  else outcome = await run(decision.binding, args.value, call, deps, ids);

  const result: AgentToolResult = {
    callId: call.callId,
    toolId: (ids.toolId ?? `unknown:${call.name}`) as ToolId,
    content: outcome.content,
    structured: outcome.structured,
    isError: outcome.isError,
    errorCode: outcome.errorCode,
    resourceRefs: outcome.resourceRefs,
    images: outcome.images,
  };
  const resultPath = deps.audit.toolResult(round, stem);
  await writeAudit(deps.workspace, resultPath, result);
  await recorder.emit({
    type: 'tool_result_stored',
    payload: { round, invocationId, callId: call.callId, path: resultPath },
  });
  const external = binding !== null && binding.tool.source !== 'builtin';
  const projected = external ? await projectExternal(result, resultPath, deps) : result;
  // External error text is untrusted and may be long: the journal points at the stored result.
  const message = !result.isError
    ? ''
    : external
      ? `External tool returned an error; full result: ${resultPath}`
      : result.content;
  await recorder.emit({
    type: result.isError ? 'tool_call_failed' : 'tool_call_completed',
    payload: {
      ...ids,
      isError: result.isError,
      errorCode: result.errorCode ?? null,
      message,
      elapsedMs: deps.clock.now() - started,
      resourceRefs: projected.resourceRefs,
    },
  });
  return projected;
}

/** MCP and extension results over the inline limit reach the model as a preview (tools.md §10). */
async function projectExternal(
  result: AgentToolResult,
  auditPath: WorkspacePath,
  deps: DispatchDeps,
): Promise<AgentToolResult> {
  const nameOf = (toolId: string) => deps.snapshot.byToolId.get(toolId as ToolId)?.callName;
  const projected = await projectLongResult(result, {
    limit: deps.inlineCharLimit ?? DEFAULT_INLINE_CHAR_LIMIT,
    workspace: deps.workspace,
    view: { path: auditPath.replace(/\.json$/, '.txt') as WorkspacePath, auditPath },
    readTool: nameOf(builtinToolId('workspace.read_file')),
    searchTool: nameOf(builtinToolId('workspace.search_files')),
  });
  if (projected.view) {
    await deps.recorder.emit({
      type: 'tool_result_readable_view_stored',
      payload: {
        invocationId: deps.invocationId,
        callId: result.callId,
        toolId: result.toolId,
        path: projected.view.path,
        auditPath: projected.view.auditPath,
      },
    });
  }
  return projected.result;
}

type CallIds = {
  round: number;
  invocationId: InvocationId;
  callId: string;
  toolId: ToolId | null;
  name: string | null;
  callName: string;
};

async function run(
  binding: SnapshotBinding,
  args: JsonObject,
  call: ModelToolCall,
  deps: DispatchDeps,
  ids: CallIds,
): Promise<ToolOutcome> {
  const { tool } = binding;
  let execute: () => Promise<ToolOutcome>;
  if (tool.source === 'builtin') {
    const builtin = tool.builtin!;
    const input = validateToolInput(builtin, args);
    if (!input.ok) return failure('tool.invalid_arguments', input.error);
    const context: ToolContext = {
      ...deps.toolContext,
      shellBuiltins: shellBuiltins(deps.snapshot, deps.toolContext),
      // Live only (never journaled): the person sees Python load during the run.
      onShellProgress: (progress) => deps.recorder.publish({ type: 'engine-progress', progress }),
    };
    execute = () => builtin.execute(input.value as never, context);
  } else {
    const executor = deps.external?.[tool.source];
    if (!executor) return failure('tool.unknown_tool', `\`${call.name}\` is not available right now.`);
    execute = () => executor.execute(binding, args, { callId: call.callId, signal: deps.toolContext.signal });
  }
  await deps.recorder.emit({
    type: 'tool_call_started',
    payload: { ...ids, toolId: tool.toolId, name: tool.nativeName },
  });
  if (deps.recorder.run.status !== 'dispatching_tool') await deps.recorder.setStatus('dispatching_tool');
  let outcome: ToolOutcome;
  try {
    outcome = await execute();
  } catch (e) {
    throw await failSystem(
      deps,
      ids,
      e instanceof HearthFailure
        ? e.error
        : { code: 'agent.internal_error', message: e instanceof Error ? e.message : String(e) },
    );
  }
  for (const effect of outcome.effects) {
    if (effect.type === 'commit' || effect.type === 'finish') {
      // The run performs commit and finish; it may turn the call into an error (e.g. finish before a commit).
      if (deps.onControl) outcome = await deps.onControl(effect, outcome);
    } else {
      await recordEffect(effect, deps);
    }
  }
  return outcome;
}

/**
 * A file change: journaled (intent, then the checkpoint that keeps a copy of the new content)
 * before the next call runs (tools.md §12.7).
 */
async function recordEffect(effect: ToolEffect, deps: DispatchDeps): Promise<void> {
  const { recorder, invocationId } = deps;
  let event;
  let reason: CheckpointReason;
  let paths: string[];
  if (effect.type === 'file-written') {
    const { type: _type, ...fields } = effect;
    [event] = await recorder.emit({ type: 'workspace_file_written', payload: { invocationId, ...fields } });
    [reason, paths] = ['tool_workspace_write', [effect.path]];
  } else if (effect.type === 'file-patched') {
    const { type: _type, ...fields } = effect;
    [event] = await recorder.emit({ type: 'workspace_patch_applied', payload: { invocationId, ...fields } });
    [reason, paths] = ['tool_workspace_patch', [effect.path]];
  } else if (effect.type === 'shell-changed') {
    [event] = await recorder.emit({
      type: 'workspace_shell_changed',
      payload: { invocationId, changes: effect.changes },
    });
    [reason, paths] = [
      'tool_workspace_shell',
      effect.changes.filter((c) => c.change === 'written').map((c) => c.path),
    ];
  } else {
    // Commit and finish are Chat-run effects, handled by the Chat loop (not bound in Sessions).
    return;
  }
  if (!deps.checkpoint || paths.length === 0) return;
  await recorder.setStatus('creating_checkpoint');
  const { checkpointId } = await deps.checkpoint(reason, paths, event!.seq);
  await recorder.emit({ type: 'checkpoint_created', payload: { checkpointId, reason } });
}

/** Journals a system failure of this call at error level and returns it to be thrown. */
async function failSystem(deps: DispatchDeps, ids: CallIds, error: HearthError): Promise<HearthFailure> {
  await deps.recorder.emit({
    type: 'tool_call_failed',
    level: 'error',
    payload: {
      ...ids,
      isError: true,
      errorCode: error.code,
      message: error.message,
      elapsedMs: 0,
      resourceRefs: [],
    },
  });
  return new HearthFailure(error);
}
