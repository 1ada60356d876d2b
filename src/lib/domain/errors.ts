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
  | 'tool.unavailable'
  | 'tool.not_in_scope'
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
  | 'workspace.shell_exit'
  | 'workspace.shell_cancelled'
  | 'workspace.shell_timeout'
  | 'workspace.shell_failed'
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
  | 'model.tool_call_required'
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
  // profiles (runtime.md §3): shape and validation rules
  | 'agent.profile_invalid'
  | 'agent.profile_unknown_field'
  | 'agent.profile_schema_unsupported'
  | 'agent.profile_kind_invalid'
  | 'agent.profile_id_empty'
  | 'agent.profile_id_too_long'
  | 'agent.profile_id_invalid'
  | 'agent.profile_display_name_required'
  | 'agent.profile_preset_ref_required'
  | 'agent.profile_preset_reasoning_effort_requires_ref'
  | 'agent.profile_model_connection_ref_required'
  | 'agent.profile_model_id_required'
  | 'agent.profile_model_current_snapshot_extra_fields'
  | 'agent.profile_model_requires_configuration_extra_fields'
  | 'agent.profile_model_requires_configuration'
  | 'agent.profile_model_retry_invalid'
  | 'agent.profile_chat_history_invalid'
  | 'agent.profile_allowed_callers_empty'
  | 'agent.profile_description_for_agents_empty'
  | 'agent.profile_delegation_limit_invalid'
  | 'agent.profile_delegation_target_mode_required'
  | 'agent.profile_delegation_callable_required'
  | 'agent.profile_session_delegation_unsupported'
  | 'agent.profile_system_prompt_empty'
  | 'agent.profile_tools_allow_empty'
  | 'agent.profile_tool_duplicate'
  | 'agent.profile_tool_ask_not_visible'
  | 'agent.profile_task_return_runtime_only'
  | 'agent.profile_tool_unknown'
  | 'agent.profile_tool_out_of_scope'
  | 'agent.profile_agent_delegate_requires_delegation'
  | 'agent.profile_agent_handoff_requires_handoff'
  | 'agent.profile_tool_description_not_visible'
  | 'agent.profile_tool_description_empty'
  | 'agent.profile_unknown_tool_property'
  | 'agent.profile_tool_property_description_empty'
  | 'agent.profile_external_result_limit_invalid'
  | 'agent.profile_skills_visible_empty'
  | 'agent.profile_visible_roots_empty'
  | 'agent.profile_root_unknown'
  | 'agent.profile_root_duplicate'
  | 'agent.profile_writable_root_not_visible'
  | 'agent.plan_mode_unsupported'
  | 'agent.plan_nodes_unsupported'
  | 'agent.profile_finish_required'
  | 'agent.profile_commit_required'
  | 'agent.profile_direct_runnable_disabled_requires_delegation_target'
  | 'agent.profile_subagent_only_background_required'
  | 'agent.profile_session_artifacts_unsupported'
  | 'agent.profile_message_body_artifact_required'
  | 'agent.profile_artifact_id_required'
  | 'agent.profile_artifact_duplicate'
  | 'agent.profile_artifact_kind_required'
  | 'agent.profile_artifact_path_invalid'
  | 'agent.profile_artifact_path_not_writable'
  | 'agent.profile_output_writer_required'
  | 'extension.tool_unavailable'
  // profiles: storage, import and the API
  | 'agent.profile_invalid_json'
  | 'agent.profile_package_invalid'
  | 'agent.profile_not_found'
  | 'agent.profile_not_direct_runnable'
  | 'agent.profile_builtin_read_only'
  | 'agent.profile_exists'
  | 'agent.profile_copy_unsupported'
  // runs and storage
  | 'agent.cancelled'
  | 'agent.internal_error'
  | 'agent.session_busy'
  | 'agent.guidance_empty'
  | 'agent.guidance_too_large'
  | 'agent.guidance_mailbox_full'
  | 'agent.guidance_mailbox_closed'
  | 'agent.guidance_active_run_missing'
  | 'agent.resume_refused'
  | 'agent.approval_not_pending'
  // delegation (runtime.md §2)
  | 'agent.delegation_policy_denied'
  | 'agent.target_profile_not_found'
  | 'agent.no_child_tasks'
  | 'agent.await_task_not_found'
  | 'agent.task_return_denied'
  | 'agent.task_already_finished'
  | 'agent.child_invocation_missing_return'
  | 'agent.handoff_policy_denied'
  | 'agent.handoff_pending_tasks'
  | 'agent.handoff_depth_exhausted'
  | 'agent.not_found'
  | 'journal.append_failed'
  | 'checkpoint.not_found'
  | 'checkpoint.corrupt'
  | 'storage.failed'
  // backups
  | 'backup.invalid'
  | 'backup.newer_version'
  | 'backup.busy'
  | 'storage.quota_exceeded'
  | 'connection.invalid'
  | 'settings.invalid'
  | 'rpc.closed'
  | 'rpc.cancelled'
  | 'rpc.unknown_method'
  // images from the person (domain/user-images.ts)
  | 'image.invalid'
  // SillyTavern-compatible content (chat/)
  | 'card.unsupported_format'
  | 'card.not_png'
  | 'card.truncated_png'
  | 'card.invalid_png'
  | 'card.png_crc_mismatch'
  | 'card.no_card_data'
  | 'card.chunk_too_large'
  | 'card.too_large'
  | 'card.invalid_base64'
  | 'card.invalid_json'
  | 'card.unsupported_spec'
  | 'card.invalid_card'
  | 'card.invalid_charx'
  | 'lorebook.invalid'
  | 'lorebook.not_found'
  | 'character.not_found'
  | 'character.invalid'
  | 'character.avatar_invalid'
  | 'character.no_avatar'
  | 'persona.not_found'
  | 'persona.invalid'
  | 'storage.corrupt_record'
  | 'chat.invalid_jsonl'
  | 'chat.invalid_header'
  | 'chat.invalid_authors_note'
  // a SillyTavern library brought over whole (chat/st-library.ts)
  | 'library.invalid'
  | 'library.too_large'
  // Chat Completion presets (chat/preset/)
  | 'preset.invalid'
  | 'preset.not_found'
  | 'preset.built_in'
  // chat-scope builtin tools (tools.md §13.1–13.3, 13.10, 13.11, 13.17; runtime.md §1.9–1.10)
  | 'chat.not_found'
  | 'chat.message_not_found'
  | 'chat.invalid_message_range'
  | 'chat.read_too_large'
  | 'worldinfo.activation_unavailable'
  | 'worldinfo.entry_not_found'
  | 'worldinfo.invalid_entry_range'
  | 'worldinfo.read_too_large'
  | 'dice.invalid_formula'
  | 'workspace.commit_mode_invalid'
  | 'workspace.required_artifact_empty'
  | 'agent.input_history_conflict'
  | 'agent.invalid_worldinfo_activation_snapshot'
  | 'agent.chat_commit_failed'
  | 'agent.child_finish_denied'
  | 'agent.foreground_commit_required'
  | 'agent.tool_after_finish'
  // MCP servers (tools.md §15)
  | 'mcp.server_invalid'
  | 'mcp.server_not_found'
  | 'mcp.not_discovered'
  | 'mcp.unreachable'
  | 'mcp.http_error'
  | 'mcp.auth_required'
  | 'mcp.auth_failed'
  | 'mcp.sign_in_unknown'
  | 'mcp.protocol_unsupported'
  | 'mcp.invalid_response'
  | 'mcp.response_too_large'
  | 'mcp.catalog_too_large'
  | 'mcp.timeout'
  | 'mcp.not_sent'
  | 'mcp.tool_error'
  | 'mcp.server_error'
  | 'mcp.unsupported_response'
  | 'mcp.call_outcome_unknown'
  | 'mcp.arguments_too_large'
  // packages a person installs (domain/package-files.ts)
  | 'package.invalid'
  | 'package.invalid_path'
  | 'package.too_large'
  // skills (domain/skill.ts)
  | 'skill.invalid'
  | 'skill.conflict'
  | 'skill.not_found'
  // extensions (domain/extension.ts, runtime/extensions.ts)
  | 'extension.manifest_invalid'
  | 'extension.load_failed'
  | 'extension.registration_invalid'
  | 'extension.conflict'
  | 'extension.not_found'
  | 'extension.unprotected'
  | 'extension.tool_error'
  | 'extension.tool_timeout'
  | 'extension.tool_needs_image_input'
  | 'extension.disabled'
  | 'extension.result_too_large';

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
