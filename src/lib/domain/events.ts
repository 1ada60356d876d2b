import type { ErrorCode } from './errors';
import type { JsonObject } from './json';
import type { RunId, RunStatus } from './run';

/** Payloads of the journal event types in use (runtime.md §1.16). */
export interface RunEventPayloads {
  run_created: { target: JsonObject; connectionId: string; model: string };
  profile_resolved: { profileId: string; source: string };
  status_changed: { status: RunStatus; from: RunStatus; reason?: string };
  context_assembled: {
    invocationId: string;
    tools: string[];
    messageCount: number;
    /** Tools the profile or their page would offer that this invocation does not get, and why. */
    withheld?: { toolId: string; code: ErrorCode; message: string }[];
  };
  model_request_created: {
    round: number;
    invocationId: string;
    request: { provider: string; model: string; messageCount: number; toolCount: number };
  };
  /**
   * What the adapter did not send of the request as it was asked, and why (a sampler setting the
   * provider or model refuses, an image the model cannot take): the stream's `turn-start` warnings.
   */
  model_request_notes: { round: number; invocationId: string; notes: string[] };
  model_call_attempt_failed: {
    round: number;
    invocationId: string;
    attempt: number;
    maxRetries: number;
    retryable: boolean;
    willRetry: boolean;
    code: ErrorCode;
    message: string;
  };
  model_call_retry_scheduled: {
    round: number;
    invocationId: string;
    nextAttempt: number;
    intervalMs: number;
  };
  model_response_stored: {
    round: number;
    invocationId: string;
    path: string;
    responseId: string | null;
    model: string;
  };
  model_completed: {
    round: number;
    invocationId: string;
    modelResponsePath: string;
    toolCallCount: number;
    textChars: number;
    textWords: number;
    hasReasoning: boolean;
    reasoningChars: number;
    finishReason: string;
    usage: JsonObject;
  };
  tool_call_requested: {
    round: number;
    invocationId: string;
    callId: string;
    /** Null when the call name decodes to no tool of the snapshot. */
    toolId: string | null;
    snapshotId: string;
    /** The native name (`workspace.read_file`); the model's call name is `callName`. */
    name: string | null;
    callName: string;
    argumentsRef: string;
  };
  tool_call_started: {
    round: number;
    invocationId: string;
    callId: string;
    toolId: string;
    name: string;
    callName: string;
  };
  /** The gate asked the person (D20): the call waits; `argumentsRef` holds its full arguments. */
  tool_call_awaiting_approval: {
    round: number;
    invocationId: string;
    callId: string;
    approvalId: string;
    toolId: string;
    name: string;
    callName: string;
    /** Where the tool comes from, as the person is shown it (`builtin`, later an MCP server, an extension). */
    source: string;
    argumentsRef: string;
    /** An MCP tool's endpoint host and the hints its server claims (read-only, destructive). */
    hints?: ToolHints;
  };
  /**
   * `always`: the person chose Always allow (this run asks no more; stored in the profile, or for
   * an MCP tool against its endpoint). `argumentsRef`: the arguments as the person edited them.
   */
  tool_call_approved: {
    invocationId: string;
    callId: string;
    approvalId: string;
    always: boolean;
    argumentsRef?: string;
  };
  tool_call_denied: { invocationId: string; callId: string; approvalId: string };
  tool_result_stored: { round: number; invocationId: string; callId: string; path: string };
  tool_result_readable_view_stored: {
    invocationId: string;
    callId: string;
    toolId: string;
    path: string;
    auditPath: string;
  };
  tool_call_completed: ToolCallOutcomePayload;
  tool_call_failed: ToolCallOutcomePayload;
  workspace_file_written: {
    invocationId: string;
    path: string;
    mode: 'replace' | 'append';
    chars: number;
    words: number;
    sha256: string;
  };
  workspace_patch_applied: {
    invocationId: string;
    path: string;
    chars: number;
    words: number;
    oldSha256: string;
    sha256: string;
    replacements: number;
  };
  /** Files a `workspace_shell` call changed, as written back (tools.md §13.12). */
  workspace_shell_changed: {
    invocationId: string;
    changes: ShellFileChange[];
  };
  checkpoint_created: {
    checkpointId: string;
    reason:
      | 'tool_workspace_write'
      | 'tool_workspace_patch'
      | 'tool_workspace_shell'
      | 'direct_output_capture'
      | 'chat_commit';
  };
  user_guidance_submitted: {
    guidanceId: string;
    clientGuidanceId: string | null;
    invocationId: string;
    status: 'queued';
    submittedAt: number;
    /** The only event that inlines the full text. */
    text: string;
    chars: number;
    words: number;
    preview: string;
  };
  user_guidance_applied: {
    guidanceIds: string[];
    count: number;
    chars: number;
    words: number;
    preview: string;
    round: number;
    invocationId: string;
    messageIndex: number;
  };
  user_guidance_discarded: { guidanceIds: string[]; count: number; reason: string };
  /** A Hearth addition: an interrupted or retryable failed run continues (D10). */
  run_resumed: { from: RunStatus; round: number };
  session_compacted: {
    round: number;
    fromIndex: number;
    toIndex: number;
    summaryMessageIndex: number;
    summarizedMessages: number;
    tokensBefore: number;
    tokensAfter: number;
    summaryChars: number;
  };
  /**
   * A Chat run's first prompt, assembled within its preset's budget (D23): the tokens against the
   * limit, the agent's parts counted apart, and how much of the chat's history fit.
   */
  chat_prompt_assembled: {
    maxContextTokens: number;
    maxReplyTokens: number;
    limit: number;
    used: number;
    agentTokens: number;
    tokenizer: string;
    /** `oldestSent`: the chat index of the oldest message sent (absent in journals before it was kept). */
    history: { total: number; sent: number; oldestSent?: number | null };
    examples: { total: number; sent: number };
    overflow: string | null;
  };
  /**
   * A Chat run's request carries this many older tool results shortened to fit the prompt's
   * budget (emitted when the number changes); the run's records keep them whole.
   */
  chat_tool_results_shortened: {
    round: number;
    invocationId: string;
    results: number;
    charsLeftOut: number;
    tokensBefore: number;
    tokensAfter: number;
    limit: number;
  };
  direct_output_captured: {
    round: number;
    invocationId: string;
    path: string;
    chars: number;
    words: number;
    sha256: string;
    modelResponsePath: string;
  };
  drift_recovery_attempted: {
    attempt: number;
    maxAttempts: number;
    round: number;
    invocationId: string;
    committedCount: number;
    reasonCode: 'model.tool_call_required';
  };
  chat_commit_started: { invocationId: string; path: string; mode: 'replace' | 'append' };
  chat_commit_requested: {
    commitId: string;
    invocationId: string;
    path: string;
    mode: 'replace' | 'append';
    reason: string | null;
    chars: number;
    words: number;
    sha256: string;
    checkpointId: string;
  };
  chat_commit_completed: {
    commitId: string;
    invocationId: string;
    messageId: string;
    messageIndex: number;
    swipeId: number;
  };
  /** The host could not save the committed reply: the run fails with `agent.chat_commit_failed`. */
  chat_commit_failed: {
    commitId: string;
    invocationId: string;
    path: string;
    code: ErrorCode;
    message: string;
  };
  chat_commit_recorded: {
    invocationId: string;
    commitCount: number;
    path: string;
    mode: 'replace' | 'append';
    messageId: string;
    messageIndex: number;
    round: number;
  };
  agent_loop_finished: { commitCount: number; round: number; invocationId: string };
  run_partial_success: {
    code: ErrorCode;
    message: string;
    retryable: false;
    userRetryable: false;
    preservedCommitCount: number;
  };
  /** A delegated task exists (queued); its child invocation is created when it starts. */
  agent_task_registered: {
    taskId: string;
    agentId: string;
    callerInvocationId: string;
    childInvocationId: string;
    workspaceKey: string;
    title: string | null;
  };
  agent_delegate_started: { taskId: string; agentId: string; invocationId: string };
  agent_task_started: { taskId: string; childInvocationId: string };
  task_return_completed: {
    taskId: string;
    childInvocationId: string;
    status: 'completed' | 'failed';
    resultRef: string;
  };
  agent_child_invocation_failed: { taskId: string; childInvocationId: string; message: string };
  agent_task_cancelled: { taskId: string; reason: string };
  agent_handoff_requested: { agentId: string; invocationId: string };
  agent_handoff_accepted: {
    handoffId: string;
    agentId: string;
    invocationId: string;
    targetInvocationId: string;
    /** Handoffs in this run so far, this one included (at most 8, D7). */
    depth: number;
  };
  agent_invocation_transferred: InvocationPayload;
  agent_invocation_created: InvocationPayload;
  agent_invocation_started: InvocationPayload;
  agent_invocation_completed: InvocationPayload;
  agent_invocation_failed: InvocationPayload;
  agent_invocation_cancelled: InvocationPayload;
  persistent_projection_initialized: { roots: string[]; baseStateId: string | null; files: number };
  persistent_changes_committed: {
    stateId: string | null;
    baseStateId: string | null;
    changed: string[];
    removed: string[];
  };
  run_cancel_requested: null;
  run_cancelled: { message?: string };
  run_completed: null;
  /** A Hearth addition: the run was found unfinished at start-up (its tab closed). */
  run_interrupted: { message: string };
  run_failed: { code: ErrorCode; message: string; retryable: boolean; userRetryable: boolean };
}

/**
 * What an approval shows beside a tool: an MCP tool's endpoint host and the hints its server
 * claims (read-only, destructive); the hosts an extension may reach.
 */
export interface ToolHints {
  endpointHost?: string;
  readOnly?: boolean;
  destructive?: boolean;
  reaches?: string[];
}

/** One file a shell call changed: written with this content hash, or removed. */
export type ShellFileChange =
  { path: string; change: 'written'; bytes: number; sha256: string } | { path: string; change: 'removed' };

/** An invocation: the root agent of a run now; sub-agents and handoffs later (runtime.md §1.1). */
export interface InvocationPayload {
  invocationId: string;
  parentInvocationId: string | null;
  profileId: string;
  kind: 'root' | 'subagent' | 'handoff';
  status: 'created' | 'running' | 'completed' | 'failed' | 'cancelled' | 'transferred';
  exitPolicy: 'run_finish_allowed' | 'task_return_required';
}

export interface ToolCallOutcomePayload {
  round: number;
  invocationId: string;
  callId: string;
  toolId: string | null;
  name: string | null;
  callName: string;
  isError: boolean;
  errorCode: ErrorCode | null;
  message: string;
  elapsedMs: number;
  resourceRefs: string[];
  /** Images the tool returned that were refused at ingestion (tools.md §11); absent when none. */
  imagesNotKept?: number;
}

export type RunEventType = keyof RunEventPayloads;
export type EventLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * One journal entry; `seq` is assigned by the journal, monotonic per run from 1, without gaps.
 * `invocationId` stamps every event an invocation emits; run-level events (the run's creation,
 * status and end) have none.
 */
export type RunEvent = {
  [T in RunEventType]: {
    runId: RunId;
    seq: number;
    timestamp: string;
    level: EventLevel;
    type: T;
    invocationId?: string;
    payload: RunEventPayloads[T];
  };
}[RunEventType];

/** An event before the journal gives it a sequence number and a time. */
export type NewRunEvent = {
  [T in RunEventType]: { type: T; level?: EventLevel; invocationId?: string; payload: RunEventPayloads[T] };
}[RunEventType];

export const defaultLevel = (e: NewRunEvent): EventLevel => {
  if (e.level) return e.level;
  if (e.type === 'run_failed') return 'error';
  if (e.type === 'tool_call_failed' || e.type === 'model_call_attempt_failed' || e.type === 'run_interrupted')
    return 'warn';
  return 'info';
};
