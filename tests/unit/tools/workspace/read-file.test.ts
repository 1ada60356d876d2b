import { beforeEach, describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { err } from '$lib/domain/result';
import { CHAT_ROOTS, READ_ONLY_MOUNTS, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { ToolContext } from '$lib/tools/tool';
import { readFileTool } from '$lib/tools/workspace/read-file';
import { argumentErrors, callTool, memoryToolContext, putText, wp } from '../../../support/tool-context';

let ctx: ToolContext;
const read = (args: Record<string, unknown>) => callTool(readFileTool, args, ctx);
const put = (path: string, text: string) => putText(ctx.workspace, path, text);

beforeEach(async () => {
  ctx = await memoryToolContext();
});

describe('workspace.read_file descriptor', () => {
  it('has the builtin id and fixed call name, for chat and session', () => {
    expect(readFileTool.id).toBe('builtin:workspace.read_file');
    expect(readFileTool.callName).toBe('workspace_read_file');
    expect(readFileTool.facts.scopes).toEqual(['chat', 'session']);
  });

  it('describes itself to the model with call names, not native names', () => {
    expect(readFileTool.description).toContain('workspace_list_files');
    expect(readFileTool.description).toContain('workspace_apply_patch');
    expect(readFileTool.description).not.toMatch(/workspace\.\w+/);
  });

  it('rejects invalid argument shapes with the spec messages', () => {
    expect(argumentErrors(readFileTool, {})).toEqual(['path is required']);
    expect(argumentErrors(readFileTool, { path: 3 })).toEqual(['path must be a string']);
    for (const key of ['start_line', 'line_count', 'start_char', 'max_chars']) {
      for (const bad of [-1, 1.5, '2', true, null]) {
        expect(argumentErrors(readFileTool, { path: 'work/a', [key]: bad })).toEqual([
          `${key} must be a non-negative integer`,
        ]);
      }
    }
    expect(argumentErrors(readFileTool, { path: 'work/a', extra: 1 })).toHaveLength(1);
    expect(argumentErrors(readFileTool, { path: 'work/a', start_line: 0, line_count: 5000 })).toEqual([]);
  });
});

describe('line mode', () => {
  it('returns the whole file with a header and numbered lines', async () => {
    const text = 'alpha beta\n\ngamma 世界\n';
    const sha = await put('work/a.md', text);
    const out = await read({ path: 'work/a.md' });
    expect(out.isError).toBe(false);
    expect(out.content).toBe(
      `work/a.md lines 1-3 of 3, chars 0-21 of 21, words 5 of 5, sha256 ${sha}\n1 | alpha beta\n2 | \n3 | gamma 世界`,
    );
    expect(out.structured).toEqual({
      path: 'work/a.md',
      sha256: sha,
      totalLines: 3,
      startLine: 1,
      endLine: 3,
      chars: 21,
      words: 5,
      totalChars: 21,
      totalWords: 5,
      startChar: 0,
      endChar: 21,
      truncated: false,
      fullRead: true,
    });
    expect(out.resourceRefs).toEqual(['work/a.md']);
    expect(out.effects).toEqual([]);
  });

  it('counts a last line without a newline, and keeps `\\r`', async () => {
    await put('work/a.md', 'one\r\ntwo');
    const out = await read({ path: 'work/a.md' });
    expect(out.content.split('\n').slice(1)).toEqual(['1 | one\r', '2 | two']);
    expect(out.structured).toMatchObject({ totalLines: 2, endChar: 8, totalChars: 8 });
  });

  it('right-aligns line numbers to the width of the last one shown', async () => {
    await put('work/a.md', Array.from({ length: 105 }, (_, i) => `l${i + 1}`).join('\n'));
    const lines = (await read({ path: 'work/a.md', start_line: 8, line_count: 3 })).content.split('\n');
    expect(lines.slice(1)).toEqual([' 8 | l8', ' 9 | l9', '10 | l10']);
    const whole = (await read({ path: 'work/a.md' })).content.split('\n');
    expect(whole[1]).toBe('  1 | l1');
    expect(whole[105]).toBe('105 | l105');
  });

  it('reports an empty file as lines 0-0 of 0', async () => {
    const sha = await put('work/empty.md', '');
    const out = await read({ path: 'work/empty.md' });
    expect(out.content).toBe(`work/empty.md lines 0-0 of 0, chars 0-0 of 0, words 0 of 0, sha256 ${sha}`);
    expect(out.structured).toMatchObject({
      totalLines: 0,
      startLine: 0,
      endLine: 0,
      truncated: false,
      fullRead: true,
    });
    expect(ctx.readState.get(wp('work/empty.md'))).toMatchObject({ sha256: sha, fullRead: true });
  });

  it('reads a range, with character offsets in Unicode scalar values', async () => {
    const sha = await put('work/a.md', '🎉 one\nzwei drei\n三\nvier\n');
    const out = await read({ path: 'work/a.md', start_line: 2, line_count: 2 });
    expect(out.content).toBe(
      `work/a.md lines 2-3 of 4, chars 6-18 of 23, words 3 of 5, sha256 ${sha}\n2 | zwei drei\n3 | 三`,
    );
    expect(out.structured).toMatchObject({
      startLine: 2,
      endLine: 3,
      chars: 12,
      words: 3,
      startChar: 6,
      endChar: 18,
      truncated: true,
      fullRead: false,
    });
    expect(out.resourceRefs).toEqual(['work/a.md']);
  });

  it('reads from start_line to the end by default, and clamps line_count at the end', async () => {
    await put('work/a.md', 'a\nb\nc\n');
    expect((await read({ path: 'work/a.md', start_line: 2 })).structured).toMatchObject({
      startLine: 2,
      endLine: 3,
      fullRead: false,
      truncated: true,
    });
    expect((await read({ path: 'work/a.md', start_line: 3, line_count: 50 })).structured).toMatchObject({
      startLine: 3,
      endLine: 3,
    });
  });

  it('counts a read from line 1 through the last line as a full read', async () => {
    const sha = await put('work/a.md', 'a\nb\n');
    const out = await read({ path: 'work/a.md', start_line: 1, line_count: 2 });
    expect(out.structured).toMatchObject({ fullRead: true, truncated: false });
    expect(ctx.readState.get(wp('work/a.md'))).toMatchObject({ sha256: sha, fullRead: true });
  });

  it.each([
    [{ start_line: 0 }, 'workspace.invalid_line_range'],
    [{ line_count: 0 }, 'workspace.invalid_line_range'],
    [{ start_line: 5 }, 'workspace.invalid_line_range'],
    [{ line_count: 1201 }, 'workspace.read_line_count_too_large'],
  ])('refuses %j with %s', async (args, code) => {
    await put('work/a.md', 'a\nb\nc\n');
    const out = await read({ path: 'work/a.md', ...args });
    expect(out).toMatchObject({ isError: true, errorCode: code, structured: { error: { code } } });
    expect(ctx.readState.get(wp('work/a.md'))).toBeUndefined();
  });

  it('accepts start_line at the last line, and start_line 1 of an empty file, but not line 2', async () => {
    await put('work/a.md', 'a\nb\nc\n');
    await put('work/e.md', '');
    expect((await read({ path: 'work/a.md', start_line: 3 })).isError).toBe(false);
    expect((await read({ path: 'work/e.md', start_line: 1 })).isError).toBe(false);
    const past = await read({ path: 'work/e.md', start_line: 2 });
    expect(past.errorCode).toBe('workspace.invalid_line_range');
    expect(past.content).toContain('0 lines');
  });

  it('accepts line_count 1200', async () => {
    await put('work/a.md', 'x\n'.repeat(1500));
    const out = await read({ path: 'work/a.md', line_count: 1200 });
    expect(out.structured).toMatchObject({ startLine: 1, endLine: 1200, fullRead: false });
  });

  it('refuses a whole-file read over 1,200 lines, pointing to ranges', async () => {
    await put('work/ok.md', 'x\n'.repeat(1200));
    expect((await read({ path: 'work/ok.md' })).isError).toBe(false);
    await put('work/a.md', 'x\n'.repeat(1201));
    const out = await read({ path: 'work/a.md' });
    expect(out.errorCode).toBe('workspace.read_too_large');
    expect(out.content).toContain('start_line');
    expect(out.content).toContain('line_count');
    expect((await read({ path: 'work/a.md', start_line: 2 })).isError).toBe(false);
  });

  it('refuses a whole-file read over 262,144 bytes, counting bytes rather than characters', async () => {
    await put('work/exact.md', 'é'.repeat(131_072));
    expect((await read({ path: 'work/exact.md' })).isError).toBe(false);
    await put('work/over.md', `${'a'.repeat(262_144)}\n`);
    const out = await read({ path: 'work/over.md' });
    expect(out.errorCode).toBe('workspace.read_too_large');
    expect(out.content).toContain('262,144 bytes');
    expect((await read({ path: 'work/over.md', max_chars: 10 })).isError).toBe(false);
  });

  it('refuses a partial range over 80,000 characters', async () => {
    const line = 'y'.repeat(49_999);
    await put('work/a.md', `${line}\n${line}\n${line}\n`);
    expect((await read({ path: 'work/a.md', line_count: 1 })).isError).toBe(false);
    const out = await read({ path: 'work/a.md', line_count: 2 });
    expect(out.errorCode).toBe('workspace.read_too_large');
    expect(out.content).toContain('start_char');
  });
});

describe('character mode', () => {
  it('returns raw text with a header, and a char-range resource ref', async () => {
    const sha = await put('work/a.md', 'a🎉b\nc d e\n');
    const out = await read({ path: 'work/a.md', start_char: 1, max_chars: 5 });
    expect(out.content).toBe(`work/a.md chars 1-6 of 10, words 2 of 5, sha256 ${sha} (truncated)\n🎉b\nc `);
    expect(out.structured).toEqual({
      path: 'work/a.md',
      sha256: sha,
      totalLines: 2,
      startLine: 0,
      endLine: 0,
      chars: 5,
      words: 2,
      totalChars: 10,
      totalWords: 5,
      startChar: 1,
      endChar: 6,
      truncated: true,
      fullRead: false,
    });
    expect(out.resourceRefs).toEqual(['work/a.md:chars=1..6']);
    expect(ctx.readState.get(wp('work/a.md'))).toEqual({
      sha256: sha,
      fullRead: false,
      observed: ['🎉b\nc '],
      patchRequiresFullRead: false,
    });
  });

  it('reads the whole file without `(truncated)` and records a full read', async () => {
    const sha = await put('work/a.md', 'abc');
    const out = await read({ path: 'work/a.md', start_char: 0 });
    expect(out.content).toBe(`work/a.md chars 0-3 of 3, words 1 of 1, sha256 ${sha}\nabc`);
    expect(out.structured).toMatchObject({ fullRead: true, truncated: false });
    expect(ctx.readState.get(wp('work/a.md'))).toMatchObject({ fullRead: true });
  });

  it('returns at most 80,000 characters by default', async () => {
    await put('work/a.md', '字'.repeat(100_000));
    const out = await read({ path: 'work/a.md', start_char: 0 });
    expect(out.structured).toMatchObject({ startChar: 0, endChar: 80_000, chars: 80_000, truncated: true });
    const rest = await read({ path: 'work/a.md', start_char: 80_000 });
    expect(rest.structured).toMatchObject({ startChar: 80_000, endChar: 100_000, truncated: true });
    expect(rest.resourceRefs).toEqual(['work/a.md:chars=80000..100000']);
  });

  it('reads an empty file from start_char 0', async () => {
    await put('work/e.md', '');
    const out = await read({ path: 'work/e.md', start_char: 0 });
    expect(out.structured).toMatchObject({ startChar: 0, endChar: 0, totalChars: 0, fullRead: true });
  });

  it.each([
    ['abc', { max_chars: 0 }, 'workspace.invalid_char_range'],
    ['abc', { start_char: 3 }, 'workspace.invalid_char_range'],
    ['', { start_char: 1 }, 'workspace.invalid_char_range'],
    ['abc', { max_chars: 80_001 }, 'workspace.read_char_count_too_large'],
  ])('refuses %j %j with %s', async (text, args, code) => {
    await put('work/a.md', text);
    expect((await read({ path: 'work/a.md', ...args })).errorCode).toBe(code);
  });

  it('accepts max_chars 80,000 and start_line 1 alongside character arguments', async () => {
    await put('work/a.md', 'abc');
    expect((await read({ path: 'work/a.md', max_chars: 80_000 })).isError).toBe(false);
    expect((await read({ path: 'work/a.md', start_line: 1, start_char: 1 })).isError).toBe(false);
  });

  it.each([
    { start_char: 0, line_count: 2 },
    { max_chars: 10, start_line: 2 },
    { start_char: 0, start_line: 3, line_count: 1 },
  ])('refuses mixing line and character ranges: %j', async (args) => {
    await put('work/a.md', 'a\nb\nc\n');
    expect((await read({ path: 'work/a.md', ...args })).errorCode).toBe('workspace.mixed_read_range');
  });
});

describe('paths and files', () => {
  it.each(['../secrets.json', '/etc/passwd', 'C:\\x', 'work/../../x', 'work/\0'])(
    'refuses the invalid path %j',
    async (path) => {
      expect((await read({ path })).errorCode).toBe('workspace.invalid_path');
    },
  );

  it('treats a blank path as missing', async () => {
    expect(await read({ path: '   ' })).toMatchObject({
      errorCode: 'tool.invalid_arguments',
      content: 'path is required',
    });
  });

  it('trims the path and normalizes it', async () => {
    await put('work/a.md', 'x');
    const out = await read({ path: ' ./work//a.md ' });
    expect(out.resourceRefs).toEqual(['work/a.md']);
  });

  it('refuses paths outside the visible roots, listing them', async () => {
    await put('runs/secret.json', '{}');
    const out = await read({ path: 'runs/secret.json' });
    expect(out.errorCode).toBe('workspace.path_not_visible');
    expect(out.content).toContain('work/, tmp/, tool-results/, skills/');
  });

  it('uses `/` boundaries for roots', async () => {
    const roots: WorkspaceRoots = { visible: [...CHAT_ROOTS], writable: [...CHAT_ROOTS], readOnly: [] };
    ctx = await memoryToolContext(roots);
    await put('output_extra/x.md', 'x');
    await put('output/x.md', 'x');
    expect((await read({ path: 'output_extra/x.md' })).errorCode).toBe('workspace.path_not_visible');
    expect((await read({ path: 'output/x.md' })).isError).toBe(false);
  });

  it('reads files in read-only mounts', async () => {
    expect(READ_ONLY_MOUNTS).toContain('tool-results');
    await put('tool-results/r.txt', 'result');
    expect((await read({ path: 'tool-results/r.txt' })).isError).toBe(false);
  });

  it('reports a missing file, also below a file, as workspace.file_not_found', async () => {
    await put('work/a.md', 'x');
    expect((await read({ path: 'work/none.md' })).errorCode).toBe('workspace.file_not_found');
    expect((await read({ path: 'work/a.md/b.md' })).errorCode).toBe('workspace.file_not_found');
  });

  it('refuses a directory and points to workspace_list_files', async () => {
    await put('work/dir/a.md', 'x');
    for (const path of ['work/dir', 'work']) {
      const out = await read({ path });
      expect(out.errorCode).toBe('workspace.path_is_directory');
      expect(out.content).toContain('workspace_list_files');
    }
  });

  it('refuses non-UTF-8 files with workspace.not_utf8', async () => {
    await ctx.workspace.write(wp('work/bin.dat'), Uint8Array.of(0x66, 0xff, 0xfe, 0x00));
    const out = await read({ path: 'work/bin.dat' });
    expect(out.errorCode).toBe('workspace.not_utf8');
    expect(out.content).toContain('UTF-8');
  });

  it('keeps a byte-order mark as text, so the hash matches the bytes', async () => {
    const bytes = Uint8Array.of(0xef, 0xbb, 0xbf, 0x68, 0x69);
    await ctx.workspace.write(wp('work/bom.txt'), bytes);
    const out = await read({ path: 'work/bom.txt' });
    expect(out.structured).toMatchObject({ totalChars: 3, sha256: await sha256Hex(bytes) });
  });

  it('throws a system failure when storage fails', async () => {
    ctx.workspace = {
      ...ctx.workspace,
      read: async () => err({ code: 'workspace.storage_failed', message: 'disk on fire' }),
    };
    await expect(read({ path: 'work/a.md' })).rejects.toBeInstanceOf(HearthFailure);
  });
});

describe('read-state updates', () => {
  it('full read records {sha, fullRead} and clears the patch flag', async () => {
    const sha = await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md', line_count: 1 });
    ctx.readState.requireFullReadForPatch(wp('work/a.md'));
    await read({ path: 'work/a.md' });
    expect(ctx.readState.get(wp('work/a.md'))).toEqual({
      sha256: sha,
      fullRead: true,
      observed: [],
      patchRequiresFullRead: false,
    });
  });

  it('partial reads of the same content accumulate observed texts', async () => {
    await put('work/a.md', 'a\nb\nc\n');
    await read({ path: 'work/a.md', line_count: 1 });
    await read({ path: 'work/a.md', start_line: 3 });
    expect(ctx.readState.get(wp('work/a.md'))?.observed).toEqual(['a\n', 'c\n']);
  });

  it('a partial read of changed content resets observed and keeps the patch flag', async () => {
    await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md', line_count: 1 });
    ctx.readState.requireFullReadForPatch(wp('work/a.md'));
    const sha = await put('work/a.md', 'x\ny\n');
    await read({ path: 'work/a.md', start_line: 2 });
    expect(ctx.readState.get(wp('work/a.md'))).toEqual({
      sha256: sha,
      fullRead: false,
      observed: ['y\n'],
      patchRequiresFullRead: true,
    });
  });

  it('errors leave the read-state alone', async () => {
    await put('work/a.md', 'x'.repeat(10));
    await read({ path: 'work/a.md', start_line: 9 });
    await read({ path: 'work/none.md' });
    expect(ctx.readState.get(wp('work/a.md'))).toBeUndefined();
  });
});
