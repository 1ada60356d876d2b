import { beforeEach, describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { err } from '$lib/domain/result';
import type { Workspace } from '$lib/ports/workspace';
import type { ToolContext } from '$lib/tools/tool';
import { applyPatchTool } from '$lib/tools/workspace/apply-patch';
import { readFileTool } from '$lib/tools/workspace/read-file';
import { writeFileTool } from '$lib/tools/workspace/write-file';
import {
  argumentErrors,
  callTool,
  getText,
  memoryToolContext,
  putText,
  wp,
} from '../../../support/tool-context';
import { overrideWorkspace } from '../../../support/workspace-override';

let ctx: ToolContext;
const patch = (args: Record<string, unknown>) => callTool(applyPatchTool, args, ctx);
const read = (args: Record<string, unknown>) => callTool(readFileTool, args, ctx);
const write = (args: Record<string, unknown>) => callTool(writeFileTool, args, ctx);
/** A change made by someone else (another invocation, the shell, the person). */
const put = (path: string, text: string) => putText(ctx.workspace, path, text);
const get = (path: string) => getText(ctx.workspace, path);
const state = (path = 'work/a.md') => ctx.readState.get(wp(path));
const FULL_READ = 'Read the whole file with `workspace_read_file`';

beforeEach(async () => {
  ctx = await memoryToolContext();
});

describe('workspace.apply_patch descriptor', () => {
  it('has the builtin id and fixed call name, for chat and session', () => {
    expect(applyPatchTool.id).toBe('builtin:workspace.apply_patch');
    expect(applyPatchTool.callName).toBe('workspace_apply_patch');
    expect(applyPatchTool.facts.scopes).toEqual(['chat', 'session']);
    expect(applyPatchTool.description).toContain('this tool');
    expect(applyPatchTool.description).toContain('workspace_read_file');
    expect(applyPatchTool.description).toContain('workspace_write_file');
    expect(applyPatchTool.description).not.toMatch(/workspace\.\w+/);
  });

  it('rejects invalid argument shapes', () => {
    const ok = { path: 'work/a.md', old_string: 'a', new_string: 'b' };
    expect(argumentErrors(applyPatchTool, ok)).toEqual([]);
    expect(argumentErrors(applyPatchTool, { ...ok, path: undefined })).toEqual(['path is required']);
    expect(argumentErrors(applyPatchTool, { ...ok, old_string: undefined })).toEqual([
      'old_string is required',
    ]);
    expect(argumentErrors(applyPatchTool, { ...ok, new_string: undefined })).toEqual([
      'new_string is required',
    ]);
    expect(argumentErrors(applyPatchTool, { ...ok, new_string: 5 })).toEqual(['new_string must be a string']);
    for (const bad of ['true', 1, null]) {
      expect(argumentErrors(applyPatchTool, { ...ok, replace_all: bad })).toEqual([
        'replace_all must be a boolean',
      ]);
    }
    expect(argumentErrors(applyPatchTool, { ...ok, dry_run: true })).toHaveLength(1);
  });
});

describe('a successful patch', () => {
  it('replaces the unique occurrence and reports the whole file, hashes and a file-patched effect', async () => {
    const oldSha256 = await put('work/a.md', 'Hello world\nbye\n');
    await read({ path: 'work/a.md' });
    const out = await patch({ path: 'work/a.md', old_string: 'world', new_string: '世界' });
    const sha256 = await sha256Hex('Hello 世界\nbye\n');
    expect(out).toEqual({
      content: 'Patched work/a.md with 1 replacement(s); file now has 13 chars / 4 words.',
      isError: false,
      structured: { path: 'work/a.md', chars: 13, words: 4, oldSha256, sha256, replacements: 1 },
      resourceRefs: ['work/a.md'],
      images: [],
      effects: [
        {
          type: 'file-patched',
          path: 'work/a.md',
          chars: 13,
          words: 4,
          oldSha256,
          sha256,
          replacements: 1,
          content: new TextEncoder().encode('Hello 世界\nbye\n'),
        },
      ],
    });
    expect(await get('work/a.md')).toBe('Hello 世界\nbye\n');
  });

  it('uses old_string and new_string verbatim: whitespace, CRLF and `$` patterns', async () => {
    await put('work/a.md', 'a  b\r\nc\r\n');
    await read({ path: 'work/a.md' });
    await patch({ path: 'work/a.md', old_string: '  b\r\nc', new_string: " $& $1 $$ $' " });
    expect(await get('work/a.md')).toBe("a $& $1 $$ $' \r\n");
  });

  it('deletes old_string when new_string is empty', async () => {
    await put('work/a.md', 'keep DELETE keep');
    await read({ path: 'work/a.md' });
    expect((await patch({ path: 'work/a.md', old_string: 'DELETE ', new_string: '' })).isError).toBe(false);
    expect(await get('work/a.md')).toBe('keep keep');
  });

  it('replaces every non-overlapping occurrence with replace_all and counts them', async () => {
    await put('work/a.md', 'aaaaa x aa');
    await read({ path: 'work/a.md' });
    const out = await patch({ path: 'work/a.md', old_string: 'aa', new_string: 'b', replace_all: true });
    expect(out.content).toBe('Patched work/a.md with 3 replacement(s); file now has 7 chars / 3 words.');
    expect(out.structured).toMatchObject({ replacements: 3 });
    expect(await get('work/a.md')).toBe('bba x b');
  });

  it('accepts replace_all false and a unique old_string with replace_all true', async () => {
    await put('work/a.md', 'one two');
    await read({ path: 'work/a.md' });
    expect(
      (await patch({ path: 'work/a.md', old_string: 'one', new_string: '1', replace_all: false })).isError,
    ).toBe(false);
    const out = await patch({ path: 'work/a.md', old_string: 'two', new_string: '2', replace_all: true });
    expect(out.structured).toMatchObject({ replacements: 1 });
    expect(await get('work/a.md')).toBe('1 2');
  });
});

describe('check order (tools.md §13.8)', () => {
  it('refuses an empty old_string first, before the path is looked at', async () => {
    const out = await patch({ path: '../bad', old_string: '', new_string: 'x' });
    expect(out.errorCode).toBe('workspace.patch_empty_old_string');
    expect(out.content).toContain('workspace_write_file');
  });

  it('refuses identical strings next, before the path is looked at', async () => {
    const out = await patch({ path: '../bad', old_string: 'same', new_string: 'same' });
    expect(out.errorCode).toBe('workspace.patch_no_change');
  });

  it.each([
    ['../x.md', 'workspace.invalid_path'],
    ['/work/a.md', 'workspace.invalid_path'],
    ['  ', 'tool.invalid_arguments'],
    ['work', 'workspace.path_not_writable'],
    ['tool-results/r.txt', 'workspace.path_not_writable'],
    ['skills/s/SKILL.md', 'workspace.path_not_writable'],
    ['runs/r1/events.jsonl', 'workspace.path_not_writable'],
  ])('then checks the path: %j → %s', async (path, code) => {
    expect((await patch({ path, old_string: 'a', new_string: 'b' })).errorCode).toBe(code);
  });

  it('then requires a read-state for the file (workspace.patch_requires_read)', async () => {
    await put('work/a.md', 'a');
    for (const path of ['work/a.md', 'work/missing.md']) {
      const out = await patch({ path, old_string: 'a', new_string: 'b' });
      expect(out.errorCode).toBe('workspace.patch_requires_read');
      expect(out.content).toContain('workspace_read_file');
    }
    expect(await get('work/a.md')).toBe('a');
  });

  it('then refuses while the patch flag is set, even for observed text', async () => {
    await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md', line_count: 1 });
    await patch({ path: 'work/a.md', old_string: 'zzz', new_string: 'y' });
    const out = await patch({ path: 'work/a.md', old_string: 'a', new_string: 'y' });
    expect(out.errorCode).toBe('workspace.patch_requires_full_read');
    expect(out.content).toContain(FULL_READ);
  });

  it('checks partial-read rules before reading the file', async () => {
    await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md', line_count: 1 });
    await ctx.workspace.remove(wp('work/a.md'));
    const out = await patch({ path: 'work/a.md', old_string: 'a', new_string: 'b', replace_all: true });
    expect(out.errorCode).toBe('workspace.patch_requires_full_read');
  });

  it('then reads the file: missing → workspace.file_not_found, directory → workspace.path_is_directory', async () => {
    await put('work/a.md', 'a');
    await read({ path: 'work/a.md' });
    await ctx.workspace.remove(wp('work/a.md'));
    const missing = await patch({ path: 'work/a.md', old_string: 'a', new_string: 'b' });
    expect(missing.errorCode).toBe('workspace.file_not_found');
    expect(missing.content).toContain('workspace_list_files');
    await put('work/a.md/inner.md', 'x');
    expect((await patch({ path: 'work/a.md', old_string: 'a', new_string: 'b' })).errorCode).toBe(
      'workspace.path_is_directory',
    );
  });

  it('then refuses a file that is not UTF-8', async () => {
    const bytes = Uint8Array.of(0x61, 0xff);
    await ctx.workspace.write(wp('work/a.bin'), bytes);
    ctx.readState.recordFullRead(wp('work/a.bin'), await sha256Hex(bytes));
    expect((await patch({ path: 'work/a.bin', old_string: 'a', new_string: 'b' })).errorCode).toBe(
      'workspace.not_utf8',
    );
  });

  it('then compares hashes: changed since read → workspace.patch_stale_file', async () => {
    await put('work/a.md', 'v1 text');
    await read({ path: 'work/a.md' });
    await put('work/a.md', 'v2 text');
    const out = await patch({ path: 'work/a.md', old_string: 'text', new_string: 'words' });
    expect(out.errorCode).toBe('workspace.patch_stale_file');
    expect(out.content).toContain('Read it again with `workspace_read_file`');
    expect(await get('work/a.md')).toBe('v2 text');
  });

  it('then counts occurrences: none → workspace.patch_old_string_not_found', async () => {
    await put('work/a.md', 'alpha beta');
    await read({ path: 'work/a.md' });
    const out = await patch({ path: 'work/a.md', old_string: 'gamma', new_string: 'x' });
    expect(out.errorCode).toBe('workspace.patch_old_string_not_found');
    expect(out.content).toContain('exactly');
  });

  it('then refuses several occurrences without replace_all, saying how many', async () => {
    await put('work/a.md', 'x = 1\nx = 1\nx = 1\n');
    await read({ path: 'work/a.md' });
    const out = await patch({ path: 'work/a.md', old_string: 'x = 1', new_string: 'x = 2' });
    expect(out.errorCode).toBe('workspace.patch_old_string_not_unique');
    expect(out.content).toContain('occurs 3 times');
    expect(out.content).toContain('replace_all');
    expect(out.content).toContain('surrounding text');
    expect(await get('work/a.md')).toBe('x = 1\nx = 1\nx = 1\n');
  });

  it('finally writes guarded by the hash: a concurrent change → workspace.patch_stale_file', async () => {
    await put('work/a.md', 'alpha');
    await read({ path: 'work/a.md' });
    ctx.workspace = raceBeforeWrite(ctx.workspace, (ws) => ws.write(wp('work/a.md'), enc('theirs')));
    const out = await patch({ path: 'work/a.md', old_string: 'alpha', new_string: 'mine' });
    expect(out.errorCode).toBe('workspace.patch_stale_file');
    expect(await get('work/a.md')).toBe('theirs');
  });

  it('reports a file removed just before the guarded write as stale', async () => {
    await put('work/a.md', 'alpha');
    await read({ path: 'work/a.md' });
    ctx.workspace = raceBeforeWrite(ctx.workspace, (ws) => ws.remove(wp('work/a.md')));
    expect((await patch({ path: 'work/a.md', old_string: 'alpha', new_string: 'b' })).errorCode).toBe(
      'workspace.patch_stale_file',
    );
  });

  it('throws a system failure when storage fails', async () => {
    await put('work/a.md', 'alpha');
    await read({ path: 'work/a.md' });
    const failing = overrideWorkspace(ctx.workspace, {
      write: async () => err({ code: 'workspace.storage_failed', message: 'quota exceeded' }),
    });
    ctx.workspace = failing;
    await expect(patch({ path: 'work/a.md', old_string: 'alpha', new_string: 'b' })).rejects.toBeInstanceOf(
      HearthFailure,
    );
    ctx.workspace = overrideWorkspace(failing, {
      read: async () => err({ code: 'workspace.storage_failed', message: 'disk on fire' }),
    });
    await expect(patch({ path: 'work/a.md', old_string: 'alpha', new_string: 'b' })).rejects.toBeInstanceOf(
      HearthFailure,
    );
  });
});

describe('hints for a missing old_string', () => {
  it('points out line-number prefixes copied from read output', async () => {
    await put('work/a.md', 'alpha\nbeta\n');
    await read({ path: 'work/a.md' });
    const out = await patch({ path: 'work/a.md', old_string: '1 | alpha\n2 | beta', new_string: 'x' });
    expect(out.errorCode).toBe('workspace.patch_old_string_not_found');
    expect(out.content).toContain('line numbers');
  });

  it('points out CRLF line endings', async () => {
    await put('work/a.md', 'alpha\r\nbeta\r\n');
    await read({ path: 'work/a.md' });
    const out = await patch({ path: 'work/a.md', old_string: 'alpha\nbeta', new_string: 'x' });
    expect(out.content).toContain('CRLF');
  });
});

describe('read-state (tools.md §12.3), through read, write and patch', () => {
  it('full read: patches need nothing more, and a failure does not set the patch flag', async () => {
    await put('work/a.md', 'alpha beta');
    await read({ path: 'work/a.md' });
    const out = await patch({ path: 'work/a.md', old_string: 'gamma', new_string: 'x' });
    expect(out.content).not.toContain(FULL_READ);
    expect(state()?.patchRequiresFullRead).toBe(false);
    expect((await patch({ path: 'work/a.md', old_string: 'beta', new_string: 'x' })).isError).toBe(false);
  });

  it('full read clears the patch flag', async () => {
    await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md', line_count: 1 });
    await patch({ path: 'work/a.md', old_string: 'b', new_string: 'x' });
    expect(state()?.patchRequiresFullRead).toBe(true);
    await read({ path: 'work/a.md' });
    expect(state()?.patchRequiresFullRead).toBe(false);
    expect((await patch({ path: 'work/a.md', old_string: 'b', new_string: 'x' })).isError).toBe(false);
  });

  it('partial reads of the same content accumulate what can be patched', async () => {
    await put('work/a.md', 'one\ntwo\nthree\n');
    await read({ path: 'work/a.md', line_count: 1 });
    await read({ path: 'work/a.md', start_line: 3 });
    expect(state()?.observed).toEqual(['one\n', 'three\n']);
    expect((await patch({ path: 'work/a.md', old_string: 'three', new_string: '3' })).isError).toBe(false);
    expect(await get('work/a.md')).toBe('one\ntwo\n3\n');
  });

  it('partial read: old_string must lie inside one observed text', async () => {
    await put('work/a.md', 'one\ntwo\nthree\n');
    await read({ path: 'work/a.md', line_count: 1 });
    await read({ path: 'work/a.md', start_line: 3 });
    const out = await patch({ path: 'work/a.md', old_string: 'two', new_string: '2' });
    expect(out.errorCode).toBe('workspace.patch_requires_full_read');
    expect(out.content).toContain('parts of `work/a.md` you have read');
    expect(out.content).toContain(FULL_READ);
    expect(state()?.patchRequiresFullRead).toBe(true);
  });

  it('partial read of changed content resets observed texts and keeps the patch flag', async () => {
    await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md', line_count: 1 });
    await patch({ path: 'work/a.md', old_string: 'nope', new_string: 'x' });
    const sha = await put('work/a.md', 'c\nd\n');
    await read({ path: 'work/a.md', line_count: 1 });
    expect(state()).toEqual({ sha256: sha, fullRead: false, observed: ['c\n'], patchRequiresFullRead: true });
    expect((await patch({ path: 'work/a.md', old_string: 'c', new_string: 'x' })).errorCode).toBe(
      'workspace.patch_requires_full_read',
    );
  });

  it('a replace write marks the file fully read: replace_all works without reading', async () => {
    await write({ path: 'work/a.md', content: 'x x x' });
    const out = await patch({ path: 'work/a.md', old_string: 'x', new_string: 'y', replace_all: true });
    expect(out.structured).toMatchObject({ replacements: 3 });
  });

  it('an append that created the file marks it fully read', async () => {
    await write({ path: 'work/a.md', content: 'x x', mode: 'append' });
    expect(
      (await patch({ path: 'work/a.md', old_string: 'x', new_string: 'y', replace_all: true })).isError,
    ).toBe(false);
  });

  it('an append after a full read of the previous content keeps the file fully read', async () => {
    await put('work/a.md', 'x\n');
    await read({ path: 'work/a.md' });
    await write({ path: 'work/a.md', content: 'x\n', mode: 'append' });
    expect(
      (await patch({ path: 'work/a.md', old_string: 'x', new_string: 'y', replace_all: true })).structured,
    ).toMatchObject({ replacements: 2 });
  });

  it('any other append leaves the state stale, so the next patch is refused as stale', async () => {
    await put('work/a.md', 'x\ny\n');
    await read({ path: 'work/a.md', line_count: 1 });
    await write({ path: 'work/a.md', content: 'z\n', mode: 'append' });
    const out = await patch({ path: 'work/a.md', old_string: 'x', new_string: 'w' });
    expect(out.errorCode).toBe('workspace.patch_stale_file');
    expect(out.content).toContain(FULL_READ);
    expect(state()?.patchRequiresFullRead).toBe(true);
  });

  it('a patch after a full read leaves the file fully read at the new hash', async () => {
    await put('work/a.md', 'a b a');
    await read({ path: 'work/a.md' });
    const out = await patch({ path: 'work/a.md', old_string: 'b', new_string: 'c' });
    const { sha256 } = out.structured as { sha256: string };
    expect(state()).toEqual({ sha256, fullRead: true, observed: [], patchRequiresFullRead: false });
    expect(
      (await patch({ path: 'work/a.md', old_string: 'a', new_string: 'z', replace_all: true })).isError,
    ).toBe(false);
    expect(await get('work/a.md')).toBe('z c z');
  });

  it('a patch after a partial read updates the observed texts and the hash, not to a full read', async () => {
    await put('work/a.md', 'one\ntwo\nthree\n');
    await read({ path: 'work/a.md', start_line: 2, line_count: 1 });
    await read({ path: 'work/a.md', start_line: 1, line_count: 2 });
    const out = await patch({ path: 'work/a.md', old_string: 'two', new_string: '2' });
    expect(out.isError).toBe(false);
    const { sha256 } = out.structured as { sha256: string };
    expect(state()).toEqual({
      sha256,
      fullRead: false,
      observed: ['2\n', 'one\n2\n'],
      patchRequiresFullRead: false,
    });
    // The new text counts as observed, so it can be patched again without reading.
    expect((await patch({ path: 'work/a.md', old_string: 'one\n2', new_string: '1\n2' })).isError).toBe(
      false,
    );
    expect(await get('work/a.md')).toBe('1\n2\nthree\n');
    expect((await patch({ path: 'work/a.md', old_string: 'three', new_string: '3' })).errorCode).toBe(
      'workspace.patch_requires_full_read',
    );
  });

  it('a successful partial-read patch clears the patch flag', async () => {
    // Through the tools the flag blocks every patch until a full read; the state clears it anyway.
    await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md', line_count: 1 });
    ctx.readState.requireFullReadForPatch(wp('work/a.md'));
    ctx.readState.recordPatch(wp('work/a.md'), { sha256: 'new', oldString: 'a', newString: 'x' });
    expect(state()).toEqual({
      sha256: 'new',
      fullRead: false,
      observed: ['x\n'],
      patchRequiresFullRead: false,
    });
  });

  describe('every failure after a partial read sets the flag and asks for a full read', () => {
    const failures: [string, () => Promise<void>, Record<string, unknown>, string][] = [
      [
        'replace_all',
        async () => {},
        { old_string: 'b', replace_all: true },
        'workspace.patch_requires_full_read',
      ],
      ['old_string not observed', async () => {}, { old_string: 'c' }, 'workspace.patch_requires_full_read'],
      [
        'stale hash',
        async () => void (await put('work/a.md', 'a\nb\nb\nc\nchanged\n')),
        { old_string: 'b' },
        'workspace.patch_stale_file',
      ],
      ['several matches', async () => {}, { old_string: 'b' }, 'workspace.patch_old_string_not_unique'],
      [
        'write conflict',
        async () => {
          ctx.workspace = raceBeforeWrite(ctx.workspace, (ws) => ws.write(wp('work/a.md'), enc('theirs')));
        },
        { old_string: 'a\nb\nb' },
        'workspace.patch_stale_file',
      ],
      [
        'file removed',
        async () => void (await ctx.workspace.remove(wp('work/a.md'))),
        { old_string: 'b' },
        'workspace.file_not_found',
      ],
    ];

    it.each(failures)('%s', async (_, before, args, code) => {
      await put('work/a.md', 'a\nb\nb\nc\n');
      await read({ path: 'work/a.md', line_count: 3 });
      await before();
      const out = await patch({ path: 'work/a.md', new_string: 'x', ...args });
      expect(out.errorCode).toBe(code);
      expect(out.content).toContain(FULL_READ);
      expect(state()?.patchRequiresFullRead).toBe(true);
    });

    it('no match', async () => {
      await put('work/a.md', 'a\nb\nc\n');
      await read({ path: 'work/a.md', line_count: 2 });
      // Observed text always occurs in the file it was read from; record one that does not.
      ctx.readState.recordPartialRead(wp('work/a.md'), state()!.sha256, 'b\nq');
      const out = await patch({ path: 'work/a.md', old_string: 'b\nq', new_string: 'x' });
      expect(out.errorCode).toBe('workspace.patch_old_string_not_found');
      expect(out.content).toContain(FULL_READ);
      expect(state()?.patchRequiresFullRead).toBe(true);
    });
  });
});

const enc = (s: string) => new TextEncoder().encode(s);

/** A workspace where `interfere` runs just before the first write: a change racing the tool. */
function raceBeforeWrite(ws: Workspace, interfere: (ws: Workspace) => Promise<unknown>): Workspace {
  let done = false;
  return overrideWorkspace(ws, {
    write: async (p, d, g) => {
      if (!done) {
        done = true;
        await interfere(ws);
      }
      return ws.write(p, d, g);
    },
  });
}
