import { describe, expect, it } from 'vitest';
import {
  checkRegistrations,
  compareVersions,
  connectSources,
  EXTENSION_LIMITS,
  extensionPackage,
  normalizeHost,
  parseManifest,
  receiptResult,
  receiptSchema,
} from '$lib/domain/extension';
import type { PackageFile } from '$lib/domain/package-files';

const bytes = (s: string) => new TextEncoder().encode(s);
const file = (path: string, content = `// ${path}`): PackageFile => ({ path, bytes: bytes(content) });

const manifest = { id: 'weather', name: 'Weather', version: '1.2.3', description: 'Forecasts.' };

const failure = <E extends { code: string; message: string }>(r: { ok: true } | { ok: false; error: E }) => {
  expect(r.ok).toBe(false);
  return r.ok ? { code: '', message: '' } : r.error;
};

describe('parseManifest', () => {
  it('accepts a valid manifest and fills in the defaults', () => {
    expect(parseManifest(manifest)).toEqual({
      ok: true,
      value: { ...manifest, entry: 'index.js', hosts: [], timeoutSeconds: 60 },
    });
  });

  it('keeps what the manifest gives', () => {
    const r = parseManifest({
      ...manifest,
      id: 'my-ext.v2_x',
      version: '0.1.0-beta.1',
      entry: 'src/main.mjs',
      hosts: ['https://api.example.com'],
      timeoutSeconds: 300,
    });
    expect(r).toEqual({
      ok: true,
      value: {
        ...manifest,
        id: 'my-ext.v2_x',
        version: '0.1.0-beta.1',
        entry: 'src/main.mjs',
        hosts: ['https://api.example.com'],
        timeoutSeconds: 300,
      },
    });
  });

  it('trims name and description', () => {
    const r = parseManifest({ ...manifest, name: '  Weather  ', description: '\tForecasts.\n' });
    expect(r.ok && [r.value.name, r.value.description]).toEqual(['Weather', 'Forecasts.']);
  });

  it('refuses an unknown field, naming it', () => {
    const e = failure(parseManifest({ ...manifest, permissions: ['all'] }));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('unknown field "permissions"');
  });

  it.each(['Weather', '-weather', 'weather-', 'we ather', 'a/b', '', 'a'.repeat(65), 7])(
    'refuses the id %j',
    (id) => {
      const e = failure(parseManifest({ ...manifest, id }));
      expect(e.code).toBe('extension.manifest_invalid');
      expect(e.message).toContain('id');
    },
  );

  it.each(['a', 'a1', 'a.b-c_d', 'a'.repeat(64)])('accepts the id %j', (id) =>
    expect(parseManifest({ ...manifest, id }).ok).toBe(true),
  );

  it.each(['1.2', 'v1.2.3', '1.2.3.4', '1.2.x', '', '1.2.3-'])('refuses the version %j', (version) => {
    const e = failure(parseManifest({ ...manifest, version }));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('version');
  });

  it.each([
    ['name', ''],
    ['name', '   '],
    ['description', ''],
    ['description', ' \n '],
  ])('refuses an empty %s %j', (field, value) => {
    const e = failure(parseManifest({ ...manifest, [field]: value }));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain(`${field} is empty`);
  });

  it('refuses a missing name', () => {
    const { name: _name, ...rest } = manifest;
    const e = failure(parseManifest(rest));
    expect(e.message).toContain('name');
  });

  it.each([0, 301, 1.5, '60'])('refuses timeoutSeconds %j', (timeoutSeconds) => {
    const e = failure(parseManifest({ ...manifest, timeoutSeconds }));
    expect(e.message).toContain('timeoutSeconds');
  });

  it.each([null, 'manifest', [], 42])('refuses %j as a manifest', (raw) =>
    expect(failure(parseManifest(raw)).code).toBe('extension.manifest_invalid'),
  );

  it('names every problem in one message', () => {
    const e = failure(parseManifest({ ...manifest, id: 'Bad', version: '1', extra: 1 }));
    expect(e.message).toContain('id:');
    expect(e.message).toContain('version:');
    expect(e.message).toContain('"extra"');
  });

  it('normalizes and deduplicates hosts, keeping their order', () => {
    const r = parseManifest({
      ...manifest,
      hosts: [
        'https://API.Example.com/',
        'https://b.example.com',
        'https://api.example.com',
        'https://api.example.com:443',
      ],
    });
    expect(r.ok && r.value.hosts).toEqual(['https://api.example.com', 'https://b.example.com']);
  });

  it('refuses a manifest with a host that cannot be allowed', () => {
    const e = failure(
      parseManifest({ ...manifest, hosts: ['https://ok.example.com', 'https://*.example.com'] }),
    );
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('https://*.example.com');
  });

  it('refuses more than 16 hosts', () => {
    const hosts = Array.from({ length: 17 }, (_, i) => `https://h${i}.example.com`);
    expect(failure(parseManifest({ ...manifest, hosts })).message).toContain('hosts');
  });
});

describe('normalizeHost', () => {
  const host = (raw: string) => {
    const r = normalizeHost(raw);
    return r.ok ? r.value : r.error.code;
  };

  it.each([
    ['https://api.example.com', 'https://api.example.com'],
    ['https://api.example.com/', 'https://api.example.com'],
    ['https://API.EXAMPLE.com', 'https://api.example.com'],
    ['https://api.example.com:8443', 'https://api.example.com:8443'],
    ['https://api.example.com:443/', 'https://api.example.com'],
    ['http://localhost', 'http://localhost'],
    ['http://localhost:8080/', 'http://localhost:8080'],
    ['http://127.0.0.1:11434', 'http://127.0.0.1:11434'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
  ])('allows %j as %j', (raw, origin) => expect(host(raw)).toBe(origin));

  it.each([
    ['https://api.example.com/v1', 'path'],
    ['https://api.example.com/?q=1', 'path'],
    ['https://api.example.com/#top', 'path'],
    ['https://user:secret@api.example.com', 'credentials'],
    ['https://user@api.example.com', 'credentials'],
    ['https://*.example.com', 'wildcard'],
    ['*', 'wildcard'],
    ['http://example.com', 'https://'],
    ['http://192.168.1.2', 'https://'],
    ['ftp://example.com', 'https://'],
    ['ws://localhost', 'https://'],
    ['api.example.com', 'not a URL'],
    ['', 'not a URL'],
  ])('refuses %j (%s)', (raw, why) => {
    const e = failure(normalizeHost(raw));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain(why);
    expect(e.message).toContain(`"${raw}"`);
  });
});

describe('connectSources', () => {
  it("is 'none' without hosts", () => expect(connectSources([])).toBe("'none'"));
  it('lists the hosts separated by spaces', () =>
    expect(connectSources(['https://a.example.com', 'http://localhost:8080'])).toBe(
      'https://a.example.com http://localhost:8080',
    ));
});

describe('compareVersions', () => {
  it.each([
    ['1.10.0', '1.9.0', 1],
    ['1.9.0', '1.10.0', -1],
    ['2.0.0', '10.0.0', -1],
    ['1.0.1', '1.0.0', 1],
    ['1.1.0', '1.0.9', 1],
    ['1.0.0', '1.0.0-beta', 1],
    ['1.0.0-beta', '1.0.0', -1],
    ['1.0.0-alpha', '1.0.0-beta', -1],
    ['1.0.0-beta', '1.0.0-alpha', 1],
    ['1.0.0-beta', '0.9.9', 1],
    ['1.2.3', '1.2.3', 0],
    ['1.2.3-rc.1', '1.2.3-rc.1', 0],
  ])('compares %s with %s as %i', (a, b, expected) => expect(compareVersions(a, b)).toBe(expected));
});

describe('checkRegistrations', () => {
  const tool = { name: 'forecast', description: 'The forecast.', inputSchema: { type: 'object' } };

  it('accepts a valid tool with default contexts and returnsImages', () => {
    expect(checkRegistrations([tool])).toEqual({
      tools: [{ ...tool, contexts: ['chat', 'session'], returnsImages: false }],
      problems: [],
    });
  });

  it('keeps given contexts and returnsImages', () => {
    const r = checkRegistrations([{ ...tool, contexts: ['session'], returnsImages: true }]);
    expect(r.problems).toEqual([]);
    expect(r.tools[0]).toMatchObject({ contexts: ['session'], returnsImages: true });
  });

  it('accepts capitalized contexts as lowercase, each once', () => {
    const r = checkRegistrations([{ ...tool, contexts: ['Chat', 'chat', 'SESSION'] }]);
    expect(r.problems).toEqual([]);
    expect(r.tools[0]!.contexts).toEqual(['chat', 'session']);
  });

  it.each([
    ['forecast', true],
    ['get_weather.v2-x', true],
    ['a'.repeat(64), true],
    ['a'.repeat(65), false],
    ['weather:forecast', false],
    ['get weather', false],
    ['', false],
  ])('the name %j is accepted: %s', (name, accepted) => {
    const r = checkRegistrations([{ ...tool, name }]);
    expect(r.tools).toHaveLength(accepted ? 1 : 0);
    expect(r.problems).toHaveLength(accepted ? 0 : 1);
    if (!accepted) expect(r.problems[0]).toContain('name may use only');
  });

  const refused: [string, unknown, string][] = [
    ['a missing description', { name: 'forecast', inputSchema: { type: 'object' } }, 'description'],
    ['an empty description', { ...tool, description: '  ' }, 'description is empty'],
    [
      'a description over its limit',
      { ...tool, description: 'x'.repeat(EXTENSION_LIMITS.descriptionChars + 1) },
      'description is over',
    ],
    ['a schema whose root is not an object', { ...tool, inputSchema: { type: 'string' } }, 'inputSchema'],
    ['a schema without a type', { ...tool, inputSchema: { properties: {} } }, 'inputSchema'],
    ['a schema that is text', { ...tool, inputSchema: '{"type":"object"}' }, 'inputSchema'],
    ['a schema that is an array', { ...tool, inputSchema: [{ type: 'object' }] }, 'inputSchema'],
    ['a missing schema', { name: 'forecast', description: 'd' }, 'inputSchema'],
    ['empty contexts', { ...tool, contexts: [] }, 'contexts is empty'],
    ['an unknown context', { ...tool, contexts: ['chat', 'everywhere'] }, 'contexts may hold only'],
    ['returnsImages that is not a boolean', { ...tool, returnsImages: 'yes' }, 'returnsImages'],
  ];
  it.each(refused)('refuses %s, naming the tool', (_, entry, why) => {
    const r = checkRegistrations([entry]);
    expect(r.tools).toEqual([]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain('Tool "forecast"');
    expect(r.problems[0]).toContain(why);
  });

  it('names a tool without a text name by its position', () => {
    const r = checkRegistrations([tool, { description: 'd', inputSchema: { type: 'object' } }]);
    expect(r.tools.map((t) => t.name)).toEqual(['forecast']);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain('Tool #2');
  });

  it.each([null, 'forecast', 42])('refuses %j as a registration', (entry) => {
    const r = checkRegistrations([entry]);
    expect(r.tools).toEqual([]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain('Tool #1');
  });

  it('refuses a name registered twice, keeping the first', () => {
    const r = checkRegistrations([tool, { ...tool, description: 'Again.' }]);
    expect(r.tools).toEqual([{ ...tool, contexts: ['chat', 'session'], returnsImages: false }]);
    expect(r.problems).toEqual(['Tool "forecast" is registered twice.']);
  });

  it('keeps the valid tools beside the refused ones', () => {
    const r = checkRegistrations([tool, { ...tool, name: 'bad name' }, { ...tool, name: 'other' }]);
    expect(r.tools.map((t) => t.name)).toEqual(['forecast', 'other']);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain('Tool "bad name"');
  });

  it('accepts exactly the maximum number of tools', () => {
    const many = Array.from({ length: EXTENSION_LIMITS.tools }, (_, i) => ({ ...tool, name: `t${i}` }));
    const r = checkRegistrations(many);
    expect(r.tools).toHaveLength(EXTENSION_LIMITS.tools);
    expect(r.problems).toEqual([]);
  });

  it('refuses 101 tools with one problem', () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ ...tool, name: `t${i}` }));
    const r = checkRegistrations(many);
    expect(r.tools).toEqual([]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain('101 tools');
    expect(r.problems[0]).toContain('at most 100');
  });

  it('refuses a definition over 64 KiB', () => {
    const big = {
      ...tool,
      inputSchema: {
        type: 'object',
        properties: { x: { type: 'string', description: 'x'.repeat(65 * 1024) } },
      },
    };
    const r = checkRegistrations([big]);
    expect(r.tools).toEqual([]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain('Tool "forecast"');
    expect(r.problems[0]).toContain(`at most ${64 * 1024}`);
  });

  it('refuses a definition that is not JSON', () => {
    const r = checkRegistrations([{ ...tool, inputSchema: { type: 'object', default: 1n } }]);
    expect(r.tools).toEqual([]);
    expect(r.problems).toEqual(['Tool "forecast": its definition is not plain JSON.']);
  });

  it('refuses a definition with a cycle', () => {
    const schema: Record<string, unknown> = { type: 'object' };
    schema.self = schema;
    const r = checkRegistrations([{ ...tool, inputSchema: schema }]);
    expect(r.problems).toEqual(['Tool "forecast": its definition is not plain JSON.']);
  });
});

describe('extensionPackage', () => {
  const manifestFile = (m: unknown = manifest, path = 'manifest.json') => file(path, JSON.stringify(m));

  it.each(['tool.js', 'tool.mjs'])('takes a single root module %j as a package by itself', (path) => {
    const files = [file(path)];
    expect(extensionPackage(files)).toEqual({ ok: true, value: { kind: 'module', entry: path, files } });
  });

  it('does not take a lone file inside a folder as a module package', () => {
    const e = failure(extensionPackage([file('src/tool.js')]));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('manifest.json');
  });

  it('does not take a lone file that is not a module as a module package', () => {
    expect(failure(extensionPackage([file('tool.ts')])).code).toBe('extension.manifest_invalid');
  });

  it('reads manifest.json at the root', () => {
    const files = [manifestFile(), file('index.js'), file('lib/a.js')];
    expect(extensionPackage(files)).toEqual({
      ok: true,
      value: {
        kind: 'manifest',
        manifest: { ...manifest, entry: 'index.js', hosts: [], timeoutSeconds: 60 },
        files,
      },
    });
  });

  it('finds manifest.json inside a lone top folder and strips it from the paths', () => {
    const r = extensionPackage([
      manifestFile({ ...manifest, entry: 'src/main.js' }, 'weather/manifest.json'),
      file('weather/src/main.js', 'main'),
      file('weather/lib/a.js', 'a'),
    ]);
    expect(r.ok).toBe(true);
    if (!r.ok || r.value.kind !== 'manifest') return;
    expect(r.value.manifest.entry).toBe('src/main.js');
    expect(r.value.files.map((f) => f.path)).toEqual(['manifest.json', 'src/main.js', 'lib/a.js']);
    expect(new TextDecoder().decode(r.value.files[1]!.bytes)).toBe('main');
  });

  it('does not look inside a folder when there are several top-level entries', () => {
    const e = failure(
      extensionPackage([manifestFile(manifest, 'a/manifest.json'), file('a/index.js'), file('b.js')]),
    );
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('no manifest.json');
  });

  it('refuses a package without manifest.json', () => {
    const e = failure(extensionPackage([file('index.js'), file('lib.js')]));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('no manifest.json');
  });

  it('refuses a manifest that is not JSON', () => {
    const e = failure(extensionPackage([file('manifest.json', '{ id: weather'), file('index.js')]));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('not valid JSON');
  });

  it('refuses a manifest that is not UTF-8', () => {
    const e = failure(
      extensionPackage([
        { path: 'manifest.json', bytes: new Uint8Array([0x7b, 0xff, 0x7d]) },
        file('index.js'),
      ]),
    );
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('not valid JSON');
  });

  it('refuses an invalid manifest', () => {
    const e = failure(extensionPackage([manifestFile({ ...manifest, id: 'Bad' }), file('index.js')]));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('id:');
  });

  it('refuses a missing entry', () => {
    const e = failure(extensionPackage([manifestFile({ ...manifest, entry: 'main.js' }), file('index.js')]));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('`main.js` is not in the package');
  });

  it('refuses the default entry when index.js is missing', () => {
    const e = failure(extensionPackage([manifestFile(), file('main.js')]));
    expect(e.message).toContain('`index.js` is not in the package');
  });

  it('refuses an entry that is not a .js module', () => {
    const e = failure(extensionPackage([manifestFile({ ...manifest, entry: 'index.ts' }), file('index.ts')]));
    expect(e.code).toBe('extension.manifest_invalid');
    expect(e.message).toContain('not a .js or .mjs module');
  });
});

describe('receiptResult', () => {
  it('keeps a string as the content itself', () => {
    expect(receiptResult('Sunny, "22 °C"')).toEqual({
      ok: true,
      value: { content: 'Sunny, "22 °C"', structured: 'Sunny, "22 °C"' },
    });
  });

  it('gives an object as JSON text and structured value', () => {
    const value = { temp: 22, sky: ['sun'], wind: null, ok: true };
    expect(receiptResult(value)).toEqual({
      ok: true,
      value: { content: JSON.stringify(value), structured: value },
    });
  });

  it.each([
    [42, '42'],
    [true, 'true'],
    [null, 'null'],
    [[1, 'a'], '[1,"a"]'],
  ])('gives %j as %j', (value, content) =>
    expect(receiptResult(value)).toEqual({ ok: true, value: { content, structured: value } }),
  );

  it('gives nothing as null', () => {
    expect(receiptResult(undefined)).toEqual({ ok: true, value: { content: 'null', structured: null } });
  });

  it('accepts an object without a prototype', () => {
    const value = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    expect(receiptResult(value)).toMatchObject({ ok: true, value: { content: '{"a":1}' } });
  });

  const notJson: [string, unknown][] = [
    ['a Date', new Date(0)],
    ['a Map', new Map([['a', 1]])],
    ['a Set', new Set([1])],
    ['a typed array', new Uint8Array([1])],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['NaN inside', { a: [1, NaN] }],
    ['a function', () => 1],
    ['a nested function', { a: { f: () => 1 } }],
    ['a nested Date', { when: new Date(0) }],
    ['a symbol', Symbol('x')],
    ['a BigInt', { n: 1n }],
  ];
  it.each(notJson)('refuses %s as not plain JSON', (_, value) => {
    const e = failure(receiptResult(value));
    expect(e.code).toBe('extension.tool_error');
    expect(e.message).toContain('not plain JSON');
  });

  it('drops undefined inside objects and nulls it inside arrays, as JSON does, in both forms', () => {
    expect(receiptResult({ a: undefined, b: [undefined, 1] })).toEqual({
      ok: true,
      value: { content: '{"b":[null,1]}', structured: { b: [null, 1] } },
    });
  });

  it('refuses a value with a cycle', () => {
    const value: Record<string, unknown> = {};
    value.self = value;
    expect(failure(receiptResult(value)).code).toBe('extension.tool_error');
  });

  it('refuses a value nested too deeply', () => {
    let value: unknown = 1;
    for (let i = 0; i < 100; i++) value = [value];
    expect(failure(receiptResult(value)).code).toBe('extension.tool_error');
  });

  it('accepts a string of exactly the maximum length', () => {
    const value = 'x'.repeat(EXTENSION_LIMITS.resultChars);
    const r = receiptResult(value);
    expect(r.ok && r.value.content.length).toBe(EXTENSION_LIMITS.resultChars);
  });

  it('refuses a string over 4 MiB', () => {
    const e = failure(receiptResult('x'.repeat(4 * 1024 * 1024 + 1)));
    expect(e.code).toBe('extension.result_too_large');
    expect(e.message).toContain('4,194,305');
  });

  it('refuses an object whose JSON text is over the limit', () => {
    const e = failure(receiptResult({ text: 'x'.repeat(EXTENSION_LIMITS.resultChars) }));
    expect(e.code).toBe('extension.result_too_large');
  });
});

describe('receiptSchema', () => {
  const image = { bytes: new Uint8Array([137, 80, 78, 71]), type: 'image/png' };

  it('accepts an ok receipt with images', () => {
    const receipt = { ok: true, requestId: 'r1', value: { a: 1 }, images: [image, image] };
    const r = receiptSchema.safeParse(receipt);
    expect(r.success).toBe(true);
    expect(r.data).toEqual(receipt);
  });

  it('accepts an ok receipt with no images', () => {
    expect(receiptSchema.safeParse({ ok: true, requestId: 'r1', value: 'x', images: [] }).success).toBe(true);
  });

  it('accepts an error receipt', () => {
    const r = receiptSchema.safeParse({ ok: false, requestId: 'r1', message: 'boom' });
    expect(r.data).toEqual({ ok: false, requestId: 'r1', message: 'boom' });
  });

  it('accepts exactly 8 images and refuses 9', () => {
    const with_ = (n: number) => ({ ok: true, requestId: 'r1', value: null, images: Array(n).fill(image) });
    expect(receiptSchema.safeParse(with_(EXTENSION_LIMITS.images)).success).toBe(true);
    const r = receiptSchema.safeParse(with_(9));
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toContain('at most 8 images');
  });

  it.each([
    ['a missing requestId', { ok: true, value: 1, images: [] }],
    ['a missing requestId on an error', { ok: false, message: 'boom' }],
    ['a requestId that is not text', { ok: true, requestId: 1, value: 1, images: [] }],
    [
      'image bytes that are not a Uint8Array',
      { ok: true, requestId: 'r', value: 1, images: [{ bytes: [1], type: 'x' }] },
    ],
    [
      'an image without a type',
      { ok: true, requestId: 'r', value: 1, images: [{ bytes: new Uint8Array(1) }] },
    ],
    ['an error without a message', { ok: false, requestId: 'r' }],
    ['no ok', { requestId: 'r', value: 1, images: [] }],
  ])('refuses %s', (_, receipt) => expect(receiptSchema.safeParse(receipt).success).toBe(false));
});
