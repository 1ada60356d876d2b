import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES, BUILTIN_TOOLS } from '$lib/domain/builtin-tools';
import {
  BUILTIN_TOOL_PARAMETERS,
  copyProfile,
  defaultWriterProfile,
  newChatProfile,
  profileScope,
  resolveProfile,
  rootUniverse,
  sessionProfile,
  validateProfile,
} from '$lib/domain/profile';
import { builtinToolId } from '$lib/domain/tool-id';

const ctx = { knownToolIds: new Set<string>(BUILTIN_TOOL_NAMES.map((n) => builtinToolId(n))) };

describe('built-in profiles', () => {
  it('default-writer is exactly runtime.md §3.5, shell included', () => {
    expect(defaultWriterProfile()).toEqual({
      schemaVersion: 5,
      kind: 'tauritavern.agentProfile',
      id: 'default-writer',
      displayName: 'Default Writer',
      description: 'General creative writing.',
      preset: { mode: 'currentPromptSnapshot', required: false },
      model: { mode: 'currentPromptSnapshot' },
      run: {
        presentation: 'foreground',
        stream: true,
        directRunnable: true,
        modelRetry: { maxRetries: 3, intervalMs: 3000 },
      },
      context: { initialChatHistoryMessages: -1, includeActivatedWorldInfo: true },
      delegation: {
        canDelegate: true,
        canHandoff: false,
        callable: false,
        allowAsSubagent: false,
        allowAsHandoffTarget: false,
        allowNestedDelegation: false,
        allowedCallers: ['*'],
        descriptionForAgents: null,
        maxConcurrentInvocations: 3,
        maxInvocationsPerRun: 8,
        resultBudgetTokens: 8000,
        maxHandoffDepth: 8,
      },
      instructions: { agentSystemPrompt: null },
      tools: {
        allow: [
          'builtin:agent.delegate',
          'builtin:agent.await',
          'builtin:chat.search',
          'builtin:chat.read_messages',
          'builtin:worldinfo.read_activated',
          'builtin:workspace.list_files',
          'builtin:workspace.search_files',
          'builtin:workspace.read_file',
          'builtin:workspace.write_file',
          'builtin:workspace.apply_patch',
          'builtin:workspace.shell',
          'builtin:workspace.commit',
          'builtin:workspace.finish',
        ],
        deny: [],
        toolDescriptions: {},
        externalResultInlineCharLimit: 50000,
      },
      skills: { visible: ['*'], deny: [] },
      workspace: {
        visibleRoots: ['output', 'scratch', 'plan', 'summaries', 'persist'],
        writableRoots: ['output', 'scratch', 'plan', 'summaries', 'persist'],
      },
      plan: { mode: 'none', beta: true, nodes: [] },
      output: {
        artifacts: [
          {
            id: 'main',
            path: 'output/main.md',
            kind: 'markdown',
            target: 'messageBody',
            required: true,
            assemblyOrder: 0,
          },
        ],
      },
    });
    expect(defaultWriterProfile().tools.allow).not.toContain('builtin:dice.roll');
  });

  it('default-writer and the Session profile validate clean', () => {
    expect(validateProfile(defaultWriterProfile(), ctx)).toEqual([]);
    expect(validateProfile(sessionProfile(), ctx)).toEqual([]);
  });

  it('each call returns a new object', () => {
    const a = defaultWriterProfile();
    a.tools.allow.pop();
    expect(defaultWriterProfile().tools.allow).toHaveLength(13);
  });

  it('the Session profile: Session roots, background, no artifacts, Session-scope tools only', () => {
    const s = sessionProfile();
    expect(s.id).toBe('session');
    expect(profileScope(s.id)).toBe('session');
    expect(rootUniverse('session')).toEqual(['work', 'tmp']);
    expect(s.workspace.visibleRoots).toEqual(['work', 'tmp']);
    expect(s.run.presentation).toBe('background');
    expect(s.output.artifacts).toEqual([]);
    for (const id of s.tools.allow) {
      const name = id.replace('builtin:', '') as keyof typeof BUILTIN_TOOLS;
      expect(BUILTIN_TOOLS[name].scopes, id).toContain('session');
    }
    expect(s.tools.allow).toContain('builtin:workspace.shell');
  });

  it('every other id is a Chat profile with the Chat root universe', () => {
    expect(profileScope('default-writer')).toBe('chat');
    expect(profileScope('session-notes')).toBe('chat');
    expect(rootUniverse('chat')).toEqual(['output', 'scratch', 'plan', 'summaries', 'persist']);
  });

  it('a new profile enables the shell and validates clean', () => {
    const p = newChatProfile('my-writer', 'My writer');
    expect(p.tools.allow).toContain('builtin:workspace.shell');
    expect(p).not.toHaveProperty('description');
    expect(validateProfile(p, ctx)).toEqual([]);
  });

  it('a copy is deep', () => {
    const source = defaultWriterProfile();
    const copy = copyProfile(source, 'copy', 'Copy');
    copy.tools.allow.pop();
    expect(source.tools.allow).toHaveLength(13);
    expect(copy).toMatchObject({ id: 'copy', displayName: 'Copy' });
  });

  it('resolves ids: default-writer is always built in, session may be customized', () => {
    const storedWriter = { ...defaultWriterProfile(), displayName: 'Changed' };
    expect(resolveProfile('default-writer', storedWriter)).toMatchObject({
      source: 'builtIn',
      profile: { displayName: 'Default Writer' },
    });
    expect(resolveProfile('session', undefined)).toMatchObject({ source: 'builtIn' });
    const custom = { ...sessionProfile(), displayName: 'My session' };
    expect(resolveProfile('session', custom)).toEqual({ source: 'stored', profile: custom });
    const mine = newChatProfile('mine', 'Mine');
    expect(resolveProfile('mine', mine)).toEqual({ source: 'stored', profile: mine });
    expect(resolveProfile('missing', undefined)).toBeUndefined();
  });

  it('the parameter table names every builtin', () => {
    expect(Object.keys(BUILTIN_TOOL_PARAMETERS).sort()).toEqual([...BUILTIN_TOOL_NAMES].sort());
  });
});
