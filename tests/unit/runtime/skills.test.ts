import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieSkillStore } from '$lib/adapters/db/skill-store';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { systemClock } from '$lib/adapters/system/clock';
import type { HearthFailure } from '$lib/domain/errors';
import type { PackageFile } from '$lib/domain/package-files';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { Skills } from '$lib/runtime/skills';
import { skillsSection, withSkillsMount } from '$lib/runtime/skills-mount';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

const encoder = new TextEncoder();
const file = (path: string, text: string): PackageFile => ({ path, bytes: encoder.encode(text) });
const skillMd = (name: string, description: string, body = 'Do it well.') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;
const p = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new Error(raw);
  return parsed.value;
};

async function skillsHarness() {
  const db = openHearthDatabase(`skills-${Math.random()}`);
  const workspaces = new MemoryWorkspaceStore();
  const store = new DexieSkillStore(db, async () => {
    const opened = await workspaces.open('library/skills');
    if (!opened.ok) throw new Error('library');
    return opened.value;
  });
  return { skills: new Skills({ store, clock: systemClock }), store, workspaces };
}

const twoSkills = () => [
  file('alpha/SKILL.md', skillMd('alpha', 'Writes alphabetized lists.')),
  file('alpha/references/guide.md', 'Sort by letter.'),
  file('beta/SKILL.md', skillMd('beta', 'Counts words with a script.')),
  file('beta/scripts/count.py', 'import sys\nprint(len(sys.argv))\n'),
];

const refusal = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => null,
    (x: HearthFailure) => x.error,
  );
  expect(e).not.toBeNull();
  return e!;
};

describe('skills', () => {
  it('reports where a skill departs from the Agent Skills format, and installs it anyway', async () => {
    const { skills } = await skillsHarness();
    const files = [
      file('PDF Tools/SKILL.md', skillMd('pdf_tools', 'x'.repeat(1100))),
      file('alpha/SKILL.md', skillMd('alpha', 'Writes alphabetized lists.')),
    ];
    expect((await skills.inspect(files)).map((i) => [i.name, i.warnings.map((w) => w.code)])).toEqual([
      ['alpha', []],
      ['pdf_tools', ['skill.name_characters', 'skill.folder_mismatch', 'skill.description_too_long']],
    ]);
    const installed = await skills.install(files, { scope: { kind: 'global' }, source: 'file:x.zip' });
    expect(installed.map((s) => s.name)).toEqual(['alpha', 'pdf_tools']);
  });

  it('installs a package of two skills, merges the same again quietly, and asks before replacing a different one', async () => {
    const { skills } = await skillsHarness();
    const installed = await skills.install(twoSkills(), {
      scope: { kind: 'global' },
      source: 'file:two.zip',
    });
    expect(installed.map((s) => [s.name, s.files.length])).toEqual([
      ['alpha', 2],
      ['beta', 2],
    ]);
    expect((await skills.inspect(twoSkills())).map((i) => i.change)).toEqual(['same', 'same']);
    await skills.install(twoSkills(), {
      scope: { kind: 'profile', profileId: 'session' },
      source: 'folder:two',
    });
    const alpha = (await skills.list()).find((s) => s.name === 'alpha')!;
    expect(alpha.scopes).toEqual([{ kind: 'global' }, { kind: 'profile', profileId: 'session' }]);
    expect(alpha.sources).toEqual(['file:two.zip', 'folder:two']);

    const changed = [file('alpha/SKILL.md', skillMd('alpha', 'A different alpha.'))];
    expect((await skills.inspect(changed))[0]!.change).toBe('different');
    const conflict = await refusal(
      skills.install(changed, { scope: { kind: 'global' }, source: 'file:new' }),
    );
    expect(conflict).toMatchObject({ code: 'skill.conflict' });
    expect(conflict.message).toContain('"alpha"');

    await skills.install(changed, {
      scope: { kind: 'global' },
      source: 'file:new',
      decisions: { alpha: 'skip' },
    });
    expect((await skills.list()).find((s) => s.name === 'alpha')!.description).toBe(
      'Writes alphabetized lists.',
    );
    await skills.install(changed, {
      scope: { kind: 'global' },
      source: 'file:new',
      decisions: { alpha: 'replace' },
    });
    const replaced = (await skills.list()).find((s) => s.name === 'alpha')!;
    expect(replaced).toMatchObject({ description: 'A different alpha.', sources: ['file:new'] });
    expect(new TextDecoder().decode(await skills.read('alpha', 'SKILL.md'))).toContain('A different alpha.');
    // The replaced version's files are gone with it.
    await expect(skills.read('alpha', 'references/guide.md')).rejects.toMatchObject({
      error: { code: 'skill.not_found' },
    });
  });

  it('refuses a bad package whole, installing nothing', async () => {
    const { skills } = await skillsHarness();
    const bad = [...twoSkills(), file('gamma/SKILL.md', '# no front matter\n')];
    const e = await refusal(skills.install(bad, { scope: { kind: 'global' }, source: 'file:bad.zip' }));
    expect(e.code).toBe('skill.invalid');
    expect(await skills.list()).toEqual([]);
    expect(
      (
        await refusal(
          skills.install([file('../x/SKILL.md', skillMd('x', 'y'))], {
            scope: { kind: 'global' },
            source: 'f',
          }),
        )
      ).code,
    ).toBe('package.invalid_path');
  });

  it('mounts an invocation’s skills read-only at skills/<name>/ and lists them in its instructions', async () => {
    const { skills, store, workspaces } = await skillsHarness();
    await skills.install(twoSkills(), { scope: { kind: 'global' }, source: 'file:two.zip' });
    await skills.install([file('SKILL.md', skillMd('gamma', 'Only for one character.'))], {
      scope: { kind: 'character', characterId: 'c1' },
      source: 'character:c1',
    });
    const session = await skills.effective({ profileId: 'session', visible: ['*'], deny: ['beta'] });
    expect(session.map((s) => s.name)).toEqual(['alpha']);
    const chat = await skills.effective({
      profileId: 'default-writer',
      characterId: 'c1',
      visible: ['*'],
      deny: [],
    });
    expect(chat.map((s) => s.name)).toEqual(['alpha', 'beta', 'gamma']);

    const opened = await workspaces.open('sessions/s1');
    if (!opened.ok) throw new Error('open');
    await opened.value.write(p('work/notes.md'), encoder.encode('notes'));
    const mounted = withSkillsMount(opened.value, chat, store);
    const names = async (dir?: string) => {
      const listed = await mounted.list(dir === undefined ? undefined : p(dir));
      return listed.ok
        ? listed.value.map((e) => `${e.path}${e.kind === 'directory' ? '/' : ''}`)
        : listed.error.code;
    };
    expect(await names()).toEqual(['skills/', 'work/']);
    expect(await names('skills')).toEqual(['skills/alpha/', 'skills/beta/', 'skills/gamma/']);
    expect(await names('skills/beta')).toEqual(['skills/beta/SKILL.md', 'skills/beta/scripts/']);
    expect(await names('skills/beta/scripts')).toEqual(['skills/beta/scripts/count.py']);
    expect(await names('skills/nope')).toBe('workspace.file_not_found');
    const read = await mounted.read(p('skills/alpha/references/guide.md'));
    expect(read.ok && new TextDecoder().decode(read.value)).toBe('Sort by letter.');
    expect(await mounted.stat(p('skills/beta/scripts'))).toEqual({
      ok: true,
      value: { kind: 'directory', size: 0 },
    });
    expect((await mounted.write(p('skills/alpha/SKILL.md'), encoder.encode('x'))).ok).toBe(false);
    expect((await mounted.remove(p('skills/alpha'))).ok).toBe(false);
    // Everything else is the workspace's own.
    const notes = await mounted.read(p('work/notes.md'));
    expect(notes.ok && new TextDecoder().decode(notes.value)).toBe('notes');

    expect(skillsSection(chat)).toContain('- `beta` (`skills/beta/SKILL.md`): Counts words with a script.');
    expect(skillsSection([])).toBeNull();
  });
});

describe('skills in a Session run', () => {
  it('lists the effective skills in the instructions and lets the agent read one from skills/', async () => {
    const model = scriptedGateway([
      {
        toolCalls: [
          {
            callId: 'r1',
            name: 'workspace_read_file',
            arguments: JSON.stringify({ path: 'skills/beta/SKILL.md' }),
          },
        ],
      },
      {
        toolCalls: [
          { callId: 'l1', name: 'workspace_list_files', arguments: JSON.stringify({ path: 'skills' }) },
        ],
      },
      { text: 'Read it.' },
    ]);
    const h = runtimeHarness(model.gateway);
    await h.ready;
    await h.skills.install(twoSkills(), { scope: { kind: 'global' }, source: 'file:two.zip' });
    await h.skills.install([file('SKILL.md', skillMd('solo', 'For one character only.'))], {
      scope: { kind: 'character', characterId: 'c1' },
      source: 'character:c1',
    });
    const session = await h.service.create();
    await collect(h.service.send(session.id, 'use a skill'));

    const system = model.requests[0]!.messages[0]!;
    const text = JSON.stringify(system);
    expect(text).toContain('## Skills');
    expect(text).toContain('`alpha` (`skills/alpha/SKILL.md`): Writes alphabetized lists.');
    expect(text).not.toContain('solo');
    const results = model.requests[2]!.messages.flatMap((m) => m.parts).filter(
      (p) => p.type === 'tool-result',
    );
    expect(JSON.stringify(results[0])).toContain('Counts words with a script.');
    expect(JSON.stringify(results[1])).toContain('skills/alpha/');
    expect(JSON.stringify(results[1])).toContain('skills/beta/scripts/count.py');
  });
});
