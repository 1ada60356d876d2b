import { sha256Hex } from '$lib/domain/hash';
import type { RunId } from '$lib/domain/run';
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

/** Where a Session run keeps its records inside the session workspace (tools.md §7.2). */
export const sessionAuditPaths = (runId: RunId) => ({
  /** The run's own storage directory (checkpoints, inputs); hidden from model tools. */
  runDir: path(`runs/${runId}`),
  /** Hidden runtime storage: never listed, read or written by model tools. */
  toolArgs: (round: number, stem: string) =>
    path(`runs/${runId}/tool-args/round-${round3(round)}-${stem}.json`),
  modelResponse: (round: number) => path(`runs/${runId}/model-responses/round-${round3(round)}.json`),
  /** Under the read-only `tool-results/` mount. */
  toolResult: (round: number, stem: string) =>
    path(`tool-results/${runId}/round-${round3(round)}-${stem}.json`),
});

export type AuditPaths = ReturnType<typeof sessionAuditPaths>;
