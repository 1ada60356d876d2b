import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES } from '$lib/domain/builtin-tools';
import {
  allocateCallNames,
  checkCallNameBindings,
  mcpCallNameBase,
  normalizeExternalName,
  validateCallName,
  type CallNameEntry,
} from '$lib/domain/call-names';
import { builtinCallName, builtinToolId, type ToolId } from '$lib/domain/tool-id';

const CALL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const UUID = '550e8400-e29b-41d4-a716-446655440000';

const builtin = (name: string): CallNameEntry => ({ toolId: builtinToolId(name), source: 'builtin', name });
const extension = (name: string, extensionId = 'ext'): CallNameEntry => ({
  toolId: `extension/${extensionId}:${name}` as ToolId,
  source: 'extension',
  name,
});
const mcp = (serverName: string, name: string, registrationId = UUID): CallNameEntry => ({
  toolId: `mcp/${registrationId}:${name}` as ToolId,
  source: 'mcp',
  name,
  serverName,
});

/** The allocated names in entry order, or the error code. */
const names = (entries: CallNameEntry[]) => {
  const r = allocateCallNames(entries);
  return r.ok ? [...r.value.values()] : r.error.code;
};
const code = (r: { ok: true } | { ok: false; error: { code: string } }) => (r.ok ? 'ok' : r.error.code);

describe('validateCallName (tools.md §3.4)', () => {
  it.each([
    ['workspace_read_file', 'ok'],
    ['a', 'ok'],
    ['A-b_9', 'ok'],
    ['x'.repeat(64), 'ok'],
    ['', 'tool.snapshot_alias_empty'],
    ['x'.repeat(65), 'tool.snapshot_alias_invalid'],
    ['workspace.read_file', 'tool.snapshot_alias_invalid'],
    ['has space', 'tool.snapshot_alias_invalid'],
    ['café', 'tool.snapshot_alias_invalid'],
    ['a\n', 'tool.snapshot_alias_invalid'],
  ])('%j -> %s', (name, expected) => expect(code(validateCallName(name))).toBe(expected));
});

describe('checkCallNameBindings', () => {
  const a = 'builtin:a' as ToolId;
  const b = 'builtin:b' as ToolId;
  it.each([
    [
      [
        { toolId: a, callName: 'a' },
        { toolId: b, callName: 'b' },
      ],
      'ok',
    ],
    [
      [
        { toolId: a, callName: 'a' },
        { toolId: a, callName: 'b' },
      ],
      'tool.snapshot_duplicate_id',
    ],
    [
      [
        { toolId: a, callName: 'x' },
        { toolId: b, callName: 'x' },
      ],
      'tool.snapshot_duplicate_alias',
    ],
    [[{ toolId: a, callName: '' }], 'tool.snapshot_alias_empty'],
    [[{ toolId: a, callName: 'a.b' }], 'tool.snapshot_alias_invalid'],
  ])('%j -> %s', (bindings, expected) => expect(code(checkCallNameBindings(bindings))).toBe(expected));
});

describe('builtin call names (§3.1)', () => {
  it('are the native names with "." -> "_"', () => {
    const entries = BUILTIN_TOOL_NAMES.map(builtin);
    expect(names(entries)).toEqual(BUILTIN_TOOL_NAMES.map(builtinCallName));
    expect(names([builtin('workspace.read_file'), builtin('task.return')])).toEqual([
      'workspace_read_file',
      'task_return',
    ]);
  });

  it('are reserved before any external name, whatever the order', () => {
    expect(names([extension('workspace_read_file'), builtin('workspace.read_file')])).toEqual([
      'workspace_read_file__2',
      'workspace_read_file',
    ]);
  });

  it('reserve task_return even when task.return is not bound', () => {
    expect(names([extension('task_return'), extension('task.return', 'other')])).toEqual([
      'task_return__2',
      'task_return__3',
    ]);
  });

  it.each([
    [[builtin('a.b'), builtin('a_b')], 'tool.snapshot_duplicate_alias'],
    [[builtin('bad name')], 'tool.snapshot_alias_invalid'],
    [[builtin('x'.repeat(65))], 'tool.snapshot_alias_invalid'],
    [[builtin('dice.roll'), builtin('dice.roll')], 'tool.snapshot_duplicate_id'],
  ])('fail when fixed names cannot be bound: %j -> %s', (entries, expected) =>
    expect(names(entries)).toBe(expected),
  );
});

describe('extension call names (§3.2)', () => {
  it.each([
    ['inspect', 'inspect'],
    ['my tool!', 'my_tool_'],
    ['a.b/c', 'a_b_c'],
    ['café', 'caf_'],
    ['🔥x', '_x'],
    ['kebab-case_and_Snake9', 'kebab-case_and_Snake9'],
    ['', ''],
  ])('normalizes %j to %j', (raw, expected) => expect(normalizeExternalName(raw)).toBe(expected));

  it('suffixes a name taken by a builtin: write -> write__2', () => {
    expect(names([builtin('write'), extension('write')])).toEqual(['write', 'write__2']);
  });

  it('allocates in the given order: inspect, inspect__2, inspect__3', () => {
    expect(names([extension('inspect', 'a'), extension('inspect', 'b'), extension('inspect', 'c')])).toEqual([
      'inspect',
      'inspect__2',
      'inspect__3',
    ]);
    expect(names([extension('inspect', 'b'), extension('inspect', 'a')])).toEqual(['inspect', 'inspect__2']);
  });

  it('takes the first free suffix, even after a name that looks suffixed', () => {
    expect(names([extension('x__2', 'a'), extension('x', 'b'), extension('x', 'c')])).toEqual([
      'x__2',
      'x',
      'x__3',
    ]);
    expect(names([extension('x', 'a'), extension('x', 'b'), extension('x__2', 'c')])).toEqual([
      'x',
      'x__2',
      'x__2__2',
    ]);
  });

  it('collides after normalization', () => {
    expect(names([extension('a.b', 'a'), extension('a b', 'b')])).toEqual(['a_b', 'a_b__2']);
  });

  it('truncates the base to 64 bytes minus the suffix', () => {
    const long = 'n'.repeat(70);
    expect(names([extension(long, 'a'), extension(long, 'b')])).toEqual([
      'n'.repeat(64),
      `${'n'.repeat(61)}__2`,
    ]);
    const r = names(Array.from({ length: 10 }, (_, i) => extension(long, `e${i}`)));
    expect(Array.isArray(r) && r.at(-1)).toBe(`${'n'.repeat(60)}__10`);
  });

  it('rejects an empty name', () => {
    expect(names([extension('')])).toBe('tool.snapshot_alias_empty');
  });
});

describe('MCP call names (§3.3)', () => {
  it.each([
    ['github', 'create_issue', 'mcp__github__create_issue'],
    ['My Server', 'search', 'mcp__My_Server__search'],
    ['__a..b__', 'x', 'mcp__a_b__x'],
    ['a', 'get__thing', 'mcp__a__get_thing'],
    ['my-server', 'list-files', 'mcp__my-server__list-files'],
    ['Café Wiki', 'lookup.page', 'mcp__Caf_Wiki__lookup_page'],
    ['', '', 'mcp__server__tool'],
    ['!!!', '???', 'mcp__server__tool'],
    ['日本', 'ツール', 'mcp__server__tool'],
  ])('%j / %j -> %j', (server, tool, expected) => expect(mcpCallNameBase(server, tool)).toBe(expected));

  const S = (n: number) => 'S'.repeat(n);
  const T = (n: number) => 'T'.repeat(n);
  it.each([
    // both fit in 57 bytes: kept whole
    [27, 30, 27, 30],
    [1, 56, 1, 56],
    // server 20 first, tool takes what is left, server then grows into any slack
    [30, 30, 27, 30],
    [10, 60, 10, 47],
    [60, 10, 47, 10],
    [60, 60, 20, 37],
    [20, 40, 20, 37],
    [21, 37, 20, 37],
  ])('server %i / tool %i bytes keep %i / %i', (s, t, keepS, keepT) => {
    const name = mcpCallNameBase(S(s), T(t));
    expect(name).toBe(`mcp__${S(keepS)}__${T(keepT)}`);
    expect(name.length).toBeLessThanOrEqual(64);
  });

  it('truncates the normalized segments, not the raw ones', () => {
    expect(mcpCallNameBase(`${'__'.repeat(10)}${S(30)}`, T(30))).toBe(`mcp__${S(27)}__${T(30)}`);
  });

  it('goes through the collision pass', () => {
    const other = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';
    expect(names([mcp('docs', 'search'), mcp('docs', 'search', other)])).toEqual([
      'mcp__docs__search',
      'mcp__docs__search__2',
    ]);
    expect(names([mcp(S(60), T(60)), mcp(S(60), T(60), other)])).toEqual([
      `mcp__${S(20)}__${T(37)}`,
      `mcp__${S(20)}__${T(34)}__2`,
    ]);
  });

  it('shares the name space with extensions in the given order', () => {
    expect(names([extension('mcp__docs__search'), mcp('docs', 'search')])).toEqual([
      'mcp__docs__search',
      'mcp__docs__search__2',
    ]);
  });
});

describe('allocateCallNames', () => {
  it('maps each tool id in entry order', () => {
    const r = allocateCallNames([extension('inspect'), builtin('dice.roll'), mcp('docs', 'search')]);
    expect(r.ok && [...r.value]).toEqual([
      ['extension/ext:inspect', 'inspect'],
      ['builtin:dice.roll', 'dice_roll'],
      [`mcp/${UUID}:search`, 'mcp__docs__search'],
    ]);
  });

  it('rejects a duplicate tool id', () => {
    expect(names([extension('inspect'), extension('inspect')])).toBe('tool.snapshot_duplicate_id');
  });

  it('accepts no entries', () => {
    expect(names([])).toEqual([]);
  });
});

describe('call name properties', () => {
  const name = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.string({ unit: 'grapheme', maxLength: 80 }),
    fc.constantFrom('inspect', 'write', 'task_return', 'workspace_read_file', 'mcp__docs__search', 'x__2'),
    fc.stringMatching(/^[A-Za-z0-9_-]{60,70}$/),
  );
  const external: fc.Arbitrary<CallNameEntry> = fc
    .oneof(
      fc.record({ source: fc.constant('extension' as const), name }),
      fc.record({ source: fc.constant('mcp' as const), name, serverName: name }),
    )
    .map((e) => ({ ...e, toolId: '' as ToolId }));
  const entries = fc
    .tuple(fc.subarray(BUILTIN_TOOL_NAMES as string[]), fc.array(external, { maxLength: 30 }))
    .chain(([builtins, externals]) =>
      fc.shuffledSubarray([...builtins.map(builtin), ...externals], {
        minLength: builtins.length + externals.length,
      }),
    )
    // unique ids; external names are made non-empty, which ToolIds guarantee
    .map((list) =>
      list.map((e, i): CallNameEntry =>
        e.source === 'builtin'
          ? e
          : { ...e, name: e.name || 'x', toolId: `extension/e${i}:${e.name}` as ToolId },
      ),
    );

  it('are valid, unique, deterministic, and builtin names are fixed', () => {
    fc.assert(
      fc.property(entries, (list) => {
        const r = allocateCallNames(list);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        const got = list.map((e) => r.value.get(e.toolId)!);
        for (const n of got) expect(n).toMatch(CALL_NAME);
        expect(new Set(got).size).toBe(got.length);
        expect(allocateCallNames(list)).toEqual(r);
        list.forEach((e, i) => {
          if (e.source === 'builtin') expect(got[i]).toBe(builtinCallName(e.name));
          else expect(got[i]).not.toBe('task_return');
          if (e.source === 'mcp') expect(got[i]!.startsWith('mcp__')).toBe(true);
        });
      }),
    );
  });

  it('MCP bases always fit the 57-byte budget and start with mcp__', () => {
    fc.assert(
      fc.property(name, name, (server, tool) => {
        const base = mcpCallNameBase(server, tool);
        expect(base).toMatch(/^mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+$/);
        expect(base).toMatch(CALL_NAME);
      }),
    );
  });
});
