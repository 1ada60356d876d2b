import { sha256Hex } from '$lib/domain/hash';
import { ROOT_INVOCATION, type InvocationId, type RunId } from '$lib/domain/run';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';

/** `call_` + hex of the first 8 bytes of SHA-256(callId): provider ids never become file names. */
export const callStem = async (callId: string): Promise<string> =>
  `call_${(await sha256Hex(callId)).slice(0, 16)}`;

const round3 = (round: number) => String(round).padStart(3, '0');

const path = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new Error(`internal: bad audit path ${raw}`);
  return parsed.value;
};

/** Where a kind of run keeps its records in its workspace (tools.md §7.2). */
export interface AuditLayout {
  /** The run's own storage directory (checkpoints, inputs); hidden from model tools. */
  runDir: WorkspacePath;
  /** Under the read-only `tool-results/` mount. */
  toolResultsDir: string;
}

/** A Session's runs share the session workspace: each keeps to its own directories. */
export const sessionAuditLayout = (runId: RunId): AuditLayout => ({
  runDir: path(`runs/${runId}`),
  toolResultsDir: `tool-results/${runId}`,
});

/** A Chat run has a workspace of its own: `run/` is hidden from model tools. */
export const chatAuditLayout = (): AuditLayout => ({ runDir: path('run'), toolResultsDir: 'tool-results' });

/**
 * One invocation's record files (runtime.md §1.5): the root's directly in the layout's folders,
 * every other invocation's in a folder named by its id, so a child's `round-001.json` can never
 * overwrite the root's.
 */
export function auditPaths(layout: AuditLayout, invocationId: InvocationId) {
  const own = invocationId === ROOT_INVOCATION ? '' : `${invocationId}/`;
  return {
    runDir: layout.runDir,
    toolArgs: (round: number, stem: string) =>
      path(`${layout.runDir}/tool-args/${own}round-${round3(round)}-${stem}.json`),
    modelResponse: (round: number) =>
      path(`${layout.runDir}/model-responses/${own}round-${round3(round)}.json`),
    toolResult: (round: number, stem: string) =>
      path(`${layout.toolResultsDir}/${own}round-${round3(round)}-${stem}.json`),
  };
}

export type AuditPaths = ReturnType<typeof auditPaths>;
