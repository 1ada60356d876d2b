import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES } from '$lib/domain/builtin-tools';
import {
  decodeImportedProfile,
  defaultWriterProfile,
  exportProfilesJson,
  profilePackage,
  readImportDocuments,
  stripModelBinding,
  type ProfileV5,
} from '$lib/domain/profile';
import { builtinToolId } from '$lib/domain/tool-id';

const ctx = { knownToolIds: new Set<string>(BUILTIN_TOOL_NAMES.map((n) => builtinToolId(n))) };

const bound = (): ProfileV5 => ({
  ...defaultWriterProfile(),
  id: 'bound',
  displayName: 'Bound',
  model: { mode: 'connectionRef', connectionRef: 'my-openai', modelId: 'gpt-4o' },
});

describe('export', () => {
  it('strips a connectionRef binding to requiresConfiguration and keeps everything else', () => {
    const p = bound();
    const out = stripModelBinding(p);
    expect(out.model).toEqual({ mode: 'requiresConfiguration' });
    expect({ ...out, model: p.model }).toEqual(p);
    expect(p.model.mode).toBe('connectionRef');
  });

  it.each(['currentPromptSnapshot', 'requiresConfiguration'] as const)('keeps a %s binding', (mode) => {
    const p = { ...bound(), model: { mode } };
    expect(stripModelBinding(p)).toEqual(p);
  });

  it('exports one profile as its bare document, several as a package, none with a binding', () => {
    const one = JSON.parse(exportProfilesJson([bound()]));
    expect(one).toMatchObject({ id: 'bound', model: { mode: 'requiresConfiguration' } });
    expect(JSON.stringify(one)).not.toContain('my-openai');
    const several = JSON.parse(exportProfilesJson([bound(), defaultWriterProfile()]));
    expect(several).toEqual(profilePackage([bound(), defaultWriterProfile()]));
    expect(several.version).toBe(1);
    expect(several.items.map((i: { profile: ProfileV5 }) => i.profile.id)).toEqual([
      'bound',
      'default-writer',
    ]);
    expect(JSON.stringify(several)).not.toContain('gpt-4o');
  });
});

describe('import', () => {
  it('reads a bare document, an array and a package', () => {
    const doc = defaultWriterProfile();
    expect(readImportDocuments(JSON.stringify(doc))).toEqual({ ok: true, value: [doc] });
    expect(readImportDocuments(JSON.stringify([doc, doc]))).toEqual({ ok: true, value: [doc, doc] });
    const pkg = { version: 1, items: [{ profile: doc, note: 'extra item keys are allowed' }] };
    expect(readImportDocuments(JSON.stringify(pkg))).toEqual({ ok: true, value: [doc] });
  });

  it.each([
    ['text that is not JSON', '{"id": ', 'agent.profile_invalid_json'],
    [
      'a package of another version',
      JSON.stringify({ version: 2, items: [] }),
      'agent.profile_package_invalid',
    ],
    [
      'a package whose items are not an array',
      JSON.stringify({ version: 1, items: {} }),
      'agent.profile_package_invalid',
    ],
    [
      'a package item without an object profile',
      JSON.stringify({ version: 1, items: [{ profile: 'x' }] }),
      'agent.profile_package_invalid',
    ],
  ])('rejects %s', (_name, text, code) => {
    expect(readImportDocuments(text)).toMatchObject({ ok: false, error: { code } });
  });

  it('migrates and validates each document', () => {
    const legacy = {
      ...defaultWriterProfile(),
      id: 'legacy',
      schemaVersion: 2,
      tools: {
        allow: ['workspace.write_file', 'workspace.commit', 'workspace.finish', 'skill.read'],
        maxRounds: 9,
      },
    };
    const r = decodeImportedProfile(legacy, ctx);
    expect(r.ok && r.value.tools.allow).toEqual([
      'builtin:workspace.write_file',
      'builtin:workspace.commit',
      'builtin:workspace.finish',
    ]);
    const invalid = decodeImportedProfile({ ...defaultWriterProfile(), displayName: ' ' }, ctx);
    expect(invalid).toMatchObject({ ok: false, error: [{ code: 'agent.profile_display_name_required' }] });
    const garbage = decodeImportedProfile({ ...defaultWriterProfile(), schemaVersion: 9 }, ctx);
    expect(garbage).toMatchObject({ ok: false, error: [{ code: 'agent.profile_schema_unsupported' }] });
  });

  it('an exported profile imports back unchanged, binding stripped', () => {
    const docs = readImportDocuments(exportProfilesJson([bound()]));
    expect(docs.ok).toBe(true);
    if (!docs.ok) return;
    const r = decodeImportedProfile(docs.value[0], ctx);
    expect(r).toEqual({ ok: true, value: { ...bound(), model: { mode: 'requiresConfiguration' } } });
  });
});
