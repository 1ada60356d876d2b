import { describe, expect, it } from 'vitest';
import { checkPackageFiles, type PackageFile } from '$lib/domain/package-files';
import {
  effectiveSkills,
  isScript,
  isTextFile,
  parseSkillMd,
  parseSkillSidecar,
  SKILL_PACKAGE_LIMITS,
  skillFormatWarnings,
  skillHash,
  skillNameProblem,
  skillPackages,
  type InstalledSkillSummary,
} from '$lib/domain/skill';

const bytes = (s: string) => new TextEncoder().encode(s);
const file = (path: string, content = `# ${path}`): PackageFile => ({ path, bytes: bytes(content) });
const md = (front: string, body = '# Use\n\nDo the thing.\n') => `---\n${front}\n---\n${body}`;
const skillMd = (name: string, description = `What ${name} does.`) =>
  md(`name: ${name}\ndescription: ${description}`);

const failure = <E extends { code: string; message: string }>(r: { ok: true } | { ok: false; error: E }) => {
  expect(r.ok).toBe(false);
  return r.ok ? { code: '', message: '' } : r.error;
};
const value = <T>(r: { ok: true; value: T } | { ok: false; error: unknown }): T => {
  expect(r).toMatchObject({ ok: true });
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
};

describe('SKILL_PACKAGE_LIMITS', () => {
  it('allows 1,000 files, 16 MiB each, 256 MiB in all, compression 100', () => {
    expect(SKILL_PACKAGE_LIMITS).toEqual({
      files: 1000,
      fileBytes: 16 * 1024 * 1024,
      totalBytes: 256 * 1024 * 1024,
      compressionRatio: 100,
    });
  });

  it('refuses a package of 1,001 files through checkPackageFiles', () => {
    const files = Array.from({ length: 1001 }, (_, i) => file(`f${i}.txt`, 'x'));
    expect(failure(checkPackageFiles(files, SKILL_PACKAGE_LIMITS)).code).toBe('package.too_large');
  });
});

describe('parseSkillMd', () => {
  it('reads name, description, the optional fields and the body', () => {
    const r = parseSkillMd(
      bytes(
        md(
          [
            'name: weather',
            'description: Forecasts for a place.',
            'license: MIT',
            'metadata:',
            '  author: Ada',
            '  version: "1.0"',
            '  tags: [forecast, outdoors]',
          ].join('\n'),
          '# Weather\n',
        ),
      ),
    );
    expect(value(r)).toEqual({
      name: 'weather',
      description: 'Forecasts for a place.',
      license: 'MIT',
      metadata: { author: 'Ada', version: '1.0', tags: ['forecast', 'outdoors'] },
      body: '# Weather\n',
    });
  });

  it('trims name and description', () => {
    const r = value(parseSkillMd(bytes(md('name: "  weather "\ndescription: "  Forecasts. "'))));
    expect([r.name, r.description]).toEqual(['weather', 'Forecasts.']);
  });

  it('allows keys it does not know, and leaves them out', () => {
    const r = value(
      parseSkillMd(
        bytes(
          md(
            'name: pdf\ndescription: PDFs.\nallowed-tools: Read Bash\ncompatibility: claude\nmetadata:\n  homepage: https://x',
          ),
        ),
      ),
    );
    expect(r).toEqual({ name: 'pdf', description: 'PDFs.', body: '# Use\n\nDo the thing.\n' });
  });

  it('accepts CRLF line ends, and reads the body with LF', () => {
    const r = value(
      parseSkillMd(bytes('---\r\nname: crlf\r\ndescription: Windows.\r\n---\r\nline 1\r\nline 2\r\n')),
    );
    expect(r).toEqual({ name: 'crlf', description: 'Windows.', body: 'line 1\nline 2\n' });
  });

  it('accepts front matter closed at the end of the file, with an empty body', () => {
    expect(value(parseSkillMd(bytes('---\nname: a\ndescription: b\n---'))).body).toBe('');
  });

  it('closes the front matter only at a line that is exactly ---', () => {
    const r = value(parseSkillMd(bytes('---\nname: a\ndescription: b\n----: a key\n---\nbody')));
    expect(r).toEqual({ name: 'a', description: 'b', body: 'body' });
    expect(failure(parseSkillMd(bytes('---\nname: a\ndescription: b\n----\nbody'))).message).toMatch(
      /not closed/,
    );
  });

  it('refuses a file without front matter', () => {
    const e = failure(parseSkillMd(bytes('# Weather\n\nname: weather\n')));
    expect(e.code).toBe('skill.invalid');
    expect(e.message).toMatch(/`SKILL\.md` must start with a line "---"/);
  });

  it('refuses front matter not at the very start', () => {
    expect(failure(parseSkillMd(bytes('\n---\nname: a\ndescription: b\n---\n'))).message).toMatch(
      /must start with/,
    );
  });

  it('refuses unclosed front matter', () => {
    const e = failure(parseSkillMd(bytes('---\nname: a\ndescription: b\n--- \n# body')));
    expect(e.code).toBe('skill.invalid');
    expect(e.message).toMatch(/not closed by a line "---"/);
  });

  it('refuses empty front matter: it has no name', () => {
    expect(failure(parseSkillMd(bytes('---\n---\nbody'))).message).toMatch(/must be YAML keys and values/);
  });

  it('refuses front matter that is not a mapping', () => {
    expect(failure(parseSkillMd(bytes(md('- a\n- b')))).message).toMatch(/must be YAML keys and values/);
  });

  it('refuses YAML that does not parse, with the parser’s message and the line', () => {
    const e = failure(parseSkillMd(bytes(md('name: [weather\ndescription: x'))));
    expect(e.code).toBe('skill.invalid');
    expect(e.message).toMatch(/^`SKILL\.md`'s front matter is not valid YAML: .+\(line \d+\)\.$/);
  });

  it('refuses a key given twice', () => {
    expect(failure(parseSkillMd(bytes(md('name: a\nname: b\ndescription: c')))).message).toMatch(
      /not valid YAML: Map keys must be unique \(line 3\)/,
    );
  });

  it('refuses custom tags rather than reading them as text', () => {
    expect(failure(parseSkillMd(bytes(md('name: a\ndescription: !js/function x')))).message).toMatch(
      /not valid YAML: Unresolved tag/,
    );
  });

  it('refuses a missing or empty name', () => {
    expect(failure(parseSkillMd(bytes(md('description: x')))).message).toBe(
      "`SKILL.md`'s front matter has no name.",
    );
    expect(failure(parseSkillMd(bytes(md('name:\ndescription: x')))).message).toBe(
      "`SKILL.md`'s front matter has no name.",
    );
    expect(failure(parseSkillMd(bytes(md('name: "  "\ndescription: x')))).message).toBe(
      '`SKILL.md`: name is empty.',
    );
  });

  it('refuses a missing, empty or non-text description', () => {
    expect(failure(parseSkillMd(bytes(md('name: a')))).message).toBe(
      "`SKILL.md`'s front matter has no description.",
    );
    expect(failure(parseSkillMd(bytes(md('name: a\ndescription: ""')))).message).toBe(
      '`SKILL.md`: description is empty.',
    );
    expect(failure(parseSkillMd(bytes(md('name: a\ndescription: [x]')))).message).toBe(
      '`SKILL.md`: description must be text.',
    );
  });

  it('refuses a name that is not text', () => {
    expect(failure(parseSkillMd(bytes(md('name: 42\ndescription: x')))).message).toBe(
      '`SKILL.md`: name must be text.',
    );
  });

  it.each([
    ['Weather', /lowercase letters/],
    ['my skill', /lowercase letters/],
    ['..', /cannot be "\.\."/],
    ['.', /cannot be "\."/],
    ['a.b', /lowercase letters/],
    ['ünicode', /lowercase letters/],
    ['a'.repeat(129), /129 characters; at most 128/],
  ])('refuses the name %j', (name, why) => {
    const e = failure(parseSkillMd(bytes(md(`name: "${name}"\ndescription: x`))));
    expect(e.code).toBe('skill.invalid');
    expect(e.message).toMatch(why);
  });

  it('accepts names of a-z, 0-9, "-" and "_", up to 128 characters', () => {
    for (const name of ['a', 'pdf-tools_2', '0', 'a'.repeat(128)])
      expect(skillNameProblem(name), name).toBeNull();
  });

  it('refuses optional fields of the wrong type', () => {
    expect(failure(parseSkillMd(bytes(md('name: a\ndescription: b\nlicense: 3')))).message).toBe(
      '`SKILL.md`: license must be text.',
    );
    expect(failure(parseSkillMd(bytes(md('name: a\ndescription: b\nmetadata: x')))).message).toBe(
      '`SKILL.md`: metadata must be YAML keys and values.',
    );
    expect(
      failure(parseSkillMd(bytes(md('name: a\ndescription: b\nmetadata:\n  version: 1.5')))).message,
    ).toBe('`SKILL.md`: metadata.version must be text (quote it: version: "1.5").');
    expect(
      failure(parseSkillMd(bytes(md('name: a\ndescription: b\nmetadata:\n  tags: [a, 2]')))).message,
    ).toBe('`SKILL.md`: metadata.tags must be a list of text.');
  });

  it('refuses a SKILL.md over 1 MiB', () => {
    const big = skillMd('big') + 'x'.repeat(1024 * 1024);
    const e = failure(parseSkillMd(bytes(big)));
    expect(e.code).toBe('skill.invalid');
    expect(e.message).toMatch(/^`SKILL\.md` is [\d,]+ bytes; at most 1 MiB\.$/);
  });

  it('accepts a SKILL.md of exactly 1 MiB', () => {
    const head = skillMd('edge');
    const exact = head + 'x'.repeat(1024 * 1024 - bytes(head).byteLength);
    expect(parseSkillMd(bytes(exact)).ok).toBe(true);
  });

  it('refuses a SKILL.md that is not UTF-8, naming the file', () => {
    const raw = new Uint8Array([...bytes('---\nname: a\ndescription: '), 0xff, 0xfe, ...bytes('\n---\n')]);
    const e = failure(parseSkillMd(raw, 'pdf/SKILL.md'));
    expect(e).toEqual({ code: 'skill.invalid', message: '`pdf/SKILL.md` is not UTF-8 text.' });
  });
});

describe('parseSkillSidecar', () => {
  const sidecar = (v: unknown) => bytes(JSON.stringify(v));

  it('accepts every documented field', () => {
    const full = {
      version: 1,
      displayName: 'Weather',
      sourceKind: 'builtin',
      allowImplicitInvocation: true,
      recommendedTools: ['workspace.read_file'],
      recommendedContext: { defaultBudgetTokens: 4000, preferredMode: 'summary' },
      tags: ['forecast'],
      notes: 'Advisory.',
    };
    expect(value(parseSkillSidecar(sidecar(full)))).toEqual(full);
    expect(value(parseSkillSidecar(sidecar({ version: 1 })))).toEqual({ version: 1 });
  });

  it('refuses an unknown field, at the top or inside recommendedContext', () => {
    expect(failure(parseSkillSidecar(sidecar({ version: 1, grants: ['shell'] }))).message).toBe(
      '`agents/tauritavern.json` is not valid: unknown field "grants"',
    );
    expect(
      failure(parseSkillSidecar(sidecar({ version: 1, recommendedContext: { maxTokens: 1 } }))).message,
    ).toMatch(/unknown field "recommendedContext\.maxTokens"/);
  });

  it('refuses another version, wrong types and bad JSON', () => {
    expect(failure(parseSkillSidecar(sidecar({ version: 2 }))).message).toMatch(/version must be 1/);
    expect(failure(parseSkillSidecar(sidecar({}))).message).toMatch(/version must be 1/);
    expect(failure(parseSkillSidecar(sidecar({ version: 1, tags: 'a' }))).message).toMatch(
      /tags must be a list of text/,
    );
    expect(
      failure(parseSkillSidecar(sidecar({ version: 1, recommendedContext: { defaultBudgetTokens: -1 } })))
        .message,
    ).toMatch(/defaultBudgetTokens must be above 0/);
    const e = failure(parseSkillSidecar(bytes('{version: 1}')));
    expect(e.code).toBe('skill.invalid');
    expect(e.message).toMatch(/^`agents\/tauritavern\.json` is not valid JSON/);
  });
});

describe('skillPackages', () => {
  it('reads a lone SKILL.md as one skill', () => {
    const [skill, ...rest] = value(skillPackages([file('SKILL.md', skillMd('weather'))]));
    expect(rest).toEqual([]);
    expect(skill).toEqual({
      name: 'weather',
      description: 'What weather does.',
      frontMatter: { name: 'weather', description: 'What weather does.' },
      files: [{ path: 'SKILL.md', bytes: bytes(skillMd('weather')) }],
    });
  });

  it('reads a lone file whose name ends with SKILL.md as that skill’s SKILL.md', () => {
    for (const path of ['weather.SKILL.md', 'downloads/weather-SKILL.md']) {
      const skills = value(skillPackages([file(path, skillMd('weather'))]));
      expect(skills.map((s) => [s.name, s.files.map((f) => f.path)])).toEqual([['weather', ['SKILL.md']]]);
    }
  });

  it('does not take a lone file of another name for a skill', () => {
    for (const path of ['README.md', 'skill.md', 'SKILL.md.txt'])
      expect(failure(skillPackages([file(path, skillMd('x'))])).message, path).toMatch(/no SKILL\.md/);
  });

  it('reads a package with SKILL.md at its root as one skill with all the files', () => {
    const files = [
      file('scripts/run.py', 'print(1)'),
      file('SKILL.md', skillMd('pdf-tools')),
      file('references/api.md'),
      file('agents/tauritavern.json', JSON.stringify({ version: 1, displayName: 'PDF tools' })),
    ];
    const [skill] = value(skillPackages(files));
    expect(skill!.name).toBe('pdf-tools');
    expect(skill!.sidecar).toEqual({ version: 1, displayName: 'PDF tools' });
    expect(skill!.files.map((f) => f.path)).toEqual([
      'SKILL.md',
      'agents/tauritavern.json',
      'references/api.md',
      'scripts/run.py',
    ]);
  });

  it('reads a zipped skill folder as one skill, with paths inside it', () => {
    const skills = value(skillPackages([file('pdf/SKILL.md', skillMd('pdf')), file('pdf/examples/a.md')]));
    expect(skills.map((s) => [s.name, s.files.map((f) => f.path)])).toEqual([
      ['pdf', ['SKILL.md', 'examples/a.md']],
    ]);
  });

  it('reads each top-level folder with a SKILL.md as a skill, in name order', () => {
    const skills = value(
      skillPackages([
        file('zeta/SKILL.md', skillMd('alpha')),
        file('zeta/assets/logo.png', 'png'),
        file('beta/SKILL.md', skillMd('beta')),
        file('beta/references/notes.md'),
      ]),
    );
    expect(skills.map((s) => [s.name, s.files.map((f) => f.path)])).toEqual([
      ['alpha', ['SKILL.md', 'assets/logo.png']],
      ['beta', ['SKILL.md', 'references/notes.md']],
    ]);
  });

  it('names a skill by its front matter, not its folder', () => {
    const [skill] = value(
      skillPackages([file('My Folder/SKILL.md', skillMd('real-name')), file('My Folder/x.md')]),
    );
    expect(skill!.name).toBe('real-name');
  });

  it('reads a zipped folder of skill folders from inside it', () => {
    const skills = value(
      skillPackages([file('skills/a/SKILL.md', skillMd('a')), file('skills/b/SKILL.md', skillMd('b'))]),
    );
    expect(skills.map((s) => s.name)).toEqual(['a', 'b']);
  });

  it('refuses files outside the skill folders of a multi-skill package, naming them', () => {
    const e = failure(
      skillPackages([
        file('a/SKILL.md', skillMd('a')),
        file('b/SKILL.md', skillMd('b')),
        file('README.md'),
        file('c/notes.md'),
      ]),
    );
    expect(e).toEqual({
      code: 'skill.invalid',
      message: '`README.md`, `c/notes.md` are not inside a skill folder (a top-level folder with SKILL.md).',
    });
  });

  it('refuses two skills of the same name in one package', () => {
    const e = failure(
      skillPackages([file('a/SKILL.md', skillMd('same')), file('b/SKILL.md', skillMd('same'))]),
    );
    expect(e.code).toBe('skill.invalid');
    expect(e.message).toBe(
      'Two skills in the package are named "same" (`a/` and `b/`); a name is a skill\'s identity.',
    );
  });

  it('refuses a package without SKILL.md', () => {
    const e = failure(skillPackages([file('README.md'), file('scripts/run.sh', 'echo')]));
    expect(e.code).toBe('skill.invalid');
    expect(e.message).toMatch(/^The package has no SKILL\.md\./);
    expect(failure(skillPackages([])).message).toMatch(/no SKILL\.md/);
  });

  it('refuses a SKILL.md nested too deep, naming it', () => {
    expect(failure(skillPackages([file('a/b/SKILL.md', skillMd('x')), file('c/d.md')])).message).toBe(
      "SKILL.md must be at the package's root or in a top-level folder of it; found only `a/b/SKILL.md`.",
    );
  });

  it('ignores __MACOSX folders', () => {
    const skills = value(
      skillPackages([
        file('pdf/SKILL.md', skillMd('pdf')),
        file('__MACOSX/pdf/._SKILL.md', '\u0000binary'),
        file('__MACOSX/._pdf', 'x'),
      ]),
    );
    expect(skills.map((s) => [s.name, s.files.map((f) => f.path)])).toEqual([['pdf', ['SKILL.md']]]);
  });

  it('refuses paths inside .git, .ssh or .env', () => {
    for (const path of ['.git/config', 'a/.ssh/id_rsa', '.env/x']) {
      const e = failure(skillPackages([file('SKILL.md', skillMd('a')), file(path)]));
      expect(e.code, path).toBe('package.invalid_path');
    }
  });

  it('names the SKILL.md that is wrong in a multi-skill package', () => {
    const e = failure(
      skillPackages([file('a/SKILL.md', skillMd('a')), file('b/SKILL.md', md('name: B\ndescription: x'))]),
    );
    expect(e.message).toMatch(/^`b\/SKILL\.md`: name "B" may use only lowercase/);
  });

  it('refuses a skill whose sidecar is invalid or has an unknown field, naming it', () => {
    const withSidecar = (json: string) =>
      skillPackages([file('w/SKILL.md', skillMd('w')), file('w/agents/tauritavern.json', json)]);
    expect(failure(withSidecar('{"version":1,"permissions":["all"]}')).message).toBe(
      '`w/agents/tauritavern.json` is not valid: unknown field "permissions"',
    );
    expect(failure(withSidecar('{"version":1,"tags":[1]}')).code).toBe('skill.invalid');
    expect(failure(withSidecar('not json')).message).toMatch(
      /^`w\/agents\/tauritavern\.json` is not valid JSON/,
    );
  });

  it('refuses a SKILL.md over 1 MiB or not UTF-8 inside a package', () => {
    expect(
      failure(skillPackages([file('a/SKILL.md', skillMd('a') + 'x'.repeat(1024 * 1024))])).message,
    ).toMatch(/^`a\/SKILL\.md` is [\d,]+ bytes; at most 1 MiB\.$/);
    expect(failure(skillPackages([{ path: 'SKILL.md', bytes: new Uint8Array([0xc3, 0x28]) }])).message).toBe(
      '`SKILL.md` is not UTF-8 text.',
    );
  });
});

describe('skillHash', () => {
  const files = [file('SKILL.md', skillMd('a')), file('references/x.md', 'x'), file('scripts/y.sh', 'y')];

  it('does not depend on the order of the files', async () => {
    const h = await skillHash(files);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(await skillHash([...files].reverse())).toBe(h);
  });

  it('changes with one byte, or with a path', async () => {
    const h = await skillHash(files);
    expect(await skillHash([...files.slice(0, 2), file('scripts/y.sh', 'z')])).not.toBe(h);
    expect(await skillHash([...files.slice(0, 2), file('scripts/z.sh', 'y')])).not.toBe(h);
  });

  it('is the same for a skill read from a folder and from a root', async () => {
    const [fromRoot] = value(skillPackages([file('SKILL.md', skillMd('a')), file('x.md', 'x')]));
    const [fromFolder] = value(skillPackages([file('a/SKILL.md', skillMd('a')), file('a/x.md', 'x')]));
    expect(await skillHash(fromFolder!.files)).toBe(await skillHash(fromRoot!.files));
  });
});

describe('isScript and isTextFile', () => {
  it('flags files under scripts/', () => {
    expect(isScript('scripts/run.py')).toBe(true);
    expect(isScript('scripts/lib/a.js')).toBe(true);
    expect(isScript('SKILL.md')).toBe(false);
    expect(isScript('references/scripts/a.py')).toBe(false);
    expect(isScript('scripts.md')).toBe(false);
  });

  it('calls valid UTF-8 text and anything else binary', () => {
    expect(isTextFile(bytes('héllo'))).toBe(true);
    expect(isTextFile(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff]))).toBe(false);
  });
});

describe('effectiveSkills', () => {
  const installed: InstalledSkillSummary[] = [
    { name: 'weather', scopes: [{ kind: 'global' }] },
    { name: 'coder-notes', scopes: [{ kind: 'profile', profileId: 'coder' }] },
    { name: 'writer-notes', scopes: [{ kind: 'profile', profileId: 'writer' }] },
    { name: 'alice-lore', scopes: [{ kind: 'character', characterId: 'alice' }] },
    { name: 'bob-lore', scopes: [{ kind: 'character', characterId: 'bob' }] },
    {
      name: 'shared',
      scopes: [
        { kind: 'profile', profileId: 'writer' },
        { kind: 'character', characterId: 'alice' },
      ],
    },
    { name: 'orphan', scopes: [] },
  ];
  const all = { visible: ['*'], deny: [] };

  it('gives a Session profile the global skills and its own', () => {
    expect(effectiveSkills(installed, { profileId: 'coder', ...all })).toEqual(['coder-notes', 'weather']);
  });

  it('gives a Chat the global skills, its profile’s and its character’s', () => {
    expect(effectiveSkills(installed, { profileId: 'coder', characterId: 'alice', ...all })).toEqual([
      'alice-lore',
      'coder-notes',
      'shared',
      'weather',
    ]);
    expect(effectiveSkills(installed, { profileId: 'writer', characterId: 'bob', ...all })).toEqual([
      'bob-lore',
      'shared',
      'weather',
      'writer-notes',
    ]);
  });

  it('narrows to the profile’s visible skills', () => {
    expect(
      effectiveSkills(installed, {
        profileId: 'coder',
        characterId: 'alice',
        visible: ['weather', 'shared', 'nope'],
        deny: [],
      }),
    ).toEqual(['shared', 'weather']);
  });

  it('lets deny win over visible', () => {
    expect(effectiveSkills(installed, { profileId: 'coder', visible: ['*'], deny: ['weather'] })).toEqual([
      'coder-notes',
    ]);
    expect(
      effectiveSkills(installed, {
        profileId: 'coder',
        visible: ['weather', 'coder-notes'],
        deny: ['weather'],
      }),
    ).toEqual(['coder-notes']);
    expect(effectiveSkills(installed, { profileId: 'coder', visible: ['*'], deny: ['*'] })).toEqual([]);
  });

  it('never applies a character’s skills without a character, nor a skill with no scope', () => {
    const names = effectiveSkills(installed, { profileId: 'other', ...all });
    expect(names).toEqual(['weather']);
  });
});

describe('skillFormatWarnings', () => {
  const codes = (skill: Parameters<typeof skillFormatWarnings>[0]) =>
    skillFormatWarnings(skill).map((w) => w.code);

  it('has none for a skill that follows the format, with or without a folder', () => {
    expect(codes({ name: 'pdf-tools', description: 'Reads PDFs.', folder: 'pdf-tools' })).toEqual([]);
    expect(codes({ name: 'pdf', description: 'x'.repeat(1024) })).toEqual([]);
    expect(codes({ name: 'a'.repeat(64), description: 'x' })).toEqual([]);
  });

  it('warns when the folder is not named as the skill', () => {
    expect(skillFormatWarnings({ name: 'pdf', description: 'x', folder: 'PDF tools' })).toEqual([
      {
        code: 'skill.folder_mismatch',
        message: "The folder is named “PDF tools”; the format asks for the skill's name, “pdf”.",
      },
    ]);
  });

  it('warns about a name over 64 characters', () => {
    expect(skillFormatWarnings({ name: 'a'.repeat(65), description: 'x' })).toEqual([
      {
        code: 'skill.name_too_long',
        message: 'The name is 65 characters; the format allows at most 64.',
      },
    ]);
  });

  it('warns about characters and hyphens the format does not allow in a name', () => {
    for (const name of ['pdf_tools', '-pdf', 'pdf-', 'pdf--tools'])
      expect(codes({ name, description: 'x' }), name).toEqual(['skill.name_characters']);
  });

  it('counts a description over 1,024 characters by characters, not UTF-16 units', () => {
    expect(skillFormatWarnings({ name: 'pdf', description: 'x'.repeat(1025) })).toEqual([
      {
        code: 'skill.description_too_long',
        message: 'The description is 1,025 characters; the format allows at most 1,024.',
      },
    ]);
    expect(codes({ name: 'pdf', description: '😀'.repeat(1024) })).toEqual([]);
  });

  it('gives every warning that applies', () => {
    expect(codes({ name: `${'b'.repeat(64)}_`, description: 'x'.repeat(2000), folder: 'b' })).toEqual([
      'skill.name_too_long',
      'skill.name_characters',
      'skill.folder_mismatch',
      'skill.description_too_long',
    ]);
  });

  it('reads the folder from the package: a skill folder has one, a root SKILL.md none', () => {
    const [root] = value(skillPackages([file('SKILL.md', skillMd('pdf'))]));
    expect(root!.folder).toBeUndefined();
    const skills = value(
      skillPackages([
        file('skills/pdf/SKILL.md', skillMd('pdf')),
        file('skills/Docs/SKILL.md', skillMd('docx')),
      ]),
    );
    expect(skills.map((s) => [s.name, s.folder])).toEqual([
      ['docx', 'Docs'],
      ['pdf', 'pdf'],
    ]);
  });
});
