import { beforeEach, describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { err } from '$lib/domain/result';
import type { ToolContext } from '$lib/tools/tool';
import { queryTokens, searchFilesTool, tokenWeight } from '$lib/tools/workspace/search-files';
import { argumentErrors, callTool, memoryToolContext, putText, wp } from '../../../support/tool-context';
import { overrideWorkspace } from '../../../support/workspace-override';

let ctx: ToolContext;
const search = (args: Record<string, unknown>) => callTool(searchFilesTool, args, ctx);
const put = (path: string, text: string) => putText(ctx.workspace, path, text);

interface Hit {
  path: string;
  score: number;
  startLine: number;
  endLine: number;
  snippet: string;
  chars: number;
  words: number;
  sha256: string;
  ref: string;
}
interface Structured {
  query: string;
  hits: Hit[];
  searchedFiles: number;
  skippedFiles: number;
  truncated: boolean;
}
const structured = async (args: Record<string, unknown>) =>
  (await search(args)).structured as unknown as Structured;
const refs = async (args: Record<string, unknown>) => (await search(args)).resourceRefs;

beforeEach(async () => {
  ctx = await memoryToolContext();
});

describe('workspace.search_files descriptor', () => {
  it('has the builtin id and fixed call name, for chat and session', () => {
    expect(searchFilesTool.id).toBe('builtin:workspace.search_files');
    expect(searchFilesTool.callName).toBe('workspace_search_files');
    expect(searchFilesTool.facts.scopes).toEqual(['chat', 'session']);
    expect(searchFilesTool.description).toContain('this tool');
    expect(searchFilesTool.description).toContain('workspace_read_file');
    expect(searchFilesTool.description).toContain('regex');
    expect(searchFilesTool.description).not.toMatch(/workspace\.\w+/);
  });

  it('rejects invalid argument shapes', () => {
    expect(argumentErrors(searchFilesTool, {})).toEqual(['query is required']);
    expect(argumentErrors(searchFilesTool, { query: 1 })).toEqual(['query must be a string']);
    expect(argumentErrors(searchFilesTool, { query: 'a', path: 1 })).toEqual(['path must be a string']);
    expect(argumentErrors(searchFilesTool, { query: 'a', path: null })).toEqual([]);
    for (const key of ['limit', 'context_lines']) {
      for (const bad of [-1, 2.5, '3', false, null]) {
        expect(argumentErrors(searchFilesTool, { query: 'a', [key]: bad })).toEqual([
          `${key} must be a non-negative integer`,
        ]);
      }
    }
    expect(argumentErrors(searchFilesTool, { query: 'a', regex: 'yes' })).toEqual([
      'regex must be a boolean',
    ]);
    expect(argumentErrors(searchFilesTool, { query: 'a', case: true })).toHaveLength(1);
  });
});

describe('arguments', () => {
  it('treats a blank query as missing', async () => {
    expect(await search({ query: '   ' })).toMatchObject({
      errorCode: 'tool.invalid_arguments',
      content: 'query is required',
    });
  });

  it('refuses a query without letters or digits, pointing to regex', async () => {
    const out = await search({ query: '!!! --' });
    expect(out.errorCode).toBe('tool.invalid_arguments');
    expect(out.content).toContain('regex');
  });

  it.each([
    [{ limit: 0 }, 'workspace.search_limit_invalid'],
    [{ limit: 51 }, 'workspace.search_limit_too_large'],
    [{ context_lines: 6 }, 'workspace.search_context_too_large'],
  ])('refuses %j with %s', async (args, code) => {
    const out = await search({ query: 'x', ...args });
    expect(out).toMatchObject({ isError: true, errorCode: code, structured: { error: { code } } });
  });

  it('accepts limit 1 and 50 and context_lines 0 and 5', async () => {
    await put('work/a.md', 'x\n');
    for (const args of [{ limit: 1 }, { limit: 50 }, { context_lines: 0 }, { context_lines: 5 }]) {
      expect((await search({ query: 'x', ...args })).isError).toBe(false);
    }
  });
});

describe('scoring (tools.md §13.1 without bigrams)', () => {
  it('splits the query into lowercased words; punctuation separates, `_` joins; deduped', () => {
    expect(queryTokens('  Hello, WORLD! hello snake_case-word 世界 ')).toEqual([
      'hello',
      'world',
      'snake_case',
      'word',
      '世界',
    ]);
  });

  it('keeps at most 64 words, sampled evenly over the query', () => {
    const words = Array.from({ length: 128 }, (_, i) => `w${i}`);
    const tokens = queryTokens(words.join(' '));
    expect(tokens).toHaveLength(64);
    expect(tokens[0]).toBe('w0');
    expect(tokens[1]).toBe('w2');
    expect(tokens[63]).toBe('w126');
  });

  it('weighs a word by its length in characters, at most 8', () => {
    expect(tokenWeight('ab')).toBe(2);
    expect(tokenWeight('世界')).toBe(2);
    expect(tokenWeight('🎉🎉🎉')).toBe(3);
    expect(tokenWeight('extraordinary')).toBe(8);
  });

  it('scores a line by the weight of the words it contains over the total weight', async () => {
    await put('work/a.md', 'alpha beta\nonly alpha here\nbeta alone\nnothing\n');
    const hits = (await structured({ query: 'alpha beta', context_lines: 0 })).hits;
    expect(hits.map((h) => [h.startLine, h.score])).toEqual([
      [1, 1],
      [2, 5 / 9],
      [3, 4 / 9],
    ]);
  });

  it('matches substrings case-insensitively, also outside ASCII', async () => {
    await put('work/a.md', 'The ALPHABET\nПривет мир\n');
    expect((await structured({ query: 'alpha' })).hits).toHaveLength(1);
    expect((await structured({ query: 'привет' })).hits).toHaveLength(1);
  });

  it('drops lines that match nothing, and zero hits is a success', async () => {
    await put('work/a.md', 'alpha\n');
    const out = await search({ query: 'zeta' });
    expect(out).toMatchObject({
      isError: false,
      content: 'No visible workspace files matched `zeta`.',
      structured: { query: 'zeta', hits: [], searchedFiles: 1, skippedFiles: 0, truncated: false },
      resourceRefs: [],
    });
  });
});

describe('output', () => {
  it('renders a header, and per hit a path/score/ref line and a line-numbered snippet', async () => {
    const text = 'one\ntwo\nthree alpha\nfour\nfive\nsix\n';
    const sha = await put('work/a.md', text);
    const out = await search({ query: ' alpha ' });
    expect(out.content).toBe(
      [
        'Search `alpha` matched 1 workspace location(s). Read the exact text with `workspace_read_file` (path and line range from the ref) before quoting or changing it.',
        '',
        'work/a.md score 1.000 ref workspace:work/a.md#L1-L5',
        '1 | one\n2 | two\n3 | three alpha\n4 | four\n5 | five',
      ].join('\n'),
    );
    expect(out.structured).toEqual({
      query: 'alpha',
      hits: [
        {
          path: 'work/a.md',
          score: 1,
          startLine: 1,
          endLine: 5,
          snippet: '1 | one\n2 | two\n3 | three alpha\n4 | four\n5 | five',
          chars: 29,
          words: 6,
          sha256: sha,
          ref: 'workspace:work/a.md#L1-L5',
        },
      ],
      searchedFiles: 1,
      skippedFiles: 0,
      truncated: false,
    });
    expect(out.resourceRefs).toEqual(['workspace:work/a.md#L1-L5']);
    expect(out.effects).toEqual([]);
  });

  it('prints scores with three decimals and aligns line numbers', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => (i === 9 ? 'alpha' : `l${i + 1}`));
    await put('work/a.md', lines.join('\n'));
    const out = await search({ query: 'alpha beta' });
    expect(out.content).toContain('work/a.md score 0.556 ref workspace:work/a.md#L8-L12');
    expect(out.content).toContain(' 8 | l8\n 9 | l9\n10 | alpha\n11 | l11\n12 | l12');
  });

  it('clamps windows at the start and end of the file, and uses context_lines', async () => {
    await put('work/a.md', 'alpha\nb\nc\nd\nalpha');
    expect(await refs({ query: 'alpha', context_lines: 1 })).toEqual([
      'workspace:work/a.md#L1-L2',
      'workspace:work/a.md#L4-L5',
    ]);
    expect(await refs({ query: 'alpha', context_lines: 5 })).toEqual(['workspace:work/a.md#L1-L5']);
    expect(await refs({ query: 'alpha', context_lines: 0 })).toEqual([
      'workspace:work/a.md#L1-L1',
      'workspace:work/a.md#L5-L5',
    ]);
  });

  it('does not count a final newline as an extra line', async () => {
    await put('work/a.md', 'a\nalpha\n');
    expect(await refs({ query: 'alpha' })).toEqual(['workspace:work/a.md#L1-L2']);
  });

  it('drops windows that overlap a better (or equal and earlier) one', async () => {
    await put('work/a.md', 'alpha\nx\nalpha beta\nx\nalpha\nx\nx\nx\nx\nx\nalpha\n');
    const hits = (await structured({ query: 'alpha beta', context_lines: 1 })).hits;
    expect(hits.map((h) => [h.startLine, h.endLine])).toEqual([
      [2, 4],
      [10, 11],
    ]);
  });

  it('cuts very long lines in snippets', async () => {
    await put('work/a.md', `alpha ${'x'.repeat(5_000)}\n`);
    const hit = (await structured({ query: 'alpha' })).hits[0]!;
    expect(hit.snippet).toBe(`1 | alpha ${'x'.repeat(994)} [line cut]`);
  });
});

describe('limits and ranking', () => {
  it('sorts hits by score, then path, then start line, and cuts to limit', async () => {
    await put('work/b.md', 'alpha beta\n');
    await put('work/a.md', 'alpha\n\n\n\n\n\nalpha beta\n');
    await put('tmp/c.md', 'alpha beta\n');
    const all = await structured({ query: 'alpha beta', context_lines: 0 });
    expect(all.hits.map((h) => `${h.path}:${h.startLine}`)).toEqual([
      'tmp/c.md:1',
      'work/a.md:7',
      'work/b.md:1',
      'work/a.md:1',
    ]);
    expect(all.truncated).toBe(false);
    const cut = await search({ query: 'alpha beta', context_lines: 0, limit: 2 });
    expect((cut.structured as unknown as Structured).hits).toHaveLength(2);
    expect(cut.structured).toMatchObject({ truncated: true });
    expect(cut.content.endsWith('\n\nResults were truncated.')).toBe(true);
  });

  it('keeps at most `limit` hits per file and reports dropped ones as truncated', async () => {
    await put('work/a.md', Array.from({ length: 10 }, () => 'alpha').join('\n\n\n\n\n\n'));
    const out = await structured({ query: 'alpha', limit: 3, context_lines: 0 });
    expect(out.hits.map((h) => h.startLine)).toEqual([1, 7, 13]);
    expect(out.truncated).toBe(true);
  });

  it('searches at most 1,000 files, then reports truncation and how to narrow it', async () => {
    for (let i = 0; i < 1_001; i++) await put(`work/f${String(i).padStart(4, '0')}.md`, 'alpha');
    const out = await search({ query: 'alpha', limit: 1 });
    expect(out.structured).toMatchObject({ searchedFiles: 1_000, truncated: true });
    expect(out.content).toContain('Results were truncated. Only the first 1,000 files were searched');
    expect(out.content).toContain('`path`');
  });

  it('searches exactly 1,000 files without truncation', async () => {
    for (let i = 0; i < 999; i++) await put(`work/f${String(i).padStart(4, '0')}.md`, 'beta');
    await put('work/zz.md', 'alpha');
    const out = await search({ query: 'alpha' });
    expect(out.structured).toMatchObject({
      searchedFiles: 1_000,
      truncated: false,
      hits: [{ path: 'work/zz.md' }],
    });
    expect(out.content).not.toContain('truncated');
  });

  it('searches files up to 8 directory levels below a root or the given directory', async () => {
    await put('work/1/2/3/4/5/6/7/deep.md', 'alpha');
    await put('work/1/2/3/4/5/6/7/8/deeper.md', 'alpha');
    expect((await structured({ query: 'alpha' })).hits.map((h) => h.path)).toEqual([
      'work/1/2/3/4/5/6/7/deep.md',
    ]);
    expect((await structured({ query: 'alpha', path: 'work/1' })).hits.map((h) => h.path)).toEqual([
      'work/1/2/3/4/5/6/7/8/deeper.md',
      'work/1/2/3/4/5/6/7/deep.md',
    ]);
  });
});

describe('scope', () => {
  beforeEach(async () => {
    await put('work/a.md', 'alpha work');
    await put('tmp/b.md', 'alpha tmp');
    await put('skills/s/SKILL.md', 'alpha skill');
    await put('tool-results/r1/x.txt', 'alpha result');
    await put('runs/r1/events.jsonl', 'alpha hidden');
    await put('manifest.json', 'alpha hidden');
  });
  const paths = async (args: Record<string, unknown>) =>
    (await structured({ query: 'alpha', ...args })).hits.map((h) => h.path);

  it.each([undefined, null, '', '.', './'])(
    'searches the visible roots except skills/ and tool-results/ for path %j',
    async (path) => {
      expect(await paths(path === undefined ? {} : { path })).toEqual(['tmp/b.md', 'work/a.md']);
    },
  );

  it('searches skills/ and tool-results/ when given as path', async () => {
    expect(await paths({ path: 'skills' })).toEqual(['skills/s/SKILL.md']);
    expect(await paths({ path: 'tool-results/r1' })).toEqual(['tool-results/r1/x.txt']);
  });

  it('searches one file', async () => {
    expect(await paths({ path: 'work/a.md' })).toEqual(['work/a.md']);
    expect((await structured({ query: 'alpha', path: 'work/a.md' })).searchedFiles).toBe(1);
  });

  it('never searches hidden runtime storage', async () => {
    expect((await search({ query: 'hidden' })).content).toBe('No visible workspace files matched `hidden`.');
    expect((await search({ query: 'alpha', path: 'runs' })).errorCode).toBe('workspace.path_not_visible');
    expect((await search({ query: 'alpha', path: 'manifest.json' })).errorCode).toBe(
      'workspace.path_not_visible',
    );
  });

  it('reports an unparseable path as tool.invalid_arguments', async () => {
    for (const path of ['../x', '/work', 'C:\\work', 'work/../../runs']) {
      expect((await search({ query: 'alpha', path })).errorCode).toBe('tool.invalid_arguments');
    }
  });

  it('reports a missing path as workspace.path_not_found, and an empty root as no hits', async () => {
    const out = await search({ query: 'alpha', path: 'work/none' });
    expect(out.errorCode).toBe('workspace.path_not_found');
    expect(out.content).toContain('workspace_list_files');
    await ctx.workspace.remove(wp('tmp'));
    expect((await search({ query: 'alpha', path: 'tmp' })).isError).toBe(false);
  });
});

describe('files', () => {
  it('skips files that are not UTF-8 and counts them', async () => {
    await ctx.workspace.write(wp('work/bin.dat'), Uint8Array.of(0x61, 0x6c, 0x70, 0x68, 0x61, 0xff));
    await put('work/a.md', 'alpha');
    expect(await structured({ query: 'alpha' })).toMatchObject({
      searchedFiles: 1,
      skippedFiles: 1,
      hits: [{ path: 'work/a.md' }],
    });
  });

  it('searches empty files without hits', async () => {
    await put('work/e.md', '');
    expect(await structured({ query: 'alpha' })).toMatchObject({ searchedFiles: 1, hits: [] });
    expect(await structured({ query: '^', regex: true })).toMatchObject({ searchedFiles: 1, hits: [] });
  });

  it('gives each hit the hash of its file', async () => {
    const sha = await put('work/a.md', 'alpha\n');
    expect((await structured({ query: 'alpha' })).hits[0]!.sha256).toBe(sha);
    expect(sha).toBe(await sha256Hex('alpha\n'));
  });

  it('throws a system failure when storage fails', async () => {
    await put('work/a.md', 'alpha');
    ctx.workspace = overrideWorkspace(ctx.workspace, {
      read: async () => err({ code: 'workspace.storage_failed', message: 'disk on fire' }),
    });
    await expect(search({ query: 'alpha' })).rejects.toBeInstanceOf(HearthFailure);
  });

  it('skips a file that vanishes during the search', async () => {
    await put('work/a.md', 'alpha');
    ctx.workspace = overrideWorkspace(ctx.workspace, {
      read: async (p) => err({ code: 'workspace.file_not_found', message: `No file at ${p}` }),
    });
    expect(await structured({ query: 'alpha' })).toMatchObject({ searchedFiles: 0, hits: [] });
  });

  it('stops early when the invocation is cancelled', async () => {
    await put('work/a.md', 'alpha');
    const abort = new AbortController();
    abort.abort();
    ctx.signal = abort.signal;
    const out = await search({ query: 'alpha' });
    expect(out.structured).toMatchObject({ searchedFiles: 0, truncated: true });
  });
});

describe('regex mode', () => {
  it('matches a regular expression per line, case-sensitively, with score 1', async () => {
    await put('work/a.md', 'const x = 1;\nCONST Y = 2;\nlet z = 3;\n');
    const out = await structured({ query: '^const \\w+ =', regex: true, context_lines: 0 });
    expect(out.hits.map((h) => [h.startLine, h.score])).toEqual([[1, 1]]);
    expect(out.query).toBe('^const \\w+ =');
  });

  it('matches punctuation that plain search ignores', async () => {
    await put('work/a.md', 'a -> b\nc\n');
    expect((await structured({ query: '->', regex: true })).hits).toHaveLength(1);
  });

  it('ignores a trailing carriage return for `$`', async () => {
    await put('work/a.md', 'end\r\nmid end x\r\n');
    expect((await structured({ query: 'end$', regex: true, context_lines: 0 })).hits).toMatchObject([
      { startLine: 1 },
    ]);
  });

  it('refuses an invalid pattern with the engine message', async () => {
    const out = await search({ query: '(unclosed', regex: true });
    expect(out.errorCode).toBe('tool.invalid_arguments');
    expect(out.content).toMatch(/^query is not a valid regular expression: .*missing closing \)/);
    expect(out.content).toContain('`regex` to false');
  });

  it('refuses lookaround, which RE2 does not have, and says so', async () => {
    const out = await search({ query: '(?<=a)b', regex: true });
    expect(out.errorCode).toBe('tool.invalid_arguments');
    expect(out.content).toContain('no backreferences or lookaround');
  });

  it('ignores case with (?i)', async () => {
    await put('work/a.md', 'An ERROR here\nfine\n');
    expect((await structured({ query: '(?i)error', regex: true, context_lines: 0 })).hits).toMatchObject([
      { startLine: 1 },
    ]);
  });

  // Each of these takes a backtracking engine minutes or more on these lines; RE2 is linear.
  it.each([
    ['(a+)+$', []],
    ['(a*)*b', []],
    ['(\\w+\\s?)*$', [1, 2]],
    ['.*.*.*x', [2]],
    ['(x+x+)+y', []],
  ])('matches the backtracking-prone pattern %j correctly on long lines', async (query, lines) => {
    await put('work/a.md', `${'a'.repeat(20_000)}!\n${'x'.repeat(20_000)}\n`);
    const out = await structured({ query: query as string, regex: true, context_lines: 0 });
    expect(out.hits.map((h) => h.startLine)).toEqual(lines);
  });
});
