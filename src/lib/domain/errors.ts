/**
 * Failures are values with stable dotted codes (`workspace.invalid_path`). Logic branches on
 * `code`; `message` is prose for people (and, for recoverable tool errors, for the model).
 */
export interface HearthError {
  code: ErrorCode;
  message: string;
  /** The same request may succeed if repeated (rate limits, transient network or server errors). */
  retryable?: boolean;
  /** HTTP status, when the failure came from an HTTP response. */
  status?: number;
  /** How long the provider asked us to wait before repeating (from `retry-after`). */
  retryAfterMs?: number;
  /**
   * The failed model reply had already started streaming a tool call. Such a reply is never
   * retried automatically (D15), whatever `retryable` says.
   */
  afterToolOutput?: boolean;
}

export type ErrorCode =
  // tools
  | 'tool.invalid_arguments'
  | 'tool.unknown_tool'
  | 'tool.denied'
  | 'tool.id_invalid'
  | 'tool.provider_id_empty'
  | 'tool.provider_id_invalid'
  | 'tool.native_name_empty'
  | 'tool.native_name_invalid'
  | 'tool.catalog_duplicate_id'
  | 'tool.snapshot_alias_empty'
  | 'tool.snapshot_alias_invalid'
  | 'tool.snapshot_duplicate_id'
  | 'tool.snapshot_duplicate_alias'
  | 'tool.turn_snapshot_mismatch'
  | 'tool.result_identity_mismatch'
  | 'model.tool_choice_violation'
  // workspace
  | 'workspace.invalid_path'
  | 'workspace.path_not_visible'
  | 'workspace.path_not_writable'
  | 'workspace.path_not_found'
  | 'workspace.file_not_found'
  | 'workspace.path_is_directory'
  | 'workspace.not_a_directory'
  | 'workspace.invalid_line_range'
  | 'workspace.read_line_count_too_large'
  | 'workspace.invalid_char_range'
  | 'workspace.read_char_count_too_large'
  | 'workspace.mixed_read_range'
  | 'workspace.read_too_large'
  | 'workspace.not_utf8'
  | 'workspace.write_mode_invalid'
  | 'workspace.write_requires_read'
  | 'workspace.write_stale_file'
  | 'workspace.list_depth_too_large'
  | 'workspace.search_limit_invalid'
  | 'workspace.search_limit_too_large'
  | 'workspace.search_context_too_large'
  | 'workspace.patch_empty_old_string'
  | 'workspace.patch_no_change'
  | 'workspace.patch_requires_read'
  | 'workspace.patch_requires_full_read'
  | 'workspace.patch_stale_file'
  | 'workspace.patch_old_string_not_found'
  | 'workspace.patch_old_string_not_unique'
  | 'workspace.conflict'
  | 'workspace.storage_failed'
  | 'workspace.escape'
  // model gateway
  | 'model.invalid_tool_call'
  | 'model.unknown_tool_call'
  | 'model.upstream_invalid_response'
  | 'model.request_failed'
  | 'model.stream_failed'
  | 'model.stream_stalled'
  | 'model.provider_denied'
  | 'model.provider_rate_limited'
  | 'model.network_error'
  | 'model.cancelled'
  | 'model.not_configured'
  // runs and storage
  | 'agent.cancelled'
  | 'agent.internal_error'
  | 'agent.session_busy'
  | 'agent.not_found'
  | 'journal.append_failed'
  | 'checkpoint.not_found'
  | 'checkpoint.corrupt'
  | 'storage.failed'
  | 'connection.invalid'
  | 'rpc.closed'
  | 'rpc.cancelled'
  | 'rpc.unknown_method';

export const hearthError = (code: ErrorCode, message: string, extra?: Partial<HearthError>): HearthError => ({
  code,
  message,
  ...extra,
});

export const isHearthError = (v: unknown): v is HearthError =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as HearthError).code === 'string' &&
  typeof (v as HearthError).message === 'string';

/** Turns anything thrown into a HearthError without losing an existing code. */
export function toHearthError(e: unknown, fallback: ErrorCode = 'agent.internal_error'): HearthError {
  if (isHearthError(e)) {
    const { code, message, retryable, status, retryAfterMs, afterToolOutput } = e;
    return { code, message, retryable, status, retryAfterMs, afterToolOutput };
  }
  if (e instanceof Error) return { code: fallback, message: e.message };
  return { code: fallback, message: String(e) };
}

/** Whether the runtime may repeat a failed model call (D15): retryable, and no tool call had started. */
export const canRetryModelCall = (e: HearthError): boolean =>
  e.retryable === true && e.afterToolOutput !== true;

/** Thrown (rarely) where a value cannot flow back: carries a HearthError across `throw`. */
export class HearthFailure extends Error {
  constructor(readonly error: HearthError) {
    super(error.message);
    this.name = 'HearthFailure';
  }
  get code(): ErrorCode {
    return this.error.code;
  }
}
