import { HearthFailure } from '$lib/domain/errors';
import type { InvocationId } from '$lib/domain/run';
import { invalidArgumentsMessage, normalizeToolArguments } from '$lib/domain/tool-arguments';
import type { ToolId } from '$lib/domain/tool-id';
import type { AgentToolResult } from '$lib/domain/tool-result';
import { failure, type ToolContext, type ToolOutcome } from '$lib/tools/tool';
import { validateToolInput } from '$lib/tools/validate';
import type { Workspace } from '$lib/ports/workspace';
import type { AuditPaths } from './audit-paths';
import { callStem } from './audit-paths';
import type { ModelToolCall } from './model-turn';
import type { RunRecorder } from './run-recorder';
import { callNames, type ToolSnapshot } from './tool-snapshot';

export interface DispatchDeps {
  snapshot: ToolSnapshot;
  toolContext: ToolContext;
  workspace: Workspace;
  audit: AuditPaths;
  recorder: RunRecorder;
  invocationId: InvocationId;
  clock: { now(): number };
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
 * One call, start to finish (tools.md §7.1): audit the arguments, decode the call name through
 * the snapshot, normalize and validate arguments, execute, journal effects, store the result.
 * Recoverable problems become error results; system failures throw after being journaled.
 */
export async function dispatchToolCall(
  call: ModelToolCall,
  round: number,
  deps: DispatchDeps,
): Promise<AgentToolResult> {
  const { recorder, invocationId, snapshot } = deps;
  const stem = await callStem(call.callId);
  const args = normalizeToolArguments(call.rawArguments);
  const tool = snapshot.byCallName.get(call.name);
  const toolId = (tool?.id ?? null) as ToolId | null;
  const argsPath = deps.audit.toolArgs(round, stem);
  await writeAudit(deps.workspace, argsPath, {
    callId: call.callId,
    name: call.name,
    toolId,
    arguments: args.kind === 'object' ? args.value : null,
    rawArguments: args.kind === 'invalid' ? args.raw : undefined,
  });
  await recorder.emit({
    type: 'tool_call_requested',
    payload: { round, invocationId, callId: call.callId, toolId, name: call.name, argumentsRef: argsPath },
  });

  const started = deps.clock.now();
  let outcome: ToolOutcome;
  if (!tool) {
    const available = callNames(snapshot)
      .map((n) => `\`${n}\``)
      .join(', ');
    outcome = failure(
      'tool.unknown_tool',
      `There is no tool named \`${call.name}\`. Available tools: ${available}.`,
    );
  } else if (args.kind === 'invalid') {
    outcome = failure('tool.invalid_arguments', invalidArgumentsMessage(args.raw));
  } else {
    const input = validateToolInput(tool, args.value);
    if (!input.ok) {
      outcome = failure('tool.invalid_arguments', input.error);
    } else {
      await recorder.emit({
        type: 'tool_call_started',
        payload: { round, invocationId, callId: call.callId, toolId: tool.id, name: call.name },
      });
      if (recorder.run.status !== 'dispatching_tool') await recorder.setStatus('dispatching_tool');
      outcome = await executeTool(tool, input.value, deps.toolContext, { round, call, deps });
      for (const effect of outcome.effects) {
        await recorder.emit({ type: 'workspace_file_written', payload: { invocationId, ...effect } });
      }
    }
  }

  const result: AgentToolResult = {
    callId: call.callId,
    toolId: (toolId ?? `unknown:${call.name}`) as ToolId,
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
  await recorder.emit({
    type: result.isError ? 'tool_call_failed' : 'tool_call_completed',
    payload: {
      round,
      invocationId,
      callId: call.callId,
      toolId,
      name: call.name,
      isError: result.isError,
      errorCode: result.errorCode ?? null,
      message: result.isError ? result.content : '',
      elapsedMs: deps.clock.now() - started,
      resourceRefs: result.resourceRefs,
    },
  });
  return result;
}

async function executeTool(
  tool: NonNullable<ReturnType<ToolSnapshot['byCallName']['get']>>,
  input: unknown,
  ctx: ToolContext,
  at: { round: number; call: ModelToolCall; deps: DispatchDeps },
): Promise<ToolOutcome> {
  try {
    return await tool.execute(input as never, ctx);
  } catch (e) {
    const error =
      e instanceof HearthFailure
        ? e.error
        : { code: 'agent.internal_error' as const, message: e instanceof Error ? e.message : String(e) };
    await at.deps.recorder.emit({
      type: 'tool_call_failed',
      level: 'error',
      payload: {
        round: at.round,
        invocationId: at.deps.invocationId,
        callId: at.call.callId,
        toolId: tool.id,
        name: at.call.name,
        isError: true,
        errorCode: error.code,
        message: error.message,
        elapsedMs: 0,
        resourceRefs: [],
      },
    });
    throw new HearthFailure(error);
  }
}
