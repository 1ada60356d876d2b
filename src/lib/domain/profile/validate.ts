import { BUILTIN_TOOLS, isBuiltinToolName } from '../builtin-tools';
import type { ErrorCode } from '../errors';
import { parseToolId } from '../tool-id';
import { parseWorkspacePath } from '../workspace-path';
import { isVisible, isWritable } from '../workspace-roots';
import { formatPath, problem, type ProfileProblem } from './problem';
import type { ProfileV5 } from './schema';
import { profileScope, rootUniverse, type ProfileScope } from './scope';
import { BUILTIN_TOOL_PARAMETERS } from './tool-parameters';

/** What validation needs to know about the tools of this device. */
export interface ProfileValidationContext {
  /** Every ToolId that can be bound now: builtins, discovered MCP tools, loaded extension tools. */
  knownToolIds: ReadonlySet<string>;
  /**
   * Tools the saved version of this profile already allowed. A selected MCP or extension tool
   * that is absent now (server offline, extension not loaded) keeps its selection (runtime.md
   * §3.4); newly enabling an absent one is rejected.
   */
  previouslySelected?: ReadonlySet<string>;
  /** Parameter names by ToolId for description overrides; builtins default to tools.md §13. */
  toolParameters?: ReadonlyMap<string, readonly string[]>;
}

export const PROFILE_ID_MAX_LENGTH = 128;
const PROFILE_ID = /^[a-z0-9_-]+$/;

/** The profile id rules of runtime.md §0.3 (also used for LLM connection ids). */
export function checkProfileId(id: string, path = 'id'): ProfileProblem | undefined {
  if (id.trim() === '') return problem('agent.profile_id_empty', path, 'The profile id must not be empty.');
  if (id.length > PROFILE_ID_MAX_LENGTH) {
    return problem(
      'agent.profile_id_too_long',
      path,
      `The profile id has ${id.length} characters; at most ${PROFILE_ID_MAX_LENGTH} are allowed.`,
    );
  }
  if (!PROFILE_ID.test(id)) {
    return problem(
      'agent.profile_id_invalid',
      path,
      'The profile id may use only lowercase letters a-z, digits 0-9, "-" and "_".',
    );
  }
  return undefined;
}

const blank = (s: string | undefined | null): boolean => s !== undefined && s !== null && s.trim() === '';
const missing = (s: string | undefined): boolean => s === undefined || s.trim() === '';
const id = (name: string) => `builtin:${name}`;

/**
 * Checks a decoded profile against the field rules of runtime.md §3.2 and the rules of §3.4 and
 * tools.md §4. Returns every problem found (empty = valid), each with its code and path.
 * The scope (and with it the root universe and tool scopes) follows from the profile id.
 */
export function validateProfile(profile: ProfileV5, ctx: ProfileValidationContext): ProfileProblem[] {
  const out: ProfileProblem[] = [];
  const add = (code: ErrorCode, path: string, message: string) => out.push(problem(code, path, message));
  const scope = profileScope(profile.id);

  // identity
  const badId = checkProfileId(profile.id);
  if (badId) out.push(badId);
  if (profile.displayName.trim() === '')
    add('agent.profile_display_name_required', 'displayName', 'Give the profile a display name.');

  // preset
  const { preset } = profile;
  if (preset.mode === 'ref' && (!preset.ref || missing(preset.ref.apiId) || missing(preset.ref.name)))
    add('agent.profile_preset_ref_required', 'preset.ref', 'preset.mode "ref" needs a preset {apiId, name}.');
  if (preset.reasoningEffort !== undefined && preset.mode !== 'ref')
    add(
      'agent.profile_preset_reasoning_effort_requires_ref',
      'preset.reasoningEffort',
      'A reasoning effort applies only with preset.mode "ref"; remove it.',
    );

  checkModel(profile, add);

  // run
  const { modelRetry } = profile.run;
  if (modelRetry.maxRetries < 0)
    add('agent.profile_model_retry_invalid', 'run.modelRetry.maxRetries', 'Retries must be 0 or more.');
  if (modelRetry.intervalMs < 0 || (modelRetry.maxRetries > 0 && modelRetry.intervalMs <= 0))
    add(
      'agent.profile_model_retry_invalid',
      'run.modelRetry.intervalMs',
      'The retry interval must be more than 0 ms when retries are enabled.',
    );

  // context
  if (profile.context.initialChatHistoryMessages < -1)
    add(
      'agent.profile_chat_history_invalid',
      'context.initialChatHistoryMessages',
      'Use -1 (no trim), 0 (no chat messages) or a positive number of newest messages.',
    );

  checkDelegation(profile, scope, add);

  // instructions
  if (blank(profile.instructions.agentSystemPrompt))
    add(
      'agent.profile_system_prompt_empty',
      'instructions.agentSystemPrompt',
      'The system prompt is blank: write one, or use null for the generated default.',
    );

  const visible = checkTools(profile, scope, ctx, add);

  // skills
  if (profile.skills.visible.length === 0)
    add(
      'agent.profile_skills_visible_empty',
      'skills.visible',
      'List visible skills by name, or "*" for all.',
    );

  checkRoots(profile, scope, add);

  // plan
  if (profile.plan.mode !== 'none')
    add(
      'agent.plan_mode_unsupported',
      'plan.mode',
      `Plan mode "${profile.plan.mode}" is not supported; use "none".`,
    );
  if (profile.plan.nodes.length > 0)
    add('agent.plan_nodes_unsupported', 'plan.nodes', 'Plan nodes are not supported; leave the list empty.');

  checkCompletion(profile, scope, visible, add);
  checkOutput(profile, scope, visible, add);
  return out;
}

type Add = (code: ErrorCode, path: string, message: string) => void;

function checkModel(profile: ProfileV5, add: Add): void {
  const { mode, connectionRef, modelId } = profile.model;
  if (mode === 'connectionRef') {
    if (missing(connectionRef))
      add(
        'agent.profile_model_connection_ref_required',
        'model.connectionRef',
        'Choose the connection this profile uses.',
      );
    if (missing(modelId))
      add('agent.profile_model_id_required', 'model.modelId', 'Enter the model id this profile uses.');
    return;
  }
  if (connectionRef === undefined && modelId === undefined) return;
  const path = connectionRef !== undefined ? 'model.connectionRef' : 'model.modelId';
  if (mode === 'currentPromptSnapshot')
    add(
      'agent.profile_model_current_snapshot_extra_fields',
      path,
      'model.mode "currentPromptSnapshot" uses the current connection: remove connectionRef and modelId.',
    );
  else
    add(
      'agent.profile_model_requires_configuration_extra_fields',
      path,
      'model.mode "requiresConfiguration" has no binding yet: remove connectionRef and modelId.',
    );
}

function checkDelegation(profile: ProfileV5, scope: ProfileScope, add: Add): void {
  const d = profile.delegation;
  if (d.allowedCallers.length === 0)
    add(
      'agent.profile_allowed_callers_empty',
      'delegation.allowedCallers',
      'List the profiles that may call this one, or "*" for any.',
    );
  d.allowedCallers.forEach((caller, i) => {
    if (caller.trim() === '')
      add('agent.profile_allowed_callers_empty', `delegation.allowedCallers[${i}]`, 'A caller id is blank.');
  });
  if (blank(d.descriptionForAgents))
    add(
      'agent.profile_description_for_agents_empty',
      'delegation.descriptionForAgents',
      'The description for agents is blank: write one, or use null to fall back to the description.',
    );
  for (const key of [
    'maxConcurrentInvocations',
    'maxInvocationsPerRun',
    'resultBudgetTokens',
    'maxHandoffDepth',
  ] as const) {
    if (d[key] <= 0)
      add('agent.profile_delegation_limit_invalid', `delegation.${key}`, `${key} must be more than 0.`);
  }
  const targetMode = d.allowAsSubagent || d.allowAsHandoffTarget;
  if (d.callable && !targetMode)
    add(
      'agent.profile_delegation_target_mode_required',
      'delegation.callable',
      'A callable profile must allow use as a subagent, as a handoff target, or both.',
    );
  if (targetMode && !d.callable)
    add(
      'agent.profile_delegation_callable_required',
      d.allowAsSubagent ? 'delegation.allowAsSubagent' : 'delegation.allowAsHandoffTarget',
      'Using the profile as a subagent or handoff target requires delegation.callable.',
    );
  // The one Session profile may delegate; it neither hands off (a Session has one agent) nor
  // serves as a target (it is the Session's own agent).
  if (scope === 'session') {
    for (const key of ['canHandoff', 'callable'] as const) {
      if (d[key])
        add(
          'agent.profile_session_delegation_unsupported',
          `delegation.${key}`,
          'The Session profile neither hands off nor serves as another agent’s target: turn this off.',
        );
    }
  }
}

/** Checks `tools`; returns the visible builtin names (allowed, not denied, known). */
function checkTools(
  profile: ProfileV5,
  scope: ProfileScope,
  ctx: ProfileValidationContext,
  add: Add,
): Set<string> {
  const { tools } = profile;
  const visible = new Set<string>();
  const denied = new Set(tools.deny);
  if (tools.allow.length === 0)
    add('agent.profile_tools_allow_empty', 'tools.allow', 'Allow at least one tool.');

  const checkIds = (key: 'allow' | 'deny') => {
    const seen = new Set<string>();
    tools[key].forEach((raw, i) => {
      const path = `tools.${key}[${i}]`;
      const parsed = parseToolId(raw);
      if (!parsed.ok) return add(parsed.error.code, path, parsed.error.message);
      if (seen.has(raw)) return add('agent.profile_tool_duplicate', path, `${raw} is listed twice.`);
      seen.add(raw);
      if (key === 'deny') return;
      const tool = parsed.value;
      if (tool.source === 'builtin' && tool.nativeName === 'task.return')
        return add(
          'agent.profile_task_return_runtime_only',
          path,
          'builtin:task.return is added by the runtime to delegated tasks; a profile cannot allow it.',
        );
      if (!ctx.knownToolIds.has(raw)) {
        if (tool.source === 'builtin')
          return add('agent.profile_tool_unknown', path, `There is no builtin tool ${raw}.`);
        if (ctx.previouslySelected?.has(raw)) return; // absent now; excluded at run time
        if (tool.source === 'extension')
          return add(
            'extension.tool_unavailable',
            path,
            `${raw} is not loaded: load its extension before enabling the tool.`,
          );
        return add('agent.profile_tool_unknown', path, `${raw} is not a discovered MCP tool.`);
      }
      if (tool.source === 'builtin' && isBuiltinToolName(tool.nativeName)) {
        const scopes: readonly string[] = BUILTIN_TOOLS[tool.nativeName].scopes;
        if (!scopes.includes(scope))
          return add(
            'agent.profile_tool_out_of_scope',
            path,
            `${raw} cannot be used in ${scope === 'session' ? 'Session' : 'Chat'} runs.`,
          );
      }
      if (!denied.has(raw)) visible.add(raw);
    });
  };
  checkIds('allow');
  checkIds('deny');
  const asked = new Set<string>();
  (tools.ask ?? []).forEach((raw, i) => {
    const path = `tools.ask[${i}]`;
    if (asked.has(raw)) return add('agent.profile_tool_duplicate', path, `${raw} is listed twice.`);
    asked.add(raw);
    if (!visible.has(raw))
      add(
        'agent.profile_tool_ask_not_visible',
        path,
        `${raw} can only ask before its calls when it is allowed.`,
      );
  });

  // tool surface (runtime.md §3.4)
  const d = profile.delegation;
  for (const name of ['agent.delegate', 'agent.await']) {
    if (visible.has(id(name)) && !d.canDelegate)
      add(
        'agent.profile_agent_delegate_requires_delegation',
        toolPath(tools.allow, id(name)),
        `${id(name)} needs delegation.canDelegate.`,
      );
  }
  if (visible.has(id('agent.handoff')) && !d.canHandoff)
    add(
      'agent.profile_agent_handoff_requires_handoff',
      toolPath(tools.allow, id('agent.handoff')),
      'builtin:agent.handoff needs delegation.canHandoff.',
    );

  // description overrides (tools.md §4.4)
  for (const [toolId, override] of Object.entries(tools.toolDescriptions)) {
    const base = ['tools', 'toolDescriptions', toolId];
    const parsed = parseToolId(toolId);
    if (!parsed.ok) {
      add(parsed.error.code, formatPath(base), parsed.error.message);
      continue;
    }
    if (!visible.has(toolId) && !(ctx.previouslySelected?.has(toolId) && tools.allow.includes(toolId)))
      add(
        'agent.profile_tool_description_not_visible',
        formatPath(base),
        `${toolId} is not an allowed tool of this profile; allow it or remove its description.`,
      );
    if (blank(override.description))
      add(
        'agent.profile_tool_description_empty',
        formatPath([...base, 'description']),
        'The description is blank: write one, or remove the key to keep the default.',
      );
    const known =
      ctx.toolParameters?.get(toolId) ??
      (parsed.value.source === 'builtin' && isBuiltinToolName(parsed.value.nativeName)
        ? BUILTIN_TOOL_PARAMETERS[parsed.value.nativeName]
        : undefined);
    for (const [param, text] of Object.entries(override.properties ?? {})) {
      const path = formatPath([...base, 'properties', param]);
      if (known && !known.includes(param))
        add(
          'agent.profile_unknown_tool_property',
          path,
          `${toolId} has no parameter "${param}"; it has ${known.map((k) => `"${k}"`).join(', ')}.`,
        );
      if (text.trim() === '')
        add(
          'agent.profile_tool_property_description_empty',
          path,
          'The parameter description is blank: write one, or remove the key.',
        );
    }
  }

  if (tools.externalResultInlineCharLimit <= 0)
    add(
      'agent.profile_external_result_limit_invalid',
      'tools.externalResultInlineCharLimit',
      'The inline limit for MCP and extension results must be more than 0 characters.',
    );
  return visible;
}

const toolPath = (allow: readonly string[], toolId: string) => `tools.allow[${allow.indexOf(toolId)}]`;

function checkRoots(profile: ProfileV5, scope: ProfileScope, add: Add): void {
  const universe = rootUniverse(scope);
  const { visibleRoots, writableRoots } = profile.workspace;
  const allowed = universe.map((r) => `"${r}"`).join(', ');
  if (visibleRoots.length === 0)
    add('agent.profile_visible_roots_empty', 'workspace.visibleRoots', 'Make at least one root visible.');
  for (const [key, roots] of [
    ['visibleRoots', visibleRoots],
    ['writableRoots', writableRoots],
  ] as const) {
    const seen = new Set<string>();
    roots.forEach((root, i) => {
      const path = `workspace.${key}[${i}]`;
      if (!universe.includes(root))
        add(
          'agent.profile_root_unknown',
          path,
          `"${root}" is not a ${scope === 'session' ? 'Session' : 'Chat'} workspace root; use ${allowed}.`,
        );
      else if (seen.has(root)) add('agent.profile_root_duplicate', path, `"${root}" is listed twice.`);
      else if (key === 'writableRoots' && !visibleRoots.includes(root))
        add(
          'agent.profile_writable_root_not_visible',
          path,
          `"${root}" is writable but not visible; make it visible too.`,
        );
      seen.add(root);
    });
  }
}

function checkCompletion(profile: ProfileV5, scope: ProfileScope, visible: Set<string>, add: Add): void {
  const { directRunnable, presentation } = profile.run;
  const d = profile.delegation;
  if (directRunnable) {
    // A Session run ends with a text-only turn (D4): no finish or commit tool is needed.
    if (scope === 'chat') {
      const handoffStage =
        presentation === 'foreground' && d.allowAsHandoffTarget && visible.has(id('agent.handoff'));
      if (!visible.has(id('workspace.finish')) && !handoffStage)
        add(
          'agent.profile_finish_required',
          'tools.allow',
          'A directly runnable profile must allow builtin:workspace.finish.',
        );
      if (presentation === 'foreground' && !visible.has(id('workspace.commit')))
        add(
          'agent.profile_commit_required',
          'tools.allow',
          'A directly runnable foreground profile must allow builtin:workspace.commit to publish its reply.',
        );
    }
    return;
  }
  if (!d.callable || !(d.allowAsSubagent || d.allowAsHandoffTarget))
    add(
      'agent.profile_direct_runnable_disabled_requires_delegation_target',
      'run.directRunnable',
      'A profile that cannot run directly must be callable as a subagent or handoff target.',
    );
  if (presentation !== 'background')
    add(
      'agent.profile_subagent_only_background_required',
      'run.presentation',
      'A profile that cannot run directly must use the background presentation.',
    );
}

function checkOutput(profile: ProfileV5, scope: ProfileScope, visible: Set<string>, add: Add): void {
  const { artifacts } = profile.output;
  if (scope === 'session') {
    if (artifacts.length > 0)
      add(
        'agent.profile_session_artifacts_unsupported',
        'output.artifacts',
        'Session runs publish no message body: leave output.artifacts empty.',
      );
    return;
  }
  const bodies = artifacts.filter((a) => a.target === 'messageBody');
  if (bodies.length !== 1)
    add(
      'agent.profile_message_body_artifact_required',
      'output.artifacts',
      `A Chat profile needs exactly one messageBody artifact; it has ${bodies.length}.`,
    );
  const roots = {
    visible: profile.workspace.visibleRoots,
    writable: profile.workspace.writableRoots,
    readOnly: [],
  };
  const ids = new Set<string>();
  const paths = new Set<string>();
  artifacts.forEach((a, i) => {
    const at = `output.artifacts[${i}]`;
    if (a.id.trim() === '') add('agent.profile_artifact_id_required', `${at}.id`, 'Give the artifact an id.');
    else if (ids.has(a.id))
      add('agent.profile_artifact_duplicate', `${at}.id`, `Artifact id "${a.id}" is used twice.`);
    ids.add(a.id);
    if (a.kind.trim() === '')
      add('agent.profile_artifact_kind_required', `${at}.kind`, 'Give the artifact a kind, e.g. "markdown".');
    const path = parseWorkspacePath(a.path);
    if (!path.ok) {
      add('agent.profile_artifact_path_invalid', `${at}.path`, `"${a.path}" is not a valid workspace path.`);
      return;
    }
    if (paths.has(path.value))
      add('agent.profile_artifact_duplicate', `${at}.path`, `Artifact path "${a.path}" is used twice.`);
    paths.add(path.value);
    if (!isVisible(roots, path.value) || !isWritable(roots, path.value))
      add(
        'agent.profile_artifact_path_not_writable',
        `${at}.path`,
        `"${a.path}" must lie under a root that is both visible and writable.`,
      );
  });
  if (bodies.length > 0 && !visible.has(id('workspace.write_file')))
    add(
      'agent.profile_output_writer_required',
      'tools.allow',
      'The message-body artifact is written with builtin:workspace.write_file; allow that tool.',
    );
}
