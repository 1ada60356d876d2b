import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import { defaultWriterProfile, sessionProfile } from '$lib/domain/profile';
import type { JsonValue } from '$lib/domain/json';
import type { RuntimeContext } from '$lib/worker/context';
import { profileHandlers, uniqueId } from '$lib/worker/handlers/profiles';
import { Transfer } from '$lib/worker/rpc';

const fixtureText = (name: string) =>
  readFileSync(join(import.meta.dirname, '../domain/profile/__fixtures__', name), 'utf8');

let db: HearthDatabase;
let n = 0;
const api = () => {
  db = openHearthDatabase(`profiles-api-${++n}-${Math.random()}`);
  const { methods } = profileHandlers({
    db,
    stores: { profiles: new DexieProfileStore(db) },
    externalTools: [],
  } as unknown as RuntimeContext);
  const signal = new AbortController().signal;
  const plain = async <T>(p: Promise<T | Transfer<T>>): Promise<T> => {
    const v = await p;
    return v instanceof Transfer ? v.value : v;
  };
  return {
    list: () => plain(methods['profiles.list'](undefined, signal)),
    get: (id: string) => plain(methods['profiles.get']({ id }, signal)),
    create: (displayName: string) => plain(methods['profiles.create']({ displayName }, signal)),
    save: (profile: unknown, replaces?: string) =>
      plain(methods['profiles.save']({ profile, replaces }, signal)),
    copy: (id: string) => plain(methods['profiles.copy']({ id }, signal)),
    remove: (id: string) => plain(methods['profiles.delete']({ id }, signal)),
    import: (text: string) => plain(methods['profiles.import']({ text }, signal)),
    export: (ids: string[]) => plain(methods['profiles.export']({ ids }, signal)),
    validate: (text: string, original?: string) =>
      plain(methods['profiles.validate']({ text, original }, signal)),
  };
};

afterEach(async () => {
  db.close();
  await db.delete();
});

describe('profiles API', () => {
  it('lists the built-ins first, read-only, then saved profiles by name', async () => {
    const p = api();
    await p.create('Zeta');
    await p.create('Alpha');
    const { profiles, issues } = await p.list();
    expect(issues).toEqual([]);
    expect(profiles.map((s) => [s.id, s.readOnly, s.scope])).toEqual([
      ['default-writer', true, 'chat'],
      ['session', true, 'session'],
      ['alpha', false, 'chat'],
      ['zeta', false, 'chat'],
    ]);
  });

  it('reports unreadable rows as issues', async () => {
    const p = api();
    await db.profiles.put({ id: 'bad', document: '{' });
    expect((await p.list()).issues).toEqual([
      { profileId: 'bad', kind: 'invalidJson', message: expect.any(String) },
    ]);
  });

  it('refuses to change default-writer; copying it makes an editable profile', async () => {
    const p = api();
    await expect(p.save({ ...defaultWriterProfile(), displayName: 'Mine' })).rejects.toMatchObject({
      code: 'agent.profile_builtin_read_only',
    });
    await expect(p.remove('default-writer')).rejects.toMatchObject({
      code: 'agent.profile_builtin_read_only',
    });
    const copy = await p.copy('default-writer');
    expect(copy).toMatchObject({ id: 'default-writer-copy', displayName: 'Default Writer (copy)' });
    expect((await p.copy('default-writer')).id).toBe('default-writer-copy-2');
    const saved = await p.save({ ...copy, displayName: 'Mine' }, copy.id);
    expect((await p.get(copy.id)).profile).toEqual(saved);
  });

  it('customizes the Session profile in place; deleting restores the built-in', async () => {
    const p = api();
    await expect(p.copy('session')).rejects.toMatchObject({ code: 'agent.profile_copy_unsupported' });
    await p.save({ ...sessionProfile(), displayName: 'My sessions' }, 'session');
    const got = await p.get('session');
    expect(got.summary).toMatchObject({ readOnly: false, customized: true, scope: 'session' });
    expect((await p.list()).profiles[1]).toMatchObject({ id: 'session', displayName: 'My sessions' });
    await p.remove('session');
    expect((await p.get('session')).summary).toMatchObject({ readOnly: true, displayName: 'Session' });
  });

  it('validates on save, with every problem in the message', async () => {
    const p = api();
    const copy = await p.copy('default-writer');
    const bad = { ...copy, displayName: '', plan: { ...copy.plan, mode: 'free' } };
    await expect(p.save(bad, copy.id)).rejects.toMatchObject({
      code: 'agent.profile_display_name_required',
      message: expect.stringMatching(/2 problems[\s\S]*agent\.plan_mode_unsupported/),
    });
    await expect(p.save({ ...copy, extra: true }, copy.id)).rejects.toMatchObject({
      code: 'agent.profile_unknown_field',
    });
  });

  it('migrates a legacy document on a direct save', async () => {
    const p = api();
    const saved = await p.save(JSON.parse(fixtureText('v1-lore-keeper.json')));
    expect(saved).toEqual(JSON.parse(fixtureText('v1-lore-keeper.expected.json')));
  });

  it('renames a profile when its id changes, refusing a taken id', async () => {
    const p = api();
    const a = await p.create('A');
    await p.create('B');
    await expect(p.save({ ...a, id: 'b' }, 'a')).rejects.toMatchObject({ code: 'agent.profile_exists' });
    await p.save({ ...a, id: 'renamed' }, 'a');
    expect((await p.list()).profiles.map((s) => s.id)).toEqual(['default-writer', 'session', 'renamed', 'b']);
  });

  it('validate reports JSON errors, decoding problems and rule problems with paths', async () => {
    const p = api();
    expect((await p.validate('{"id": ')).problems).toEqual([
      { code: 'agent.profile_invalid_json', path: '', message: expect.stringMatching(/not valid JSON/) },
    ]);
    const copy = await p.copy('default-writer');
    const broken = { ...copy, run: { ...copy.run, presentation: 'loud' } };
    expect((await p.validate(JSON.stringify(broken), copy.id)).problems).toEqual([
      { code: 'agent.profile_invalid', path: 'run.presentation', message: expect.any(String) },
    ]);
    const invalid = { ...copy, id: 'default-writer', skills: { visible: [], deny: [] } };
    expect(
      (await p.validate(JSON.stringify(invalid), copy.id)).problems.map((x) => [x.code, x.path]),
    ).toEqual([
      ['agent.profile_exists', 'id'],
      ['agent.profile_skills_visible_empty', 'skills.visible'],
    ]);
    const clean = await p.validate(JSON.stringify(copy), copy.id);
    expect(clean).toEqual({ problems: [], profile: copy });
  });

  it('exports without the model binding and imports back under a free id', async () => {
    const p = api();
    const copy = await p.copy('default-writer');
    const bound = await p.save(
      { ...copy, model: { mode: 'connectionRef', connectionRef: 'my-openai', modelId: 'gpt-4o' } },
      copy.id,
    );
    const exported = await p.export([bound.id]);
    expect(exported.fileName).toBe('default-writer-copy.json');
    expect(exported.text).not.toContain('my-openai');
    const { items } = await p.import(exported.text);
    expect(items).toEqual([
      {
        index: 0,
        ok: true,
        id: 'default-writer-copy-2',
        displayName: 'Default Writer (copy)',
        renamedFrom: 'default-writer-copy',
      },
    ]);
    expect((await p.get('default-writer-copy-2')).profile).toEqual({
      ...bound,
      id: 'default-writer-copy-2',
      model: { mode: 'requiresConfiguration' },
    });
  });

  it('imports a package item by item, reporting each result', async () => {
    const p = api();
    const legacy = JSON.parse(fixtureText('v2-researcher.json')) as JsonValue;
    const invalid = { ...defaultWriterProfile(), id: 'no-name', displayName: ' ' };
    const pkg = {
      version: 1,
      items: [
        { profile: legacy },
        { profile: invalid },
        { profile: { schemaVersion: 7 } },
        { profile: sessionProfile() },
      ],
    };
    const { items } = await p.import(JSON.stringify(pkg));
    expect(items).toEqual([
      { index: 0, ok: true, id: 'researcher', displayName: 'Researcher' },
      {
        index: 1,
        ok: false,
        id: 'no-name',
        displayName: ' ',
        problems: [expect.objectContaining({ code: 'agent.profile_display_name_required' })],
      },
      {
        index: 2,
        ok: false,
        problems: [expect.objectContaining({ code: 'agent.profile_schema_unsupported' })],
      },
      { index: 3, ok: true, id: 'session', displayName: 'Session' },
    ]);
    const again = await p.import(JSON.stringify(sessionProfile()));
    expect(again.items[0]).toMatchObject({ ok: false, problems: [{ code: 'agent.profile_exists' }] });
    await expect(p.import('{"version": 3, "items": []}')).rejects.toMatchObject({
      code: 'agent.profile_package_invalid',
    });
  });

  it('exports several profiles as a package', async () => {
    const p = api();
    const out = await p.export(['default-writer', 'session']);
    expect(out.fileName).toBe('hearth-profiles.json');
    expect(JSON.parse(out.text)).toMatchObject({
      version: 1,
      items: [{ profile: { id: 'default-writer' } }, { profile: { id: 'session' } }],
    });
    await expect(p.export(['missing'])).rejects.toMatchObject({ code: 'agent.profile_not_found' });
  });

  it('picks unique ids within the length limit', () => {
    expect(uniqueId('a', new Set())).toBe('a');
    expect(uniqueId('a', new Set(['a', 'a-2']))).toBe('a-3');
    expect(uniqueId('session', new Set())).toBe('session-2');
    const long = 'x'.repeat(128);
    expect(uniqueId(long, new Set([long]))).toBe(`${'x'.repeat(126)}-2`);
  });
});
