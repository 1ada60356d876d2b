import type { Brand } from './brand';
import type { HearthError } from './errors';
import type { Usage } from './model';
import type { PrunedLevel } from './retention';

export type RunId = Brand<string, 'RunId'>;
export type InvocationId = Brand<string, 'InvocationId'>;
export const ROOT_INVOCATION = 'inv_root' as InvocationId;

/** runtime.md §1.3, snake_case on the wire. */
export type RunStatus =
  | 'created'
  | 'initializing_workspace'
  | 'assembling_context'
  | 'calling_model'
  | 'dispatching_tool'
  | 'applying_workspace_patch'
  | 'creating_checkpoint'
  | 'awaiting_host_commit'
  /** A tool call waits for the person to approve or deny it (D20). */
  | 'awaiting_approval'
  | 'finishing'
  | 'cancelling'
  | 'completed'
  | 'partial_success'
  | 'cancelled'
  | 'failed'
  /** Found unfinished at start-up: the tab that ran it closed or crashed. */
  | 'interrupted';

export const TERMINAL_STATUSES: readonly RunStatus[] = [
  'completed',
  'partial_success',
  'cancelled',
  'failed',
  'interrupted',
];
export const isTerminal = (s: RunStatus): boolean => TERMINAL_STATUSES.includes(s);

/** What a run answers: a Session (its workspace is the session's) or a chat (a reply to commit). */
export type RunTarget = { kind: 'session'; sessionId: string } | { kind: 'chat'; chatId: string };

export interface RunRecord {
  id: RunId;
  target: RunTarget;
  connectionId: string;
  model: string;
  status: RunStatus;
  /** Model rounds started (a round that streamed and was stopped counts). */
  rounds: number;
  usage: Usage;
  error?: HearthError;
  createdAt: number;
  updatedAt: number;
  /**
   * Set when retention removed the run's details: `artifacts` = its stored files (model
   * responses, tool arguments and results, checkpoints); `journal` = those and its journal.
   */
  pruned?: PrunedLevel;
  /** When retention last removed something of this run (epoch ms). */
  prunedAt?: number;
}

export function addUsage(a: Usage, b: Usage): Usage {
  const sum = (x?: number, y?: number) =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  const out: Usage = {};
  for (const k of [
    'inputTokens',
    'outputTokens',
    'totalTokens',
    'reasoningTokens',
    'cachedInputTokens',
  ] as const) {
    const v = sum(a[k], b[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}
