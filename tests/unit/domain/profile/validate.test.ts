import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES } from '$lib/domain/builtin-tools';
import type { ErrorCode } from '$lib/domain/errors';
import {
  checkProfileId,
  defaultWriterProfile,
  migrateProfileDocument,
  sessionProfile,
  validateProfile,
  type ProfileV5,
  type ProfileValidationContext,
} from '$lib/domain/profile';
import { builtinToolId } from '$lib/domain/tool-id';

const MCP = 'mcp/550e8400-e29b-41d4-a716-446655440000:search';
const EXT = 'extension/style-checker:lint';
const builtins = BUILTIN_TOOL_NAMES.map((n) => builtinToolId(n) as string);
const ctx: ProfileValidationContext = { knownToolIds: new Set([...builtins, MCP]) };

const writer = (patch: (p: ProfileV5) => void = () => {}): ProfileV5 => {
  const p = { ...defaultWriterProfile(), id: 'writer' };
  patch(p);
  return p;
};
const session = (patch: (p: ProfileV5) => void): ProfileV5 => {
  const p = sessionProfile();
  patch(p);
  return p;
};
const without = (list: string[], name: string) => list.filter((id) => id !== `builtin:${name}`);

/** [rule, profile, expected code, expected path, extra context]. Every validation code appears. */
const CASES: [string, ProfileV5, ErrorCode, string, Partial<ProfileValidationContext>?][] = [
  // identity (runtime.md §0.3, §3.2)
  ['an empty id', writer((p) => (p.id = '  ')), 'agent.profile_id_empty', 'id'],
  ['a 129-character id', writer((p) => (p.id = 'a'.repeat(129))), 'agent.profile_id_too_long', 'id'],
  ['uppercase in the id', writer((p) => (p.id = 'My-Writer')), 'agent.profile_id_invalid', 'id'],
  ['a dot in the id', writer((p) => (p.id = 'my.writer')), 'agent.profile_id_invalid', 'id'],
  [
    'a blank display name',
    writer((p) => (p.displayName = ' \n')),
    'agent.profile_display_name_required',
    'displayName',
  ],
  // preset
  [
    'mode ref without a ref',
    writer((p) => (p.preset = { mode: 'ref', required: false })),
    'agent.profile_preset_ref_required',
    'preset.ref',
  ],
  [
    'mode ref with a blank preset name',
    writer((p) => (p.preset = { mode: 'ref', ref: { apiId: 'openai', name: ' ' }, required: false })),
    'agent.profile_preset_ref_required',
    'preset.ref',
  ],
  [
    'a reasoning effort without mode ref',
    writer((p) => (p.preset.reasoningEffort = 'high')),
    'agent.profile_preset_reasoning_effort_requires_ref',
    'preset.reasoningEffort',
  ],
  // model binding (§3.4)
  [
    'connectionRef without a connection',
    writer((p) => (p.model = { mode: 'connectionRef', modelId: 'gpt-4o' })),
    'agent.profile_model_connection_ref_required',
    'model.connectionRef',
  ],
  [
    'connectionRef without a model id',
    writer((p) => (p.model = { mode: 'connectionRef', connectionRef: 'openai', modelId: ' ' })),
    'agent.profile_model_id_required',
    'model.modelId',
  ],
  [
    'currentPromptSnapshot with a connection',
    writer((p) => (p.model = { mode: 'currentPromptSnapshot', connectionRef: 'openai' })),
    'agent.profile_model_current_snapshot_extra_fields',
    'model.connectionRef',
  ],
  [
    'requiresConfiguration with a model id',
    writer((p) => (p.model = { mode: 'requiresConfiguration', modelId: 'gpt-4o' })),
    'agent.profile_model_requires_configuration_extra_fields',
    'model.modelId',
  ],
  // run
  [
    'negative retries',
    writer((p) => (p.run.modelRetry.maxRetries = -1)),
    'agent.profile_model_retry_invalid',
    'run.modelRetry.maxRetries',
  ],
  [
    'a zero interval with retries',
    writer((p) => (p.run.modelRetry.intervalMs = 0)),
    'agent.profile_model_retry_invalid',
    'run.modelRetry.intervalMs',
  ],
  // context
  [
    'a history count below -1',
    writer((p) => (p.context.initialChatHistoryMessages = -2)),
    'agent.profile_chat_history_invalid',
    'context.initialChatHistoryMessages',
  ],
  // delegation
  [
    'no allowed callers',
    writer((p) => (p.delegation.allowedCallers = [])),
    'agent.profile_allowed_callers_empty',
    'delegation.allowedCallers',
  ],
  [
    'a blank caller',
    writer((p) => (p.delegation.allowedCallers = ['*', ''])),
    'agent.profile_allowed_callers_empty',
    'delegation.allowedCallers[1]',
  ],
  [
    'a blank description for agents',
    writer((p) => (p.delegation.descriptionForAgents = '  ')),
    'agent.profile_description_for_agents_empty',
    'delegation.descriptionForAgents',
  ],
  [
    'zero concurrent children',
    writer((p) => (p.delegation.maxConcurrentInvocations = 0)),
    'agent.profile_delegation_limit_invalid',
    'delegation.maxConcurrentInvocations',
  ],
  [
    'zero children per run',
    writer((p) => (p.delegation.maxInvocationsPerRun = 0)),
    'agent.profile_delegation_limit_invalid',
    'delegation.maxInvocationsPerRun',
  ],
  [
    'a zero result budget',
    writer((p) => (p.delegation.resultBudgetTokens = 0)),
    'agent.profile_delegation_limit_invalid',
    'delegation.resultBudgetTokens',
  ],
  [
    'a zero handoff depth',
    writer((p) => (p.delegation.maxHandoffDepth = -3)),
    'agent.profile_delegation_limit_invalid',
    'delegation.maxHandoffDepth',
  ],
  [
    'callable without a target mode',
    writer((p) => (p.delegation.callable = true)),
    'agent.profile_delegation_target_mode_required',
    'delegation.callable',
  ],
  [
    'a subagent that is not callable',
    writer((p) => (p.delegation.allowAsSubagent = true)),
    'agent.profile_delegation_callable_required',
    'delegation.allowAsSubagent',
  ],
  [
    'a handoff target that is not callable',
    writer((p) => (p.delegation.allowAsHandoffTarget = true)),
    'agent.profile_delegation_callable_required',
    'delegation.allowAsHandoffTarget',
  ],
  // instructions
  [
    'a blank system prompt',
    writer((p) => (p.instructions.agentSystemPrompt = '\n\t ')),
    'agent.profile_system_prompt_empty',
    'instructions.agentSystemPrompt',
  ],
  // tools
  ['no allowed tools', writer((p) => (p.tools.allow = [])), 'agent.profile_tools_allow_empty', 'tools.allow'],
  ['a bare tool name', writer((p) => p.tools.allow.push('dice.roll')), 'tool.id_invalid', 'tools.allow[13]'],
  [
    'an empty provider',
    writer((p) => p.tools.allow.push(':tool')),
    'tool.provider_id_empty',
    'tools.allow[13]',
  ],
  [
    'an unknown provider',
    writer((p) => p.tools.deny.push('plugin:x')),
    'tool.provider_id_invalid',
    'tools.deny[0]',
  ],
  [
    'an empty native name',
    writer((p) => p.tools.allow.push('builtin:')),
    'tool.native_name_empty',
    'tools.allow[13]',
  ],
  [
    'a duplicate allowed tool',
    writer((p) => p.tools.allow.push('builtin:workspace.read_file')),
    'agent.profile_tool_duplicate',
    'tools.allow[13]',
  ],
  [
    'a duplicate denied tool',
    writer((p) => (p.tools.deny = ['builtin:dice.roll', 'builtin:dice.roll'])),
    'agent.profile_tool_duplicate',
    'tools.deny[1]',
  ],
  [
    'task.return in allow',
    writer((p) => p.tools.allow.push('builtin:task.return')),
    'agent.profile_task_return_runtime_only',
    'tools.allow[13]',
  ],
  [
    'an unknown builtin',
    writer((p) => p.tools.allow.push('builtin:web.fetch')),
    'agent.profile_tool_unknown',
    'tools.allow[13]',
  ],
  [
    'an undiscovered MCP tool',
    writer((p) => p.tools.allow.push('mcp/550e8400-e29b-41d4-a716-446655440001:other')),
    'agent.profile_tool_unknown',
    'tools.allow[13]',
  ],
  [
    'newly enabling an unloaded extension tool',
    writer((p) => p.tools.allow.push(EXT)),
    'extension.tool_unavailable',
    'tools.allow[13]',
  ],
  [
    'a Chat-only tool in the Session profile',
    session((p) => p.tools.allow.push('builtin:chat.search')),
    'agent.profile_tool_out_of_scope',
    'tools.allow[6]',
  ],
  [
    'delegate without canDelegate',
    writer((p) => (p.delegation.canDelegate = false)),
    'agent.profile_agent_delegate_requires_delegation',
    'tools.allow[0]',
  ],
  [
    'handoff without canHandoff',
    writer((p) => p.tools.allow.push('builtin:agent.handoff')),
    'agent.profile_agent_handoff_requires_handoff',
    'tools.allow[13]',
  ],
  [
    'a description for a tool that is not allowed',
    writer((p) => (p.tools.toolDescriptions['builtin:dice.roll'] = { description: 'Roll.' })),
    'agent.profile_tool_description_not_visible',
    'tools.toolDescriptions["builtin:dice.roll"]',
  ],
  [
    'a description for a denied tool',
    writer((p) => {
      p.tools.deny = ['builtin:workspace.shell'];
      p.tools.toolDescriptions['builtin:workspace.shell'] = { description: 'Run.' };
    }),
    'agent.profile_tool_description_not_visible',
    'tools.toolDescriptions["builtin:workspace.shell"]',
  ],
  [
    'a description override keyed by a bad id',
    writer((p) => (p.tools.toolDescriptions['shell'] = { description: 'Run.' })),
    'tool.id_invalid',
    'tools.toolDescriptions.shell',
  ],
  [
    'a blank tool description',
    writer((p) => (p.tools.toolDescriptions['builtin:workspace.read_file'] = { description: ' ' })),
    'agent.profile_tool_description_empty',
    'tools.toolDescriptions["builtin:workspace.read_file"].description',
  ],
  [
    'a description for a parameter the tool lacks',
    writer(
      (p) => (p.tools.toolDescriptions['builtin:workspace.read_file'] = { properties: { offset: 'x' } }),
    ),
    'agent.profile_unknown_tool_property',
    'tools.toolDescriptions["builtin:workspace.read_file"].properties.offset',
  ],
  [
    'the retired delegate budget parameter',
    writer((p) => (p.tools.toolDescriptions['builtin:agent.delegate'] = { properties: { budget: 'x' } })),
    'agent.profile_unknown_tool_property',
    'tools.toolDescriptions["builtin:agent.delegate"].properties.budget',
  ],
  [
    'an unknown parameter of an external tool (parameters from the context)',
    writer((p) => {
      p.tools.allow.push(MCP);
      p.tools.toolDescriptions[MCP] = { properties: { q: 'x' } };
    }),
    'agent.profile_unknown_tool_property',
    `tools.toolDescriptions["${MCP}"].properties.q`,
    { toolParameters: new Map([[MCP, ['query']]]) },
  ],
  [
    'a blank parameter description',
    writer((p) => (p.tools.toolDescriptions['builtin:workspace.read_file'] = { properties: { path: '' } })),
    'agent.profile_tool_property_description_empty',
    'tools.toolDescriptions["builtin:workspace.read_file"].properties.path',
  ],
  [
    'a zero external inline limit',
    writer((p) => (p.tools.externalResultInlineCharLimit = 0)),
    'agent.profile_external_result_limit_invalid',
    'tools.externalResultInlineCharLimit',
  ],
  // skills
  [
    'no visible skills',
    writer((p) => (p.skills.visible = [])),
    'agent.profile_skills_visible_empty',
    'skills.visible',
  ],
  // workspace roots (tools.md §12.2)
  [
    'no visible roots',
    writer((p) => {
      p.workspace.visibleRoots = [];
      p.workspace.writableRoots = [];
    }),
    'agent.profile_visible_roots_empty',
    'workspace.visibleRoots',
  ],
  [
    'a Session root in a Chat profile',
    writer((p) => p.workspace.visibleRoots.push('work')),
    'agent.profile_root_unknown',
    'workspace.visibleRoots[5]',
  ],
  [
    'a Chat root in the Session profile',
    session((p) => p.workspace.writableRoots.push('output')),
    'agent.profile_root_unknown',
    'workspace.writableRoots[2]',
  ],
  [
    'a read-only mount as a root',
    session((p) => p.workspace.visibleRoots.push('tool-results')),
    'agent.profile_root_unknown',
    'workspace.visibleRoots[2]',
  ],
  [
    'a duplicate root',
    writer((p) => p.workspace.visibleRoots.push('plan')),
    'agent.profile_root_duplicate',
    'workspace.visibleRoots[5]',
  ],
  [
    'a writable root that is not visible',
    writer((p) => (p.workspace.visibleRoots = ['output', 'scratch'])),
    'agent.profile_writable_root_not_visible',
    'workspace.writableRoots[2]',
  ],
  // plan
  ['plan mode free', writer((p) => (p.plan.mode = 'free')), 'agent.plan_mode_unsupported', 'plan.mode'],
  [
    'plan nodes',
    writer((p) => p.plan.nodes.push({ id: 'a', title: 'A', locked: false })),
    'agent.plan_nodes_unsupported',
    'plan.nodes',
  ],
  // direct-runnable rules (§3.4)
  [
    'direct run without finish',
    writer((p) => (p.tools.allow = without(p.tools.allow, 'workspace.finish'))),
    'agent.profile_finish_required',
    'tools.allow',
  ],
  [
    'finish denied',
    writer((p) => (p.tools.deny = ['builtin:workspace.finish'])),
    'agent.profile_finish_required',
    'tools.allow',
  ],
  [
    'foreground direct run without commit',
    writer((p) => (p.tools.allow = without(p.tools.allow, 'workspace.commit'))),
    'agent.profile_commit_required',
    'tools.allow',
  ],
  [
    'a subagent-only profile that is not a target',
    writer((p) => {
      p.run.directRunnable = false;
      p.run.presentation = 'background';
    }),
    'agent.profile_direct_runnable_disabled_requires_delegation_target',
    'run.directRunnable',
  ],
  [
    'a subagent-only profile in the foreground',
    writer((p) => {
      p.run.directRunnable = false;
      p.delegation.callable = true;
      p.delegation.allowAsSubagent = true;
    }),
    'agent.profile_subagent_only_background_required',
    'run.presentation',
  ],
  // output (§3.2, §3.4)
  [
    'a Chat profile without a message body',
    writer((p) => (p.output.artifacts = [])),
    'agent.profile_message_body_artifact_required',
    'output.artifacts',
  ],
  [
    'two message bodies',
    writer((p) =>
      p.output.artifacts.push({ ...p.output.artifacts[0]!, id: 'second', path: 'output/second.md' }),
    ),
    'agent.profile_message_body_artifact_required',
    'output.artifacts',
  ],
  [
    'a blank artifact id',
    writer((p) => (p.output.artifacts[0]!.id = ' ')),
    'agent.profile_artifact_id_required',
    'output.artifacts[0].id',
  ],
  [
    'a duplicate artifact path',
    writer((p) => p.output.artifacts.push({ ...p.output.artifacts[0]!, id: 'copy' })),
    'agent.profile_artifact_duplicate',
    'output.artifacts[1].path',
  ],
  [
    'a duplicate artifact id',
    writer((p) => p.output.artifacts.push({ ...p.output.artifacts[0]!, path: 'scratch/x.md' })),
    'agent.profile_artifact_duplicate',
    'output.artifacts[1].id',
  ],
  [
    'a blank artifact kind',
    writer((p) => (p.output.artifacts[0]!.kind = '')),
    'agent.profile_artifact_kind_required',
    'output.artifacts[0].kind',
  ],
  [
    'an escaping artifact path',
    writer((p) => (p.output.artifacts[0]!.path = '../main.md')),
    'agent.profile_artifact_path_invalid',
    'output.artifacts[0].path',
  ],
  [
    'an artifact under a read-only root',
    writer((p) => (p.workspace.writableRoots = ['scratch'])),
    'agent.profile_artifact_path_not_writable',
    'output.artifacts[0].path',
  ],
  [
    'an artifact that is a root itself',
    writer((p) => (p.output.artifacts[0]!.path = 'output')),
    'agent.profile_artifact_path_not_writable',
    'output.artifacts[0].path',
  ],
  [
    'a message body without the write tool',
    writer((p) => (p.tools.deny = ['builtin:workspace.write_file'])),
    'agent.profile_output_writer_required',
    'tools.allow',
  ],
  // the Session profile (D13)
  [
    'a Session profile that hands off',
    session((p) => (p.delegation.canHandoff = true)),
    'agent.profile_session_delegation_unsupported',
    'delegation.canHandoff',
  ],
  [
    'a Session profile with a message body',
    session((p) => (p.output.artifacts = defaultWriterProfile().output.artifacts)),
    'agent.profile_session_artifacts_unsupported',
    'output.artifacts',
  ],
];

describe('validateProfile', () => {
  it.each(CASES)('rejects %s', (_rule, profile, code, path, extra) => {
    const problems = validateProfile(profile, { ...ctx, ...extra });
    expect(problems).toContainEqual(expect.objectContaining({ code, path }));
    for (const p of problems) expect(p.message.length).toBeGreaterThan(10);
  });

  it('the valid base profiles have no problems', () => {
    expect(validateProfile(writer(), ctx)).toEqual([]);
    expect(validateProfile(sessionProfile(), ctx)).toEqual([]);
    const delegating = sessionProfile();
    delegating.delegation.canDelegate = true;
    delegating.tools.allow = [...delegating.tools.allow, 'builtin:agent.delegate', 'builtin:agent.await'];
    expect(validateProfile(delegating, ctx)).toEqual([]);
  });

  it('covers every code a profile document can be rejected with', () => {
    const decodeCodes: ErrorCode[] = [
      'agent.profile_invalid',
      'agent.profile_unknown_field',
      'agent.profile_schema_unsupported',
      'agent.profile_kind_invalid',
    ];
    const covered = new Set<string>([...CASES.map((c) => c[2]), ...decodeCodes]);
    // The codes of runtime.md §3.2-§3.4 and tools.md §4.1/§4.4 that apply to a profile.
    const spec: ErrorCode[] = [
      'agent.profile_schema_unsupported',
      'agent.profile_kind_invalid',
      'agent.profile_id_empty',
      'agent.profile_id_too_long',
      'agent.profile_id_invalid',
      'agent.profile_display_name_required',
      'agent.profile_system_prompt_empty',
      'agent.plan_mode_unsupported',
      'agent.plan_nodes_unsupported',
      'agent.profile_agent_delegate_requires_delegation',
      'agent.profile_agent_handoff_requires_handoff',
      'agent.profile_task_return_runtime_only',
      'agent.profile_delegation_target_mode_required',
      'agent.profile_delegation_callable_required',
      'agent.profile_finish_required',
      'agent.profile_commit_required',
      'agent.profile_direct_runnable_disabled_requires_delegation_target',
      'agent.profile_subagent_only_background_required',
      'agent.profile_output_writer_required',
      'agent.profile_model_connection_ref_required',
      'agent.profile_model_id_required',
      'agent.profile_model_current_snapshot_extra_fields',
      'agent.profile_model_requires_configuration_extra_fields',
      'agent.profile_unknown_tool_property',
      'agent.profile_tool_description_empty',
      'agent.profile_tool_property_description_empty',
      'extension.tool_unavailable',
    ];
    for (const code of spec) expect(covered, code).toContain(code);
  });

  it('reports every problem of a profile, not only the first', () => {
    const p = writer((p) => {
      p.displayName = '';
      p.plan.mode = 'strict';
      p.tools.allow.push('builtin:task.return');
    });
    expect(validateProfile(p, ctx).map((x) => x.code)).toEqual([
      'agent.profile_display_name_required',
      'agent.profile_task_return_runtime_only',
      'agent.plan_mode_unsupported',
    ]);
  });

  it('keeps a previously selected external tool that is absent now', () => {
    const p = writer((p) => {
      p.tools.allow.push(EXT);
      p.tools.toolDescriptions[EXT] = { description: 'Lint the draft.' };
    });
    expect(validateProfile(p, { ...ctx, previouslySelected: new Set([EXT]) })).toEqual([]);
    expect(validateProfile(p, { ...ctx, knownToolIds: new Set([...ctx.knownToolIds, EXT]) })).toEqual([]);
  });

  it('lets a foreground handoff target omit finish while handoff remains', () => {
    const p = writer((p) => {
      p.tools.allow = [...without(p.tools.allow, 'workspace.finish'), 'builtin:agent.handoff'];
      Object.assign(p.delegation, { canHandoff: true, callable: true, allowAsHandoffTarget: true });
    });
    expect(validateProfile(p, ctx)).toEqual([]);
  });

  it('a background direct run may omit commit but not finish', () => {
    const p = writer((p) => {
      p.run.presentation = 'background';
      p.tools.allow = without(p.tools.allow, 'workspace.commit');
    });
    expect(validateProfile(p, ctx)).toEqual([]);
  });

  it('a subagent-only background target is valid without finish or commit', () => {
    const p = writer((p) => {
      p.run = { ...p.run, directRunnable: false, presentation: 'background' };
      Object.assign(p.delegation, { canDelegate: false, callable: true, allowAsSubagent: true });
      p.tools.allow = ['builtin:workspace.read_file', 'builtin:workspace.write_file'];
    });
    expect(validateProfile(p, ctx)).toEqual([]);
  });

  it('the Session profile needs neither commit nor finish, and uses the Session roots', () => {
    const p = session(() => {});
    expect(p.tools.allow).not.toContain('builtin:workspace.commit');
    expect(p.workspace).toEqual({ visibleRoots: ['work', 'tmp'], writableRoots: ['work', 'tmp'] });
    expect(validateProfile(p, ctx)).toEqual([]);
  });

  it('an id at the length limit is valid', () => {
    expect(checkProfileId('a'.repeat(128))).toBeUndefined();
    expect(checkProfileId('my_writer-2')).toBeUndefined();
  });

  it('validates the defaults a minimal document decodes to', () => {
    const decoded = migrateProfileDocument({
      id: 'minimal',
      displayName: 'Minimal',
      preset: { mode: 'currentPromptSnapshot' },
      model: { mode: 'currentPromptSnapshot' },
      run: { presentation: 'foreground' },
      tools: {
        allow: ['builtin:workspace.write_file', 'builtin:workspace.commit', 'builtin:workspace.finish'],
      },
      skills: { visible: ['*'] },
      workspace: {},
      plan: { mode: 'none' },
      output: {},
    });
    expect(decoded.ok && validateProfile(decoded.value, ctx)).toEqual([]);
  });
});
