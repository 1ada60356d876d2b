import { describe, expect, it } from 'vitest';
import { migrateProfileDocument, type ProfileV5 } from '$lib/domain/profile';

const MINIMAL = {
  id: 'minimal',
  displayName: 'Minimal',
  preset: { mode: 'currentPromptSnapshot' },
  model: { mode: 'currentPromptSnapshot' },
  run: { presentation: 'foreground' },
  tools: { allow: ['builtin:workspace.finish'] },
  skills: { visible: ['*'] },
  workspace: {},
  plan: { mode: 'none' },
  output: {},
};

const decodeMinimal = (): ProfileV5 => {
  const r = migrateProfileDocument(MINIMAL);
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
};

const at = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown>)[key], value);

/** runtime.md §3.2, the Default column. */
const DEFAULTS: [string, unknown][] = [
  ['schemaVersion', 5],
  ['kind', 'tauritavern.agentProfile'],
  ['preset.required', false],
  ['run.stream', false],
  ['run.directRunnable', true],
  ['run.modelRetry.maxRetries', 3],
  ['run.modelRetry.intervalMs', 3000],
  ['context.initialChatHistoryMessages', -1],
  ['context.includeActivatedWorldInfo', true],
  ['delegation.canDelegate', false],
  ['delegation.canHandoff', false],
  ['delegation.callable', false],
  ['delegation.allowAsSubagent', false],
  ['delegation.allowAsHandoffTarget', false],
  ['delegation.allowNestedDelegation', false],
  ['delegation.allowedCallers', ['*']],
  ['delegation.descriptionForAgents', null],
  ['delegation.maxConcurrentInvocations', 3],
  ['delegation.maxInvocationsPerRun', 8],
  ['delegation.resultBudgetTokens', 8000],
  ['delegation.maxHandoffDepth', 8],
  ['instructions.agentSystemPrompt', null],
  ['tools.deny', []],
  ['tools.toolDescriptions', {}],
  ['tools.externalResultInlineCharLimit', 50000],
  ['skills.deny', []],
  ['workspace.visibleRoots', ['output', 'scratch', 'plan', 'summaries', 'persist']],
  ['workspace.writableRoots', ['output', 'scratch', 'plan', 'summaries', 'persist']],
  ['plan.beta', true],
  ['plan.nodes', []],
  [
    'output.artifacts',
    [
      {
        id: 'main',
        path: 'output/main.md',
        kind: 'markdown',
        target: 'messageBody',
        required: true,
        assemblyOrder: 0,
      },
    ],
  ],
];

describe('profile schema 5', () => {
  it.each(DEFAULTS)('%s defaults to %j', (path, value) => {
    expect(at(decodeMinimal(), path)).toEqual(value);
  });

  it('leaves optional fields without a default absent', () => {
    const p = decodeMinimal();
    expect(p).not.toHaveProperty('description');
    expect(p.preset).not.toHaveProperty('ref');
    expect(p.preset).not.toHaveProperty('reasoningEffort');
    expect(p.model).toEqual({ mode: 'currentPromptSnapshot' });
  });

  it('defaults artifact fields inside a given artifact', () => {
    const r = migrateProfileDocument({
      ...MINIMAL,
      output: { artifacts: [{ id: 'a', path: 'output/a.md', kind: 'md', target: 'messageBody' }] },
    });
    expect(r.ok && r.value.output.artifacts[0]).toMatchObject({ required: false, assemblyOrder: 0 });
  });

  /** [field, a value of the wrong type or outside its enum]. */
  const REQUIRED_OR_TYPED: [string, Record<string, unknown>, string][] = [
    ['id', { id: undefined }, 'id'],
    ['displayName', { displayName: 7 }, 'displayName'],
    ['description', { description: ['x'] }, 'description'],
    ['preset.mode', { preset: { mode: 'preset' } }, 'preset.mode'],
    ['preset.ref', { preset: { mode: 'ref', ref: { apiId: 'openai' } } }, 'preset.ref.name'],
    ['preset.required', { preset: { mode: 'none', required: 'yes' } }, 'preset.required'],
    ['model.mode', { model: { mode: 'auto' } }, 'model.mode'],
    ['model.connectionRef', { model: { mode: 'connectionRef', connectionRef: 1 } }, 'model.connectionRef'],
    ['run.presentation', { run: {} }, 'run.presentation'],
    ['run.stream', { run: { presentation: 'foreground', stream: 1 } }, 'run.stream'],
    [
      'run.modelRetry.maxRetries',
      { run: { presentation: 'foreground', modelRetry: { maxRetries: 1.5 } } },
      'run.modelRetry.maxRetries',
    ],
    [
      'context.includeActivatedWorldInfo',
      { context: { includeActivatedWorldInfo: 'no' } },
      'context.includeActivatedWorldInfo',
    ],
    ['delegation.allowedCallers', { delegation: { allowedCallers: '*' } }, 'delegation.allowedCallers'],
    [
      'instructions.agentSystemPrompt',
      { instructions: { agentSystemPrompt: 5 } },
      'instructions.agentSystemPrompt',
    ],
    ['tools.allow', { tools: {} }, 'tools.allow'],
    [
      'tools.toolDescriptions',
      { tools: { allow: [], toolDescriptions: { 'builtin:x': { properties: { a: 1 } } } } },
      'tools.toolDescriptions["builtin:x"].properties.a',
    ],
    ['skills.visible', { skills: {} }, 'skills.visible'],
    ['workspace.visibleRoots', { workspace: { visibleRoots: 'output' } }, 'workspace.visibleRoots'],
    ['plan.mode', { plan: { mode: 'maybe' } }, 'plan.mode'],
    ['plan.nodes', { plan: { mode: 'none', nodes: [{ id: 'a' }] } }, 'plan.nodes[0].title'],
    [
      'output.artifacts[].target',
      { output: { artifacts: [{ id: 'a', path: 'p', kind: 'k', target: 'file' }] } },
      'output.artifacts[0].target',
    ],
    ['a whole required object', { preset: undefined }, 'preset'],
  ];

  it.each(REQUIRED_OR_TYPED)('checks the type of %s', (_field, patch, path) => {
    const r = migrateProfileDocument({ ...MINIMAL, ...patch });
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.error).toContainEqual(
      expect.objectContaining({ code: 'agent.profile_invalid', path }),
    );
  });

  it.each(['context', 'delegation', 'instructions'])('%s may be omitted as a whole object', (key) => {
    const doc: Record<string, unknown> = { ...MINIMAL };
    delete doc[key];
    expect(migrateProfileDocument(doc).ok).toBe(true);
  });

  it('keeps the keys of a decoded document in schema order', () => {
    expect(Object.keys(decodeMinimal())).toEqual([
      'schemaVersion',
      'kind',
      'id',
      'displayName',
      'preset',
      'model',
      'run',
      'context',
      'delegation',
      'instructions',
      'tools',
      'skills',
      'workspace',
      'plan',
      'output',
    ]);
  });
});
