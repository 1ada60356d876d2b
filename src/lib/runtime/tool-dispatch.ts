import { HearthFailure, type HearthError } from '$lib/domain/errors';
import type { NewRunEvent } from '$lib/domain/events';
import type { JsonObject } from '$lib/domain/json';
import type { ToolChoice } from '$lib/domain/model';
import { invalidArgumentsMessage, normalizeToolArguments } from '$lib/domain/tool-arguments';
import { builtinToolId, type ToolId } from '$lib/domain/tool-id';
import type { AgentToolResult } from '$lib/domain/tool-result';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';
import {
  failure,
  isControlEffect,
  type ControlEffect,
  type FileEffect,
  type ToolContext,
  type ToolOutcome,
} from '$lib/tools/tool';
import type { ApprovalDesk } from './approvals';
import { callStem } from './audit-paths';
import type { Checkpointer, CheckpointReason } from './checkpoints';
import type { Invocation } from './invocation';
import type { ModelToolCall } from './model-turn';
import { DEFAULT_INLINE_CHAR_LIMIT, projectLongResult } from './result-projection';
import type { RunLog } from './run-recorder';
import type { ToolProviders } from './tool-catalog';
import { approvalFor, gateToolCall } from './tool-gate';
import type { SnapshotBinding } from './tool-snapshot';

export interface DispatchDeps {
  invocation: Invocation;
  log: RunLog;
  providers: ToolProviders;
  toolChoice: ToolChoice;
  /** The context every tool of this invocation runs with. */
  context: ToolContext;
  workspace: Workspace;
  clock: { now(): number };
  checkpoint: Checkpointer;
  /** Where calls set to Ask wait for the person. */
  approvals: ApprovalDesk;
  newApprovalId: () => string;
  /** "Always allow": the profile stops asking about this tool. */
  alwaysAllow: (toolId: ToolId) => Promise<void>;
  /** Performs the call's control effects (runtime/control.ts); returns the outcome to record. */
  control: (effects: ControlEffect[], outcome: ToolOutcome) => Promise<ToolOutcome>;
  /** The profile's `tools.externalResultInlineCharLimit`. */
  inlineCharLimit?: number;
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2));

/**
 * Audit files are written once: an existing file stays. Writing the same record again (a resumed
 * run making a call that never started) is a no-op; a different one is a system failure.
 */
async function writeAudit(workspace: Workspace, path: Parameters<Workspace['write']>[0], value: unknown) {
  const bytes = encode(value);
  const written = await workspace.write(path, bytes, { kind: 'absent' });
  if (written.ok) return;
  if (written.error.code === 'workspace.conflict') {
    const existing = await workspace.read(path);
    if (existing.ok && new TextDecoder().decode(existing.value) === new TextDecoder().decode(bytes)) return;
  }
  throw new HearthFailure({
    code: 'storage.failed',
    message: `Could not store ${path}: ${written.error.message}`,
  });
}

type CallIds = {
  round: number;
  invocationId: string;
  callId: string;
  toolId: ToolId | null;
  name: string | null;
  callName: string;
};

/**
 * One call, start to finish (tools.md §7.1): audit the raw arguments, pass the gate, normalize
 * arguments once (ToolArguments), let the tool's provider check them, ask the person when the
 * tool is set to Ask, execute through the provider, journal file effects (with their
 * checkpoints), hand control effects to the run, store and journal the result. Recoverable
 * problems become error results the model reads; system failures are journaled and thrown.
 */
export async function dispatchToolCall(
  call: ModelToolCall,
  round: number,
  deps: DispatchDeps,
): Promise<AgentToolResult> {
  const { log, invocation } = deps;
  const { snapshot, audit } = invocation;
  const stem = await callStem(call.callId);
  const args = normalizeToolArguments(call.rawArguments);
  const decision = gateToolCall(call.name, snapshot, {
    snapshotId: snapshot.id,
    toolChoice: deps.toolChoice,
  });
  const binding = decision.kind === 'dispatch' ? decision.binding : null;
  const ids: CallIds = {
    round,
    invocationId: invocation.id,
    callId: call.callId,
    toolId: binding?.tool.toolId ?? null,
    name: binding?.tool.nativeName ?? null,
    callName: call.name,
  };

  const argsPath = audit.toolArgs(round, stem);
  await writeAudit(deps.workspace, argsPath, {
    ...ids,
    arguments: args.kind === 'object' ? args.value : null,
    rawArguments: args.kind === 'invalid' ? args.raw : undefined,
  });
  await log.emit({
    type: 'tool_call_requested',
    payload: { ...ids, snapshotId: snapshot.id, argumentsRef: argsPath },
  });
  if (decision.kind === 'fail') throw await failSystem(deps, ids, decision.error);

  const started = deps.clock.now();
  let outcome: ToolOutcome;
  if (decision.kind === 'reject') outcome = failure(decision.code, decision.message);
  else if (args.kind === 'invalid')
    outcome = failure('tool.invalid_arguments', invalidArgumentsMessage(args.raw));
  else outcome = await execute(decision.binding, args.value, argsPath, deps, ids);

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
  const resultPath = audit.toolResult(round, stem);
  await writeAudit(deps.workspace, resultPath, result);
  await log.emit({
    type: 'tool_result_stored',
    payload: { round, invocationId: invocation.id, callId: call.callId, path: resultPath },
  });
  const external = binding !== null && binding.tool.source !== 'builtin';
  const projected = external ? await projectExternal(result, resultPath, deps) : result;
  // External error text is untrusted and may be long: the journal points at the stored result.
  const message = !result.isError
    ? ''
    : external
      ? `External tool returned an error; full result: ${resultPath}`
      : result.content;
  await log.emit({
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
  const { snapshot } = deps.invocation;
  const nameOf = (toolId: string) => snapshot.byToolId.get(toolId as ToolId)?.callName;
  const projected = await projectLongResult(result, {
    limit: deps.inlineCharLimit ?? DEFAULT_INLINE_CHAR_LIMIT,
    workspace: deps.workspace,
    view: { path: auditPath.replace(/\.json$/, '.txt') as WorkspacePath, auditPath },
    readTool: nameOf(builtinToolId('workspace.read_file')),
    searchTool: nameOf(builtinToolId('workspace.search_files')),
  });
  if (projected.view) {
    await deps.log.emit({
      type: 'tool_result_readable_view_stored',
      payload: {
        invocationId: deps.invocation.id,
        callId: result.callId,
        toolId: result.toolId,
        path: projected.view.path,
        auditPath: projected.view.auditPath,
      },
    });
  }
  return projected.result;
}

async function execute(
  binding: SnapshotBinding,
  args: JsonObject,
  argsPath: WorkspacePath,
  deps: DispatchDeps,
  ids: CallIds,
): Promise<ToolOutcome> {
  const { tool } = binding;
  const provider = deps.providers.get(tool.source);
  if (!provider) return failure('tool.unknown_tool', `\`${ids.callName}\` is not available right now.`);
  const checked = provider.check(tool, args);
  if (!checked.ok) return checked.outcome;

  if (approvalFor(binding, deps.approvals) === 'ask') {
    const denied = await ask(binding, argsPath, deps, ids);
    if (denied) return denied;
  }

  await deps.log.emit({
    type: 'tool_call_started',
    payload: { ...ids, toolId: tool.toolId, name: tool.nativeName },
  });
  if (deps.log.run.status !== 'dispatching_tool') await deps.log.setStatus('dispatching_tool');
  let outcome: ToolOutcome;
  try {
    outcome = await provider.execute(tool, checked.input, deps.context);
  } catch (e) {
    throw await failSystem(
      deps,
      ids,
      e instanceof HearthFailure
        ? e.error
        : { code: 'agent.internal_error', message: e instanceof Error ? e.message : String(e) },
    );
  }
  const control: ControlEffect[] = [];
  for (const effect of outcome.effects) {
    if (isControlEffect(effect)) control.push(effect);
    else await recordFileEffect(effect, deps);
  }
  return control.length > 0 ? deps.control(control, outcome) : outcome;
}

/**
 * The gate said *ask* (D20): the call waits, with the run, for the person. Returns the denial
 * the model reads, or null once approved. Stopping the run while it waits cancels the run.
 */
async function ask(
  binding: SnapshotBinding,
  argsPath: WorkspacePath,
  deps: DispatchDeps,
  ids: CallIds,
): Promise<ToolOutcome | null> {
  const { tool } = binding;
  const approvalId = deps.newApprovalId();
  const base = { invocationId: ids.invocationId, callId: ids.callId, approvalId };
  await deps.log.setStatus('awaiting_approval');
  await deps.log.emit({
    type: 'tool_call_awaiting_approval',
    payload: {
      ...base,
      round: ids.round,
      toolId: tool.toolId,
      name: tool.nativeName,
      callName: ids.callName,
      source: tool.origin,
      argumentsRef: argsPath,
    },
  });
  const decision = await deps.approvals.ask(
    {
      approvalId,
      invocationId: ids.invocationId,
      callId: ids.callId,
      toolId: tool.toolId,
      name: tool.nativeName,
      callName: ids.callName,
      origin: tool.origin,
      argumentsRef: argsPath,
    },
    deps.context.signal,
  );
  if (decision === 'deny') {
    await deps.log.emit({ type: 'tool_call_denied', payload: base });
    return failure(
      'tool.denied',
      `The person declined this call of \`${ids.callName}\`. Do not repeat it unchanged: continue without it, or say what you need it for.`,
    );
  }
  if (decision === 'always') await deps.alwaysAllow(tool.toolId);
  await deps.log.emit({ type: 'tool_call_approved', payload: { ...base, always: decision === 'always' } });
  return null;
}

/**
 * A file change: journaled (intent, then the checkpoint that keeps a copy of the new content)
 * before the next call runs (tools.md §12.7).
 */
async function recordFileEffect(effect: FileEffect, deps: DispatchDeps): Promise<void> {
  const [event] = await deps.log.emit(fileEvent(effect, deps.invocation.id));
  const [reason, paths]: [CheckpointReason, string[]] =
    effect.type === 'file-written'
      ? ['tool_workspace_write', [effect.path]]
      : effect.type === 'file-patched'
        ? ['tool_workspace_patch', [effect.path]]
        : ['tool_workspace_shell', effect.changes.filter((c) => c.change === 'written').map((c) => c.path)];
  if (paths.length > 0) await deps.checkpoint(reason, paths, event!.seq);
}

function fileEvent(effect: FileEffect, invocationId: string): NewRunEvent {
  switch (effect.type) {
    case 'file-written': {
      const { type: _type, ...fields } = effect;
      return { type: 'workspace_file_written', payload: { invocationId, ...fields } };
    }
    case 'file-patched': {
      const { type: _type, ...fields } = effect;
      return { type: 'workspace_patch_applied', payload: { invocationId, ...fields } };
    }
    case 'shell-changed':
      return { type: 'workspace_shell_changed', payload: { invocationId, changes: effect.changes } };
  }
}

/** Journals a system failure of this call at error level and returns it to be thrown. */
async function failSystem(deps: DispatchDeps, ids: CallIds, error: HearthError): Promise<HearthFailure> {
  await deps.log.emit({
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
