import type { InvocationPayload } from '$lib/domain/events';
import { ROOT_INVOCATION, type InvocationId } from '$lib/domain/run';
import { ReadState } from '$lib/tools/workspace/read-state';
import type { AuditPaths } from './audit-paths';
import type { RunLog } from './run-recorder';
import type { ExitPolicy, ToolSnapshot } from './tool-snapshot';

export type InvocationKind = InvocationPayload['kind'];
export type InvocationStatus = InvocationPayload['status'];

/**
 * One agent at work inside a run (runtime.md §1.1): who it is and who started it, its frozen
 * tool surface, how it may end, where its records go and what it has read. The root invocation
 * is the run's own agent; delegated and handoff invocations come later, as values of the same kind.
 */
export interface Invocation {
  readonly id: InvocationId;
  readonly parentId: InvocationId | null;
  readonly kind: InvocationKind;
  readonly profileId: string;
  readonly exitPolicy: ExitPolicy;
  readonly snapshot: ToolSnapshot;
  readonly audit: AuditPaths;
  readonly readState: ReadState;
  status: InvocationStatus;
}

/** The run's root invocation: the foreground chain's first agent. */
export const rootInvocation = (input: {
  profileId: string;
  snapshot: ToolSnapshot;
  audit: AuditPaths;
}): Invocation => ({
  id: ROOT_INVOCATION,
  parentId: null,
  kind: 'root',
  profileId: input.profileId,
  exitPolicy: input.snapshot.exitPolicy,
  snapshot: input.snapshot,
  audit: input.audit,
  readState: new ReadState(),
  status: 'created',
});

const payload = (inv: Invocation): InvocationPayload => ({
  invocationId: inv.id,
  parentInvocationId: inv.parentId,
  profileId: inv.profileId,
  kind: inv.kind,
  status: inv.status,
  exitPolicy: inv.exitPolicy,
});

/** Journals the invocation as created and started (runtime.md §1.4). */
export async function startInvocation(log: RunLog, inv: Invocation): Promise<void> {
  const created = payload(inv);
  inv.status = 'running';
  await log.emit(
    { type: 'agent_invocation_created', payload: { ...created, status: 'created' } },
    { type: 'agent_invocation_started', payload: payload(inv) },
  );
}

/** Journals how the invocation ended. */
export async function endInvocation(
  log: RunLog,
  inv: Invocation,
  outcome: 'completed' | 'failed' | 'cancelled' | 'transferred',
): Promise<void> {
  inv.status = outcome;
  await log.emit({ type: `agent_invocation_${outcome}`, payload: payload(inv) });
}
