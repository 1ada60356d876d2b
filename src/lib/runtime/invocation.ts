import type { InvocationPayload } from '$lib/domain/events';
import { ROOT_INVOCATION } from '$lib/domain/run';
import type { RunRecorder } from './run-recorder';

/** The run's root invocation, journaled as it starts and ends (runtime.md §1.4, §1.16). */
export function rootInvocation(recorder: RunRecorder, profileId: string) {
  const payload = (status: InvocationPayload['status']): InvocationPayload => ({
    invocationId: ROOT_INVOCATION,
    parentInvocationId: null,
    profileId,
    kind: 'root',
    status,
    exitPolicy: 'run_finish_allowed',
  });
  return {
    start: () =>
      recorder.emit(
        { type: 'agent_invocation_created', payload: payload('created') },
        { type: 'agent_invocation_started', payload: payload('running') },
      ),
    end: (outcome: 'completed' | 'failed' | 'cancelled') =>
      recorder.emit({ type: `agent_invocation_${outcome}`, payload: payload(outcome) }),
  };
}
