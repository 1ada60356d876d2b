import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES } from '$lib/domain/builtin-tools';
import {
  builtinCallName,
  builtinToolId,
  extensionToolId,
  formatToolId,
  mcpToolId,
  parseToolId,
  sortCatalog,
  toToolId,
  type ParsedToolId,
  type ToolId,
} from '$lib/domain/tool-id';

const UUID = '550e8400-e29b-41d4-a716-446655440000';

const parsed = (raw: string) => {
  const r = parseToolId(raw);
  return r.ok ? r.value : r.error.code;
};
const formatted = (parts: ParsedToolId) => {
  const r = formatToolId(parts);
  return r.ok ? r.value : r.error.code;
};
const ids = (...raw: string[]) => raw as ToolId[];

describe('parseToolId (tools.md §2)', () => {
  it.each<[string, ParsedToolId]>([
    ['builtin:workspace.read_file', { source: 'builtin', nativeName: 'workspace.read_file' }],
    [`mcp/${UUID}:search`, { source: 'mcp', registrationId: UUID, nativeName: 'search' }],
    ['extension/contract:inspect', { source: 'extension', extensionId: 'contract', nativeName: 'inspect' }],
    [
      'extension/third-party/st-dice:roll dice',
      { source: 'extension', extensionId: 'third-party/st-dice', nativeName: 'roll dice' },
    ],
    [`mcp/${UUID}:repo/list.all`, { source: 'mcp', registrationId: UUID, nativeName: 'repo/list.all' }],
    ['builtin:日本語', { source: 'builtin', nativeName: '日本語' }],
  ])('parses %j', (raw, expected) => expect(parsed(raw)).toEqual(expected));

  it.each([
    // the spec's invalid examples
    ['', 'tool.id_invalid'],
    ['builtin', 'tool.id_invalid'],
    [':tool', 'tool.provider_id_empty'],
    ['builtin:', 'tool.native_name_empty'],
    // split at the first ':', so a second one lands in the native name
    ['builtin:a:b', 'tool.native_name_invalid'],
    [`mcp/${UUID}:a:b`, 'tool.native_name_invalid'],
    // unknown or malformed providers
    ['foo:bar', 'tool.provider_id_invalid'],
    ['Builtin:x', 'tool.provider_id_invalid'],
    [' builtin:x', 'tool.provider_id_invalid'],
    ['mcp:search', 'tool.provider_id_invalid'],
    ['mcp/:search', 'tool.provider_id_invalid'],
    ['mcp/not-a-uuid:search', 'tool.provider_id_invalid'],
    [`mcp/${UUID.toUpperCase()}:search`, 'tool.provider_id_invalid'],
    [`mcp/{${UUID}}:search`, 'tool.provider_id_invalid'],
    [`mcp/${UUID.replaceAll('-', '')}:search`, 'tool.provider_id_invalid'],
    [`mcp/${UUID} :search`, 'tool.provider_id_invalid'],
    ['extension:inspect', 'tool.provider_id_invalid'],
    ['extension/:inspect', 'tool.provider_id_invalid'],
  ])('rejects %j with %s', (raw, code) => expect(parsed(raw)).toBe(code));

  it('brands only ids that parse', () => {
    expect(toToolId('builtin:dice.roll')).toEqual({ ok: true, value: 'builtin:dice.roll' });
    const bad = toToolId('builtin');
    expect(bad.ok ? undefined : bad.error.code).toBe('tool.id_invalid');
  });
});

describe('formatToolId', () => {
  it.each<[ParsedToolId, string]>([
    [{ source: 'builtin', nativeName: 'workspace.read_file' }, 'builtin:workspace.read_file'],
    [{ source: 'mcp', registrationId: UUID, nativeName: 'search' }, `mcp/${UUID}:search`],
    [{ source: 'extension', extensionId: 'contract', nativeName: 'inspect' }, 'extension/contract:inspect'],
  ])('formats %j', (parts, expected) => expect(formatted(parts)).toBe(expected));

  it.each<[ParsedToolId, string]>([
    [{ source: 'builtin', nativeName: '' }, 'tool.native_name_empty'],
    [{ source: 'builtin', nativeName: 'a:b' }, 'tool.native_name_invalid'],
    [{ source: 'mcp', registrationId: 'x', nativeName: 'search' }, 'tool.provider_id_invalid'],
    [{ source: 'mcp', registrationId: `${UUID}:x`, nativeName: 'search' }, 'tool.provider_id_invalid'],
    [{ source: 'extension', extensionId: '', nativeName: 'inspect' }, 'tool.provider_id_invalid'],
    [{ source: 'extension', extensionId: 'a:b', nativeName: 'inspect' }, 'tool.provider_id_invalid'],
  ])('rejects %j with %s', (parts, code) => expect(formatted(parts)).toBe(code));

  it('builds MCP and extension ids through the same checks', () => {
    expect(mcpToolId(UUID, 'search')).toEqual({ ok: true, value: `mcp/${UUID}:search` });
    expect(extensionToolId('contract', 'inspect')).toEqual({ ok: true, value: 'extension/contract:inspect' });
    const bad = mcpToolId(UUID, 'ns:search');
    expect(bad.ok ? undefined : bad.error.code).toBe('tool.native_name_invalid');
  });

  it('agrees with builtinToolId and keeps the fixed builtin call names', () => {
    for (const name of BUILTIN_TOOL_NAMES) {
      expect(formatted({ source: 'builtin', nativeName: name })).toBe(builtinToolId(name));
      expect(parsed(builtinToolId(name))).toEqual({ source: 'builtin', nativeName: name });
    }
    expect(builtinCallName('workspace.read_file')).toBe('workspace_read_file');
    expect(builtinCallName('task.return')).toBe('task_return');
  });
});

describe('sortCatalog', () => {
  it('orders by the full id string in code-unit order, not by locale', () => {
    const input = ids(
      `mcp/${UUID}:search`,
      'extension/contract:search',
      'builtin:workspace.read_file',
      'builtin:Zeta',
      'builtin:alpha',
    );
    const frozen = Object.freeze([...input]);
    expect(sortCatalog(frozen)).toEqual({
      ok: true,
      value: [
        'builtin:Zeta',
        'builtin:alpha',
        'builtin:workspace.read_file',
        'extension/contract:search',
        `mcp/${UUID}:search`,
      ],
    });
  });

  it('keeps the same native name under different providers as distinct ids', () => {
    const r = sortCatalog(ids('extension/a:search', `mcp/${UUID}:search`, 'builtin:search'));
    expect(r.ok && r.value.length).toBe(3);
  });

  it('rejects a duplicate id', () => {
    const r = sortCatalog(ids('builtin:dice.roll', 'extension/a:x', 'builtin:dice.roll'));
    expect(r.ok ? undefined : r.error.code).toBe('tool.catalog_duplicate_id');
    expect(sortCatalog([])).toEqual({ ok: true, value: [] });
  });
});

describe('ToolId properties', () => {
  const part = fc.string({ minLength: 1, unit: 'grapheme' }).filter((s) => !s.includes(':'));
  const parts: fc.Arbitrary<ParsedToolId> = fc.oneof(
    part.map((nativeName) => ({ source: 'builtin' as const, nativeName })),
    fc.record({ source: fc.constant('mcp' as const), registrationId: fc.uuid(), nativeName: part }),
    fc.record({ source: fc.constant('extension' as const), extensionId: part, nativeName: part }),
  );

  it('parse(format(parts)) gives the parts back', () => {
    fc.assert(
      fc.property(parts, (p) => {
        const id = formatToolId(p);
        expect(id.ok).toBe(true);
        if (id.ok) expect(parseToolId(id.value)).toEqual({ ok: true, value: p });
      }),
    );
  });

  it('format(parse(raw)) gives the raw id back whenever it parses', () => {
    const raw = fc.oneof(
      fc.string(),
      fc
        .tuple(fc.constantFrom('builtin', `mcp/${UUID}`, 'extension/x', 'mcp/x', ''), fc.string())
        .map(([provider, rest]) => `${provider}:${rest}`),
    );
    fc.assert(
      fc.property(raw, (s) => {
        const p = parseToolId(s);
        if (p.ok) expect(formatToolId(p.value)).toEqual({ ok: true, value: s });
        else expect(p.error.code).toMatch(/^tool\./);
      }),
    );
  });
});
