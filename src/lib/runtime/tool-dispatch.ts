import { HearthFailure, type HearthError } from '$lib/domain/errors';
import type { NewRunEvent, RunEvent } from '$lib/domain/events';
import type { JsonObject } from '$lib/domain/json';
import type { ToolChoice } from '$lib/domain/model';
import {
  invalidArgumentsMessage,
  normalizeToolArguments,
  type ToolArguments,
} from '$lib/domain/tool-arguments';
import { builtinToolId, type ToolId } from '$lib/domain/tool-id';
import { withImageNotes, type AgentToolResult } from '$lib/domain/tool-result';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { ImageNormalizer } from '$lib/ports/images';
import type { Workspace } from '$lib/ports/workspace';
import {
  failure,
  isControlEffect,
  type ControlEffect,
  type FileEffect,
  type NestedCallRequest,
  type ToolContext,
  type ToolOutcome,
} from '$lib/tools/tool';
import type { ApprovalDesk } from './approvals';
import { callStem } from './audit-paths';
import type { Checkpointer, CheckpointReason } from './checkpoints';
import type { Invocation } from './invocation';
import type { ModelToolCall } from './model-turn';
import { DEFAULT_INLINE_CHAR_LIMIT, isLongResult, projectLongResult } from './result-projection';
import { ingestToolImages } from './tool-images';
import type { RunLog, RunStep } from './run-recorder';
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
  images: ImageNormalizer;
  /** Records of the turn that go with this call's first step (the response, for its first call). */
  opening?: (step: RunStep) => void;
  /** Adds the result the model reads to the conversation, in the step that records the call's end. */
  addResult: (step: RunStep, result: AgentToolResult) => void;
}

/**
 * The steps of one call. What opens a call (its arguments record, `tool_call_requested`) and what
 * a file change leaves (its checkpoint) wait for the call's next step, so a call costs as few
 * journal transactions as its order of events allows.
 */
class CallSteps {
  #pending: ((step: RunStep) => void)[] = [];

  constructor(private readonly log: RunLog) {}

  later(build: (step: RunStep) => void): void {
    this.#pending.push(build);
  }

  step(build: (step: RunStep) => void = () => {}): Promise<RunEvent[]> {
    const pending = this.#pending;
    this.#pending = [];
    return this.log.step((s) => {
      for (const b of pending) b(s);
      build(s);
    });
  }
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
 * checkpoints), hand control effects to the run, store and journal the result, and add it to the
 * conversation with the call's last step. Recoverable problems become error results the model
 * reads; system failures are journaled and thrown. The tool runs with `callTool`, for the calls
 * it makes itself (the shell's `mcp.invoke`), which take this same path.
 */
export async function dispatchToolCall(
  call: ModelToolCall,
  round: number,
  deps: DispatchDeps,
): Promise<void> {
  await runCall(call, normalizeToolArguments(call.rawArguments), round, deps, null);
}

/**
 * One call, the model's or (`nested`) one a tool makes from inside its own call: that one gets
 * its id from its caller's, runs with the caller's signal, and its result goes back to the caller
 * whole, not to the conversation. An outcome that is unknown (`mcp.call_outcome_unknown`) is then
 * a result the caller reports (the shell's exit 124) rather than the end of the run.
 */
async function runCall(
  call: { callId: string; name: string },
  args: ToolArguments,
  round: number,
  deps: DispatchDeps,
  nested: NestedCallRequest | null,
): Promise<ToolOutcome> {
  const { log, invocation } = deps;
  const { snapshot, audit } = invocation;
  const stem = await callStem(call.callId);
  const decision = gateToolCall(call.name, snapshot, {
    snapshotId: snapshot.id,
    toolChoice: nested ? 'auto' : deps.toolChoice,
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
  const steps = new CallSteps(log);
  if (deps.opening && !nested) steps.later(deps.opening);
  steps.later((s) => {
    s.keep(argsPath, {
      ...ids,
      arguments: args.kind === 'object' ? args.value : null,
      rawArguments: args.kind === 'invalid' ? args.raw : undefined,
    });
    s.emit({
      type: 'tool_call_requested',
      payload: { ...ids, snapshotId: snapshot.id, argumentsRef: argsPath },
    });
  });
  if (decision.kind === 'fail') throw await failSystem(steps, ids, decision.error);

  // From the call's start: a wait for approval is not the tool's time.
  const timing = { started: deps.clock.now() };
  let outcome: ToolOutcome;
  if (decision.kind === 'reject') outcome = failure(decision.code, decision.message);
  else if (args.kind === 'invalid')
    outcome = failure('tool.invalid_arguments', invalidArgumentsMessage(args.raw));
  else {
    const context: ToolContext = nested
      ? { ...deps.context, signal: nested.signal }
      : { ...deps.context, callTool: nestedCalls(call.callId, round, deps) };
    outcome = await execute(decision.binding, args.value, argsPath, { ...deps, context }, ids, steps, {
      timing,
      nested,
    });
  }

  const resultPath = audit.toolResult(round, stem);
  const images = await ingestToolImages(outcome.images, {
    normalizer: deps.images,
    workspace: deps.workspace,
    resultPath,
  });
  const result: AgentToolResult = {
    callId: call.callId,
    toolId: (ids.toolId ?? `unknown:${call.name}`) as ToolId,
    content: withImageNotes(outcome.content, images.notes),
    structured: outcome.structured,
    isError: outcome.isError,
    errorCode: outcome.errorCode,
    resourceRefs: outcome.resourceRefs,
    images: images.refs,
  };
  steps.later((s) => {
    s.keep(resultPath, result);
    s.emit({
      type: 'tool_result_stored',
      payload: { round, invocationId: invocation.id, callId: call.callId, path: resultPath },
    });
  });
  const external = binding !== null && binding.tool.source !== 'builtin';
  const long = external && !nested && isLongResult(result, deps.inlineCharLimit ?? DEFAULT_INLINE_CHAR_LIMIT);
  // A long external result's readable view is written after its record is (it points at it).
  if (long) await steps.step();
  const projected = long ? await projectExternal(result, resultPath, deps, steps) : result;
  // External error text is untrusted and may be long: the journal points at the stored result.
  const message = !result.isError
    ? ''
    : external
      ? `External tool returned an error; full result: ${resultPath}`
      : result.content;
  await steps.step((s) => {
    s.emit({
      type: result.isError ? 'tool_call_failed' : 'tool_call_completed',
      payload: {
        ...ids,
        isError: result.isError,
        errorCode: result.errorCode ?? null,
        message,
        elapsedMs: deps.clock.now() - timing.started,
        resourceRefs: projected.resourceRefs,
        ...(images.notes.length ? { imagesNotKept: images.notes.length } : {}),
      },
    });
    if (!nested) deps.addResult(s, projected);
  });
  return outcome;
}

/** The calls a tool makes from inside the model's call `callId`: `<callId>/1`, `<callId>/2`, … */
function nestedCalls(callId: string, round: number, deps: DispatchDeps): ToolContext['callTool'] {
  let count = 0;
  return (request) =>
    runCall(
      { callId: `${callId}/${++count}`, name: request.callName },
      { kind: 'object', value: request.arguments },
      round,
      deps,
      request,
    );
}

/** MCP and extension results over the inline limit reach the model as a preview (tools.md §10). */
async function projectExternal(
  result: AgentToolResult,
  auditPath: WorkspacePath,
  deps: DispatchDeps,
  steps: CallSteps,
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
  const view = projected.view;
  if (view) {
    steps.later((s) =>
      s.emit({
        type: 'tool_result_readable_view_stored',
        payload: {
          invocationId: deps.invocation.id,
          callId: result.callId,
          toolId: result.toolId,
          path: view.path,
          auditPath: view.auditPath,
        },
      }),
    );
  }
  return projected.result;
}

async function execute(
  binding: SnapshotBinding,
  args: JsonObject,
  argsPath: WorkspacePath,
  deps: DispatchDeps,
  ids: CallIds,
  steps: CallSteps,
  { timing, nested }: { timing: { started: number }; nested: NestedCallRequest | null },
): Promise<ToolOutcome> {
  const { tool } = binding;
  const provider = deps.providers.get(tool.source);
  if (!provider) return failure('tool.unknown_tool', `\`${ids.callName}\` is not available right now.`);
  const checked = provider.check(tool, args);
  if (!checked.ok) return checked.outcome;

  let input = checked.input;
  if (approvalFor(binding, deps.approvals) === 'ask') {
    nested?.waiting?.(true);
    const asked = await ask(binding, argsPath, deps, ids, steps).finally(() => nested?.waiting?.(false));
    if ('refused' in asked) return asked.refused;
    input = asked.input ?? input;
  }

  await steps.step((s) => {
    s.emit({ type: 'tool_call_started', payload: { ...ids, toolId: tool.toolId, name: tool.nativeName } });
    s.status('dispatching_tool');
  });
  timing.started = deps.clock.now();
  let outcome: ToolOutcome;
  try {
    outcome = await provider.execute(tool, input, {
      ...deps.context,
      call: { invocationId: ids.invocationId, callId: ids.callId },
    });
  } catch (e) {
    const error: HearthError =
      e instanceof HearthFailure
        ? e.error
        : { code: 'agent.internal_error', message: e instanceof Error ? e.message : String(e) };
    // The calling tool tells the model the call may have run (tools.md §13.12).
    if (nested && error.code === 'mcp.call_outcome_unknown') return failure(error.code, error.message);
    throw await failSystem(steps, ids, error);
  }
  const control: ControlEffect[] = [];
  for (const effect of outcome.effects) {
    if (isControlEffect(effect)) control.push(effect);
    else await recordFileEffect(effect, deps, steps);
  }
  if (control.length === 0) return outcome;
  await steps.step();
  return deps.control(control, outcome);
}

/**
 * The gate said *ask* (D11, D20): the call waits, with the run, for the person. Returns what the
 * model reads when it does not run (denied, or edited into invalid arguments), or once approved
 * the input as the person edited it (none: as the model sent it). Stopping the run while it
 * waits cancels the run.
 */
async function ask(
  binding: SnapshotBinding,
  argsPath: WorkspacePath,
  deps: DispatchDeps,
  ids: CallIds,
  steps: CallSteps,
): Promise<{ refused: ToolOutcome } | { input?: unknown }> {
  const { tool } = binding;
  const approvalId = deps.newApprovalId();
  const base = { invocationId: ids.invocationId, callId: ids.callId, approvalId };
  await steps.step((s) => {
    s.status('awaiting_approval');
    s.emit({
      type: 'tool_call_awaiting_approval',
      payload: {
        ...base,
        round: ids.round,
        toolId: tool.toolId,
        name: tool.nativeName,
        callName: ids.callName,
        source: tool.origin,
        argumentsRef: argsPath,
        ...(tool.hints ? { hints: tool.hints } : {}),
      },
    });
  });
  const answer = await deps.approvals.ask(
    {
      approvalId,
      invocationId: ids.invocationId,
      callId: ids.callId,
      toolId: tool.toolId,
      name: tool.nativeName,
      callName: ids.callName,
      origin: tool.origin,
      argumentsRef: argsPath,
      ...(tool.hints ? { hints: tool.hints } : {}),
    },
    deps.context.signal,
  );
  if (answer.decision === 'deny') {
    steps.later((s) => s.emit({ type: 'tool_call_denied', payload: base }));
    return {
      refused: failure(
        'tool.denied',
        `The person declined this call of \`${ids.callName}\`. Do not repeat it unchanged: continue without it, or say what you need it for.`,
      ),
    };
  }
  if (answer.decision === 'always') {
    await deps.alwaysAllow(tool.toolId);
    if (tool.approval === 'ask') await deps.providers.get(tool.source)?.alwaysAllow?.(tool);
  }
  const always = answer.decision === 'always';
  const edited = answer.arguments;
  if (!edited) {
    steps.later((s) => s.emit({ type: 'tool_call_approved', payload: { ...base, always } }));
    return {};
  }
  // The arguments the person approved are kept beside the model's, and checked like them.
  const editedRef = argsPath.replace(/\.json$/, '.approved.json') as WorkspacePath;
  steps.later((s) => {
    s.keep(editedRef, { ...ids, arguments: edited });
    s.emit({ type: 'tool_call_approved', payload: { ...base, always, argumentsRef: editedRef } });
  });
  const checked = deps.providers.get(tool.source)!.check(tool, edited);
  if (!checked.ok) {
    const why = checked.outcome.content;
    return {
      refused: failure(
        'tool.invalid_arguments',
        `The arguments as the person edited them are not valid: ${why}`,
      ),
    };
  }
  return { input: checked.input };
}

/**
 * A file change: its event and the checkpoint that keeps the new content are journaled together
 * with the call's next step, before the next call runs (tools.md §12.7).
 */
async function recordFileEffect(effect: FileEffect, deps: DispatchDeps, steps: CallSteps): Promise<void> {
  const event = fileEvent(effect, deps.invocation.id);
  const [reason, paths]: [CheckpointReason, string[]] =
    effect.type === 'file-written'
      ? ['tool_workspace_write', [effect.path]]
      : effect.type === 'file-patched'
        ? ['tool_workspace_patch', [effect.path]]
        : ['tool_workspace_shell', effect.changes.filter((c) => c.change === 'written').map((c) => c.path)];
  const known = effect.type === 'shell-changed' ? undefined : new Map([[effect.path, effect.content]]);
  const taken = paths.length > 0 ? await deps.checkpoint(reason, paths, known) : null;
  steps.later((s) => {
    const [change] = s.emit(event);
    taken?.record(s, change!);
  });
}

function fileEvent(effect: FileEffect, invocationId: string): NewRunEvent {
  switch (effect.type) {
    case 'file-written': {
      const { type: _type, content: _content, ...fields } = effect;
      return { type: 'workspace_file_written', payload: { invocationId, ...fields } };
    }
    case 'file-patched': {
      const { type: _type, content: _content, ...fields } = effect;
      return { type: 'workspace_patch_applied', payload: { invocationId, ...fields } };
    }
    case 'shell-changed':
      return { type: 'workspace_shell_changed', payload: { invocationId, changes: effect.changes } };
  }
}

/** Journals a system failure of this call at error level and returns it to be thrown. */
async function failSystem(steps: CallSteps, ids: CallIds, error: HearthError): Promise<HearthFailure> {
  await steps.step((s) =>
    s.emit({
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
    }),
  );
  return new HearthFailure(error);
}
