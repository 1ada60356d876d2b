import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES, type BuiltinToolName } from '$lib/domain/builtin-tools';
import {
  defaultWriterProfile,
  migrateProfile,
  migrateProfileDocument,
  validateProfile,
  type ProfileV5,
} from '$lib/domain/profile';
import { builtinToolId } from '$lib/domain/tool-id';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(import.meta.dirname, '__fixtures__', name), 'utf8'));

const MCP_SEARCH = 'mcp/550e8400-e29b-41d4-a716-446655440000:search';
const STYLE_LINT = 'extension/style-checker:lint';
const ctx = {
  knownToolIds: new Set<string>([
    ...BUILTIN_TOOL_NAMES.map((n: BuiltinToolName) => builtinToolId(n)),
    MCP_SEARCH,
    STYLE_LINT,
  ]),
};

const decode = (json: unknown): ProfileV5 => {
  const r = migrateProfile(json);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

describe('migrateProfile: schema 1-4 documents', () => {
  it.each([
    ['v1-lore-keeper', 1],
    ['v2-researcher', 2],
    ['v3-planner', 3],
    ['v4-editor', 4],
  ])('%s (schema %i) becomes the expected schema-5 document, key order included', (name) => {
    const migrated = decode(fixture(`${name}.json`));
    const expected = fixture(`${name}.expected.json`);
    expect(migrated).toEqual(expected);
    expect(JSON.stringify(migrated)).toBe(JSON.stringify(expected));
  });

  it.each(['v1-lore-keeper', 'v2-researcher', 'v3-planner', 'v4-editor'])(
    '%s is valid after migration and stable when migrated again',
    (name) => {
      const once = decode(fixture(`${name}.json`));
      expect(validateProfile(once, ctx)).toEqual([]);
      expect(decode(once)).toEqual(once);
      expect(decode(JSON.parse(JSON.stringify(once)))).toEqual(once);
    },
  );

  it('rewrites bare tool names to builtin: ids in allow, deny and toolDescriptions (schema ≤ 2)', () => {
    const p = decode(fixture('v1-lore-keeper.json'));
    expect(p.tools.allow.every((id) => id.startsWith('builtin:'))).toBe(true);
    expect(p.tools.deny).toEqual(['builtin:workspace.apply_patch']);
    expect(Object.keys(p.tools.toolDescriptions)).toEqual(['builtin:workspace.read_file']);
  });

  it('does not rewrite bare names of schema 3 and later: they are invalid ToolIds there', () => {
    const doc = fixture('v3-planner.json') as { tools: { allow: string[] } };
    doc.tools.allow.push('workspace.shell');
    const p = decode(doc);
    expect(p.tools.allow).toContain('workspace.shell');
    expect(validateProfile(p, ctx)).toContainEqual(
      expect.objectContaining({ code: 'tool.id_invalid', path: `tools.allow[${p.tools.allow.length - 1}]` }),
    );
  });

  it('drops skill.* and agent.list entries and the delegate budget description', () => {
    const p = decode(fixture('v3-planner.json'));
    expect(p.tools.allow).not.toContain('builtin:skill.read');
    expect(p.tools.allow).not.toContain('builtin:agent.list');
    expect(p.tools.toolDescriptions).toEqual({
      'builtin:agent.delegate': { properties: { agentId: 'Use researcher for questions.' } },
    });
  });

  it('keeps the mcpResultInlineCharLimit value under its new name', () => {
    expect(decode(fixture('v3-planner.json')).tools.externalResultInlineCharLimit).toBe(30000);
  });

  it('keeps prompt text, descriptions and skills byte-for-byte', () => {
    const p = decode(fixture('v1-lore-keeper.json'));
    expect(p.instructions.agentSystemPrompt).toBe('  You keep the lore.\nNever invent names.  ');
    expect(p.description).toBe("Keeps the world's facts straight.  ");
    expect(p.tools.toolDescriptions['builtin:workspace.read_file']).toEqual({
      description: '  Read a lore file.  ',
      properties: { path: '  Keep this parameter guidance.  ' },
    });
    expect(p.skills).toEqual({ visible: ['lore'], deny: ['private'] });
  });

  it('never grants a permission the old document did not have', () => {
    for (const name of ['v1-lore-keeper', 'v2-researcher', 'v3-planner', 'v4-editor']) {
      const before = fixture(`${name}.json`) as { tools: { allow: string[] } };
      const after = decode(before);
      const bare = (id: string) => id.replace(/^builtin:/, '');
      expect(after.tools.allow.map(bare).every((id) => before.tools.allow.map(bare).includes(id))).toBe(true);
    }
  });

  it('does not modify its input', () => {
    const doc = fixture('v1-lore-keeper.json');
    const copy = structuredClone(doc);
    decode(doc);
    expect(doc).toEqual(copy);
  });
});

describe('migrateProfile: schema 5 and D8', () => {
  it('is the identity on a valid schema-5 profile', () => {
    const p = defaultWriterProfile();
    expect(decode(p)).toEqual(p);
    expect(JSON.stringify(decode(JSON.parse(JSON.stringify(p))))).toBe(JSON.stringify(p));
  });

  it('discards retired fields of a schema-5 document silently', () => {
    const doc = {
      ...defaultWriterProfile(),
      tools: {
        ...defaultWriterProfile().tools,
        maxRounds: 80,
        maxCallsPerRun: 80,
        maxCallsPerTool: { 'builtin:workspace.read_file': 3 },
        allow: [...defaultWriterProfile().tools.allow, 'builtin:skill.read', 'builtin:agent.list'],
        toolDescriptions: { 'builtin:skill.search': { description: 'old' } },
      },
      skills: { visible: ['*'], deny: [], maxReadCharsPerCall: 1, maxReadCharsPerRun: 2 },
    };
    expect(decode(doc)).toEqual(defaultWriterProfile());
  });

  it('keeps externalResultInlineCharLimit when the legacy name is also present', () => {
    const doc = defaultWriterProfile() as unknown as { tools: Record<string, unknown> };
    doc.tools.externalResultInlineCharLimit = 1234;
    doc.tools.mcpResultInlineCharLimit = 999;
    expect(decode(doc).tools.externalResultInlineCharLimit).toBe(1234);
  });

  it('treats a document without schemaVersion and kind as schema 5 and fills every default', () => {
    const minimal = {
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
    expect(decode(minimal)).toMatchObject({ schemaVersion: 5, kind: 'tauritavern.agentProfile' });
  });

  it.each([
    ['a top-level field', { extra: 1 }, 'extra'],
    ['a run field', { run: { presentation: 'foreground', temperature: 0.7 } }, 'run.temperature'],
    [
      'a field named like a retired one elsewhere',
      { run: { presentation: 'foreground', maxRounds: 3 } },
      'run.maxRounds',
    ],
    [
      'a description override field',
      {
        tools: {
          allow: ['builtin:workspace.finish'],
          toolDescriptions: { 'builtin:workspace.finish': { title: 'x' } },
        },
      },
      'tools.toolDescriptions["builtin:workspace.finish"].title',
    ],
  ])('rejects an unknown non-retired field: %s', (_name, patch, path) => {
    const r = migrateProfileDocument({ ...defaultWriterProfile(), ...patch });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContainEqual(expect.objectContaining({ code: 'agent.profile_unknown_field', path }));
    expect(r.error.find((p) => p.path === path)?.message).toMatch(/Unknown field/);
  });

  it.each([
    ['schema 6', { schemaVersion: 6 }],
    ['schema 0', { schemaVersion: 0 }],
    ['a string version', { schemaVersion: '5' }],
    ['a fractional version', { schemaVersion: 4.5 }],
  ])('rejects %s with agent.profile_schema_unsupported', (_name, patch) => {
    const r = migrateProfile({ ...defaultWriterProfile(), ...patch });
    expect(r).toMatchObject({ ok: false, error: { code: 'agent.profile_schema_unsupported' } });
  });

  it.each([null, [], 'profile', 42, true])(
    'rejects garbage (%j) with agent.profile_schema_unsupported',
    (json) => {
      expect(migrateProfile(json)).toMatchObject({
        ok: false,
        error: { code: 'agent.profile_schema_unsupported' },
      });
    },
  );

  it('rejects another kind with agent.profile_kind_invalid', () => {
    const r = migrateProfile({ ...defaultWriterProfile(), kind: 'tauritavern.llmConnection' });
    expect(r).toMatchObject({ ok: false, error: { code: 'agent.profile_kind_invalid' } });
  });

  it.each([
    ['a missing required field', { displayName: undefined }, 'displayName', /Required/],
    [
      'a wrong enum value',
      { run: { presentation: 'sideways' } },
      'run.presentation',
      /"foreground", "background"/,
    ],
    ['a wrong type', { tools: { allow: 'builtin:workspace.finish' } }, 'tools.allow', /Expected an array/],
    [
      'a non-integer',
      { context: { initialChatHistoryMessages: 2.5 } },
      'context.initialChatHistoryMessages',
      /integer/,
    ],
    ['a null description', { description: null }, 'description', /Expected a string, not null/],
  ])('reports %s as agent.profile_invalid with its path', (_name, patch, path, message) => {
    const r = migrateProfileDocument({ ...defaultWriterProfile(), ...patch });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const found = r.error.find((p) => p.path === path);
    expect(found).toMatchObject({ code: 'agent.profile_invalid' });
    expect(found?.message).toMatch(message);
  });

  it('lists every problem at once and summarises them in one coded error', () => {
    const doc = { ...defaultWriterProfile(), extra: 1, run: { presentation: 'up' } };
    const all = migrateProfileDocument(doc);
    expect(all.ok ? [] : all.error.map((p) => p.path)).toEqual(['run.presentation', 'extra']);
    const one = migrateProfile(doc);
    expect(one).toMatchObject({ ok: false, error: { code: 'agent.profile_invalid' } });
    expect(one.ok ? '' : one.error.message).toMatch(/2 problems[\s\S]*run\.presentation[\s\S]*extra/);
  });
});
