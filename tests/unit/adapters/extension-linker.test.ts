import { describe, expect, it } from 'vitest';
import { linkModules } from '$lib/adapters/extensions/linker';
import type { LinkedModule } from '$lib/adapters/extensions/protocol';
import { HearthFailure } from '$lib/domain/errors';
import type { PackageFile } from '$lib/domain/package-files';

const file = (path: string, source: string): PackageFile => ({
  path,
  bytes: new TextEncoder().encode(source),
});

/** A module's text with each linked module written as `m<its index>`. */
const joined = (m: LinkedModule) => m.segments.map((s) => (typeof s === 'number' ? `m${s}` : s)).join('');
const texts = (modules: LinkedModule[]) => Object.fromEntries(modules.map((m) => [m.path, joined(m)]));

/** Why linking failed; it must fail with a HearthFailure whose code is extension.load_failed. */
async function refusal(files: PackageFile[], entry = 'index.js'): Promise<string> {
  let thrown: unknown;
  try {
    await linkModules({ files, entry });
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(HearthFailure);
  expect((thrown as HearthFailure).error.code).toBe('extension.load_failed');
  return (thrown as HearthFailure).message;
}

describe('linkModules', () => {
  it('links a module without imports as it is', async () => {
    const source = 'export const x = 1;\n';
    expect(await linkModules({ files: [file('index.js', source)], entry: 'index.js' })).toEqual([
      { path: 'index.js', segments: [source] },
    ]);
  });

  it('leaves out package files nothing imports', async () => {
    const modules = await linkModules({
      files: [file('index.js', 'export {};'), file('unused.js', 'export {};'), file('README.md', '# x')],
      entry: 'index.js',
    });
    expect(modules.map((m) => m.path)).toEqual(['index.js']);
  });

  describe('a package of several modules', () => {
    const files = [
      file(
        'index.js',
        [
          "import x from './lib/a.js';",
          "export { y } from './c.mjs';",
          "const later = () => import('./d.js');",
          'export const url = import.meta.url;',
          'export default x;',
          '',
        ].join('\n'),
      ),
      file('lib/a.js', "export * from '../b.js';\nexport default 'a';\n"),
      file('b.js', 'export const b = 1;\n'),
      file('c.mjs', 'export const y = 2;\n'),
      file('d.js', "export default 'd';\n"),
    ];

    it('orders the modules so each follows what it imports, the entry last', async () => {
      const modules = await linkModules({ files, entry: 'index.js' });
      expect(modules.map((m) => m.path)).toEqual(['b.js', 'lib/a.js', 'c.mjs', 'd.js', 'index.js']);
      modules.forEach((m, i) =>
        m.segments.filter((s) => typeof s === 'number').forEach((n) => expect(n).toBeLessThan(i)),
      );
    });

    it('replaces each import of a package module by its index', async () => {
      expect(texts(await linkModules({ files, entry: 'index.js' }))).toEqual({
        'b.js': 'export const b = 1;\n',
        'lib/a.js': "export * from 'm0';\nexport default 'a';\n",
        'c.mjs': 'export const y = 2;\n',
        'd.js': "export default 'd';\n",
        'index.js': [
          "import x from 'm1';",
          "export { y } from 'm2';",
          'const later = () => import("m3");',
          'export const url = import.meta.url;',
          'export default x;',
          '',
        ].join('\n'),
      });
    });

    it('replaces a dynamic import’s whole literal, quotes included', async () => {
      const modules = await linkModules({ files, entry: 'index.js' });
      const entry = modules.at(-1)!;
      const at = entry.segments.indexOf(3);
      expect(entry.segments.slice(at - 1, at + 2)).toEqual(['"', 3, '"']);
      expect(entry.segments[at - 2]).toMatch(/import\($/);
    });

    it('keeps the text between imports exactly', async () => {
      const modules = await linkModules({ files, entry: 'index.js' });
      const entry = modules.at(-1)!;
      expect(entry.segments.filter((s) => typeof s === 'string')).toEqual([
        "import x from '",
        "';\nexport { y } from '",
        "';\nconst later = () => import(",
        '"',
        '"',
        ');\nexport const url = import.meta.url;\nexport default x;\n',
      ]);
    });
  });

  it('links a shared dependency once', async () => {
    const modules = await linkModules({
      files: [
        file('index.js', "import './a.js';\nimport './b.js';\nimport './shared.js';"),
        file('a.js', "import { s } from './shared.js';"),
        file('b.js', "import { s } from './lib/../shared.js';\nexport * from './shared.js';"),
        file('shared.js', 'export const s = 1;'),
      ],
      entry: 'index.js',
    });
    expect(modules.map((m) => m.path)).toEqual(['shared.js', 'a.js', 'b.js', 'index.js']);
    expect(texts(modules)).toEqual({
      'shared.js': 'export const s = 1;',
      'a.js': "import { s } from 'm0';",
      'b.js': "import { s } from 'm0';\nexport * from 'm0';",
      'index.js': "import 'm1';\nimport 'm2';\nimport 'm0';",
    });
  });

  it('resolves imports against the importing module’s folder', async () => {
    const modules = await linkModules({
      files: [
        file('src/main.js', "import './util/x.js';\nimport '../top.js';\nimport './util/../sibling.js';"),
        file('src/util/x.js', "import '../../top.js';\nimport './y.js';"),
        file('src/util/y.js', ''),
        file('src/sibling.js', ''),
        file('top.js', ''),
      ],
      entry: 'src/main.js',
    });
    expect(texts(modules)).toEqual({
      'top.js': '',
      'src/util/y.js': '',
      'src/util/x.js': "import 'm0';\nimport 'm1';",
      'src/sibling.js': '',
      'src/main.js': "import 'm2';\nimport 'm0';\nimport 'm3';",
    });
  });

  it('keeps the quotes and whitespace the source used', async () => {
    const modules = await linkModules({
      files: [
        file('index.js', 'import a from "./a.js";\nimport( `./a.js` );\nimport(\n  "./a.js"\n);'),
        file('a.js', ''),
      ],
      entry: 'index.js',
    });
    expect(joined(modules[1]!)).toBe('import a from "m0";\nimport( "m0" );\nimport(\n  "m0"\n);');
  });

  it('leaves import.meta, strings and comments untouched', async () => {
    const source = [
      'const u = new URL("./x.png", import.meta.url);',
      'const s = "import x from \'./missing.js\'";',
      "// import './missing.js';",
      "/* import('./missing.js') */",
    ].join('\n');
    const modules = await linkModules({ files: [file('index.js', source)], entry: 'index.js' });
    expect(modules).toEqual([{ path: 'index.js', segments: [source] }]);
  });

  it('leaves a TypeScript type-only import untouched', async () => {
    const source = "import type { T } from './types.js';\nexport type { U } from 'lodash';\nexport {};";
    const modules = await linkModules({ files: [file('index.js', source)], entry: 'index.js' });
    expect(modules).toEqual([{ path: 'index.js', segments: [source] }]);
  });

  it('links a default import named type', async () => {
    const modules = await linkModules({
      files: [file('index.js', "import type from './a.js';"), file('a.js', 'export default 1;')],
      entry: 'index.js',
    });
    expect(joined(modules[1]!)).toBe("import type from 'm0';");
  });

  it('links an entry in a folder, last', async () => {
    const modules = await linkModules({
      files: [file('lib/main.mjs', "import './dep.js';"), file('lib/dep.js', '')],
      entry: 'lib/main.mjs',
    });
    expect(modules.map((m) => m.path)).toEqual(['lib/dep.js', 'lib/main.mjs']);
  });

  it.each([
    ['a template with a substitution', 'const x = "a"; import(`./${x}.js`);'],
    ['a variable', 'const name = "./a.js"; import(name);'],
    ['a concatenation', 'import("./" + "a.js");'],
  ])('leaves an import() of %s as written, linking nothing', async (_, source) => {
    const modules = await linkModules({
      files: [file('index.js', source), file('a.js', '')],
      entry: 'index.js',
    });
    expect(modules).toEqual([{ path: 'index.js', segments: [source] }]);
  });

  it('links the literal imports beside a computed one', async () => {
    const modules = await linkModules({
      files: [file('index.js', "import './a.js';\nimport(name);\nimport('./a.js');"), file('a.js', '')],
      entry: 'index.js',
    });
    expect(joined(modules[1]!)).toBe('import \'m0\';\nimport(name);\nimport("m0");');
  });

  describe('refuses', () => {
    it('a bare specifier', async () => {
      const why = await refusal([file('index.js', "import _ from 'lodash';")]);
      expect(why).toContain('`index.js`');
      expect(why).toContain('"lodash"');
      expect(why).toContain('relative path');
    });

    it('a bare specifier in a dynamic import', async () => {
      expect(await refusal([file('index.js', "await import('lodash');")])).toContain('"lodash"');
    });

    it.each(['https://x/y.js', '/abs.js', 'data:text/javascript,export{}'])(
      'the specifier %j',
      async (spec) => {
        expect(await refusal([file('index.js', `import '${spec}';`)])).toContain(`"${spec}"`);
      },
    );

    it('a module that is not in the package', async () => {
      const why = await refusal([file('index.js', "import './lib/missing.js';")]);
      expect(why).toContain('`index.js` imports `lib/missing.js`');
      expect(why).toContain('not in the package');
    });

    it('an entry that is not in the package', async () => {
      expect(await refusal([file('other.js', '')])).toContain('`index.js`');
    });

    it('an import of a file that is not a module', async () => {
      const why = await refusal([
        file('index.js', "import data from './data.json';"),
        file('data.json', '{}'),
      ]);
      expect(why).toContain('`data.json`');
      expect(why).toContain('not a .js or .mjs module');
    });

    it('an entry that is not a module', async () => {
      expect(await refusal([file('index.ts', 'export {};')], 'index.ts')).toContain(
        'not a .js or .mjs module',
      );
    });

    it.each([
      ['index.js', '../x.js'],
      ['index.js', '../../x.js'],
      ['lib/a.js', '../../x.js'],
    ])('from %s, the path %j escaping the package', async (from, spec) => {
      const why = await refusal([file(from, `import '${spec}';`), file('x.js', '')], from);
      expect(why).toContain(`"${spec}"`);
    });

    it('an import inside .git', async () => {
      expect(
        await refusal([file('index.js', "import './.git/hook.js';"), file('.git/hook.js', '')]),
      ).toContain('"./.git/hook.js"');
    });

    it('a cycle', async () => {
      const why = await refusal([
        file('index.js', "import './a.js';"),
        file('a.js', "import './b.js';"),
        file('b.js', "import './a.js';"),
      ]);
      expect(why).toContain('`b.js`');
      expect(why).toContain('`a.js`');
      expect(why).toContain('cycle');
    });

    it('a cycle through a dynamic import', async () => {
      const why = await refusal([
        file('index.js', "import './a.js';"),
        file('a.js', "import('./index.js');"),
      ]);
      expect(why).toContain('cycle');
    });

    it('a module importing itself', async () => {
      expect(await refusal([file('index.js', "import './index.js';")])).toContain('cycle');
    });

    it('a module that is not UTF-8', async () => {
      const why = await refusal([
        file('index.js', "import './bad.js';"),
        { path: 'bad.js', bytes: new Uint8Array([0x65, 0x78, 0xff, 0xfe]) },
      ]);
      expect(why).toContain('`bad.js` is not UTF-8');
    });

    it('a syntax error the lexer reports', async () => {
      const why = await refusal([
        file('index.js', "import './broken.js';"),
        file('broken.js', 'import { from'),
      ]);
      expect(why).toContain('`broken.js` is not valid JavaScript');
    });
  });
});
