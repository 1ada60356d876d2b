import type { RunEvent, RunEventPayloads, RunEventType } from '$lib/domain/events';
import type { RunId } from '$lib/domain/run';

/** Journal events for UI tests: numbered in the order they are made, stamped with an invocation. */
export function journal() {
  let seq = 0;
  const ev = <T extends RunEventType>(
    type: T,
    payload: RunEventPayloads[T],
    invocationId?: string,
  ): RunEvent =>
    ({
      runId: 'run_1' as RunId,
      seq: ++seq,
      timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(),
      level: 'info',
      type,
      ...(invocationId ? { invocationId } : {}),
      payload,
    }) as RunEvent;

  /** A model round of `inv`: request, completion, then one tool call per name, each completed. */
  const round = (inv: string, n: number, tools: string[] = []): RunEvent[] => [
    ev(
      'model_request_created',
      {
        round: n,
        invocationId: inv,
        request: { provider: 'test', model: 'm', messageCount: 1, toolCount: 1 },
      },
      inv,
    ),
    ev(
      'model_completed',
      {
        round: n,
        invocationId: inv,
        modelResponsePath: `runs/run_1/${inv}/round-${n}.json`,
        toolCallCount: tools.length,
        textChars: 0,
        textWords: 0,
        hasReasoning: false,
        reasoningChars: 0,
        finishReason: 'tool-calls',
        usage: {},
      },
      inv,
    ),
    ...tools.flatMap((name, i) => toolCall(inv, n, `${inv}-${n}-${i}`, name)),
  ];

  const toolCall = (inv: string, n: number, callId: string, callName: string, nativeName = callName) => [
    ev(
      'tool_call_requested',
      {
        round: n,
        invocationId: inv,
        callId,
        toolId: `builtin:${nativeName}`,
        snapshotId: 'snap',
        name: nativeName,
        callName,
        argumentsRef: `args/${callId}.json`,
      },
      inv,
    ),
    ev(
      'tool_call_completed',
      {
        round: n,
        invocationId: inv,
        callId,
        toolId: `builtin:${nativeName}`,
        name: nativeName,
        callName,
        isError: false,
        errorCode: null,
        message: 'ok',
        elapsedMs: 1,
        resourceRefs: [],
      },
      inv,
    ),
  ];

  const registered = (taskId: string, caller: string, child: string, agentId: string, title: string | null) =>
    ev(
      'agent_task_registered',
      {
        taskId,
        agentId,
        callerInvocationId: caller,
        childInvocationId: child,
        workspaceKey: agentId,
        title,
      },
      caller,
    );

  const invocation = (
    type:
      | 'agent_invocation_created'
      | 'agent_invocation_started'
      | 'agent_invocation_completed'
      | 'agent_invocation_failed',
    inv: string,
    parent: string | null,
    profileId: string,
  ) =>
    ev(
      type,
      {
        invocationId: inv,
        parentInvocationId: parent,
        profileId,
        kind: parent ? 'subagent' : 'root',
        status:
          type === 'agent_invocation_created'
            ? 'created'
            : type === 'agent_invocation_started'
              ? 'running'
              : type === 'agent_invocation_completed'
                ? 'completed'
                : 'failed',
        exitPolicy: parent ? 'task_return_required' : 'run_finish_allowed',
      },
      inv,
    );

  return { ev, round, toolCall, registered, invocation };
}
