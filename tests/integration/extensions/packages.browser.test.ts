import { afterEach, describe, expect, it } from 'vitest';
import type { HearthFailure } from '$lib/domain/errors';
import { extensionHarness, moduleFile, textFile } from '../../support/extension-harness';

/**
 * Installing, updating and refusing packages through the real isolated loader: a refused package
 * says why and leaves nothing installed; an update keeps what the person chose.
 */
let harness: ReturnType<typeof extensionHarness>;
afterEach(async () => harness?.close());

const tool = (name: string, result = `'${name}'`) =>
  `hearth.registerTool({ name: '${name}', description: 'Says ${name}.', inputSchema: { type: 'object' }, handler: () => ${result} });\n`;

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => null,
    (e: HearthFailure) => e.error,
  );
  expect(error).not.toBeNull();
  return error!;
};

const manifest = (fields: Record<string, unknown>) =>
  textFile(
    'manifest.json',
    JSON.stringify({ id: 'pkg', name: 'Package', version: '1.0.0', description: 'A package.', ...fields }),
  );

describe('extension packages', () => {
  it('installs a folder whose modules import each other, and calls it', async () => {
    harness = extensionHarness();
    const view = await harness.install([
      manifest({}),
      textFile('index.js', "import { twice } from './lib/math.js';\n" + tool('twice', 'twice(21)')),
      textFile('lib/math.js', "export { twice } from './twice.mjs';"),
      textFile('lib/twice.mjs', 'export const twice = (n) => n * 2;'),
      textFile('README.md', '# A package'),
    ]);
    expect(view.extension).toMatchObject({ id: 'pkg', version: '1.0.0', enabled: true, entry: 'index.js' });
    expect(view.extension.files.map((f) => f.path)).toEqual([
      'README.md',
      'index.js',
      'lib/math.js',
      'lib/twice.mjs',
      'manifest.json',
    ]);
    expect(view.tools).toMatchObject([{ name: 'twice', toolId: 'extension/pkg:twice', permission: 'ask' }]);
    expect(await harness.call('extension/pkg:twice')).toMatchObject({ isError: false, content: '42' });
  });

  it('refuses bad packages with the reason, installing nothing', { timeout: 60_000 }, async () => {
    harness = extensionHarness();
    const cases: [string, Parameters<typeof harness.install>[0], string, string][] = [
      [
        'no manifest',
        [textFile('index.js', tool('a')), textFile('other.js', '')],
        'extension.manifest_invalid',
        'no manifest.json',
      ],
      [
        'a module without a manifest export',
        [textFile('solo.js', tool('a'))],
        'extension.manifest_invalid',
        'exports no manifest',
      ],
      [
        'an unknown manifest field',
        [manifest({ permissions: ['all'] }), textFile('index.js', tool('a'))],
        'extension.manifest_invalid',
        'unknown field "permissions"',
      ],
      [
        'a path escaping the package',
        [manifest({}), textFile('index.js', tool('a')), textFile('../../escape.js', '')],
        'package.invalid_path',
        '`..`',
      ],
      [
        'a module that throws as it loads',
        [moduleFile({ id: 'boom' }, "throw new Error('boom at load');")],
        'extension.load_failed',
        'boom at load',
      ],
      [
        'an import of another package',
        [moduleFile({ id: 'bare' }, "import _ from 'lodash';\n" + tool('a'))],
        'extension.load_failed',
        '"lodash"',
      ],
      [
        'a thousand tools',
        [
          moduleFile(
            { id: 'many' },
            `for (let i = 0; i < 1000; i++) ${tool('t${i}').replace(/'t\$\{i\}'/, '`t${i}`')}`,
          ),
        ],
        'extension.registration_invalid',
        'registers 1000 tools',
      ],
      [
        'a schema that is not an object',
        [
          moduleFile(
            { id: 'schema' },
            "hearth.registerTool({ name: 'a', description: 'd', inputSchema: { type: 'string' }, handler: () => 1 });",
          ),
        ],
        'extension.registration_invalid',
        'root has type "object"',
      ],
      ['no tools', [moduleFile({ id: 'empty' }, '')], 'extension.registration_invalid', 'registers no tools'],
      [
        'a host that is the app itself',
        [moduleFile({ id: 'self', hosts: [location.origin] }, tool('a'))],
        'extension.manifest_invalid',
        'Hearth itself',
      ],
    ];
    for (const [what, files, code, says] of cases) {
      const error = await refusal(harness.install(files));
      expect({ what, code: error.code }).toEqual({ what, code });
      expect(error.message, what).toContain(says);
    }
    expect(await harness.extensions.list()).toEqual([]);
  });

  it('installs only what was reviewed: a module that answers differently when loaded again is refused', async () => {
    harness = extensionHarness();
    await harness.install([moduleFile({ id: 'victim' }, tool('keep'))]);
    await harness.extensions.setPermission('victim', 'keep', 'allow');
    // Each load names another id: the one reviewed is never the one a second load reports.
    const shifty = {
      path: 'shifty.js',
      bytes: new TextEncoder().encode(
        "export const manifest = { id: Math.random() < 2 ? 'shifty-' + crypto.randomUUID().slice(0, 8) : 'victim', name: 'Shifty', version: '2.0.0', description: 'Changes.' };\n" +
          tool('keep'),
      ),
    };
    const reviewed = await harness.extensions.inspect([shifty]);
    const error = await refusal(harness.extensions.install([shifty], [], reviewed.reviewed));
    expect(error.message).toContain('not the one you reviewed');
    expect((await harness.extensions.list()).map((v) => v.extension.id)).toEqual(['victim']);
  });

  it('updates to a newer version keeping state and permissions, and refuses conflicting ones', async () => {
    harness = extensionHarness();
    const v1 = moduleFile({ id: 'up' }, tool('keep') + tool('drop'));
    await harness.install([v1]);
    await harness.extensions.setPermission('up', 'keep', 'allow');
    await harness.extensions.setPermission('up', 'drop', 'off');
    await harness.extensions.setEnabled('up', false);

    expect((await harness.extensions.inspect([v1])).change).toEqual({ kind: 'same' });
    const changed = moduleFile({ id: 'up' }, tool('keep', "'changed'"));
    expect((await refusal(harness.install([changed]))).message).toContain('installed with different content');
    const older = moduleFile({ id: 'up', version: '0.9.0' }, tool('keep'));
    expect((await refusal(harness.install([older]))).message).toContain('older 0.9.0');

    const v2 = moduleFile({ id: 'up', version: '1.1.0' }, tool('keep', "'v2'") + tool('added'));
    expect((await harness.extensions.inspect([v2])).change).toEqual({
      kind: 'update',
      from: '1.0.0',
      hosts: [],
      allowedHosts: [],
    });
    const updated = await harness.install([v2]);
    expect(updated.extension).toMatchObject({
      version: '1.1.0',
      enabled: false,
      permissions: { keep: 'allow' },
    });
    expect(updated.tools.map((t) => [t.name, t.permission])).toEqual([
      ['keep', 'allow'],
      ['added', 'ask'],
    ]);
    await harness.extensions.setEnabled('up', true);
    expect(await harness.call('extension/up:keep')).toMatchObject({ content: 'v2' });
  });

  it('withholds a disabled extension’s tools from runs, saying why, and refuses calls made anyway', async () => {
    harness = extensionHarness();
    await harness.install([moduleFile({ id: 'off' }, tool('a'))]);
    await harness.provider.ready?.();
    const [listed] = harness.provider.list();
    await harness.extensions.setEnabled('off', false);
    expect(harness.provider.list()).toMatchObject([
      { toolId: 'extension/off:a', withheld: { code: 'extension.disabled' } },
    ]);
    const call = await harness.provider.execute(listed!, {}, {
      signal: new AbortController().signal,
    } as Parameters<typeof harness.provider.execute>[2]);
    expect(call).toMatchObject({ isError: true, errorCode: 'extension.tool_unavailable' });
    expect(call.content).toContain('is disabled');
  });
});
