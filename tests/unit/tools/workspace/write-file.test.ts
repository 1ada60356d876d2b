import { beforeEach, describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { err } from '$lib/domain/result';
import type { Workspace } from '$lib/ports/workspace';
import type { ToolContext } from '$lib/tools/tool';
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

let ctx: ToolContext;
const write = (args: Record<string, unknown>) => callTool(writeFileTool, args, ctx);
const read = (args: Record<string, unknown>) => callTool(readFileTool, args, ctx);
/** A change made by someone else (another tool, the shell, the person). */
const put = (path: string, text: string) => putText(ctx.workspace, path, text);
const get = (path: string) => getText(ctx.workspace, path);

beforeEach(async () => {
  ctx = await memoryToolContext();
});

describe('workspace.write_file descriptor', () => {
  it('has the builtin id and fixed call name, for chat and session', () => {
    expect(writeFileTool.id).toBe('builtin:workspace.write_file');
    expect(writeFileTool.callName).toBe('workspace_write_file');
    expect(writeFileTool.facts.scopes).toEqual(['chat', 'session']);
    expect(writeFileTool.description).toContain('workspace_read_file');
    expect(writeFileTool.description).not.toMatch(/workspace\.\w+/);
  });

  it('rejects invalid argument shapes with the spec messages', () => {
    expect(argumentErrors(writeFileTool, { content: 'x' })).toEqual(['path is required']);
    expect(argumentErrors(writeFileTool, { path: 'work/a.md' })).toEqual(['content is required']);
    expect(argumentErrors(writeFileTool, { path: 'work/a.md', content: 1 })).toEqual([
      'content must be a string',
    ]);
    expect(argumentErrors(writeFileTool, { path: 'work/a.md', content: '', mode: 2 })).toEqual([
      'mode must be a string',
    ]);
    expect(argumentErrors(writeFileTool, { path: 'work/a.md', content: '', force: true })).toHaveLength(1);
  });
});

describe('replace', () => {
  it('creates a new file and its parents, reporting whole-file metrics and a file-written effect', async () => {
    const out = await write({ path: 'work/notes/a.md', content: 'Hello 世界\n' });
    const sha256 = await sha256Hex('Hello 世界\n');
    expect(out).toEqual({
      content: 'Wrote 9 chars / 3 words to work/notes/a.md.',
      isError: false,
      structured: { path: 'work/notes/a.md', mode: 'replace', chars: 9, words: 3, sha256 },
      resourceRefs: ['work/notes/a.md'],
      images: [],
      effects: [
        {
          type: 'file-written',
          path: 'work/notes/a.md',
          mode: 'replace',
          chars: 9,
          words: 3,
          sha256,
          content: new TextEncoder().encode('Hello 世界\n'),
        },
      ],
    });
    expect(await get('work/notes/a.md')).toBe('Hello 世界\n');
  });

  it('writes content verbatim, including an empty string', async () => {
    const out = await write({ path: 'work/e.md', content: '' });
    expect(out.content).toBe('Wrote 0 chars / 0 words to work/e.md.');
    expect(await get('work/e.md')).toBe('');
    await write({ path: 'work/s.md', content: '  spaced\r\n' });
    expect(await get('work/s.md')).toBe('  spaced\r\n');
  });

  it('marks the written file as fully read, so it can be replaced again without reading', async () => {
    const first = await write({ path: 'work/a.md', content: 'v1' });
    expect(ctx.readState.get(wp('work/a.md'))).toMatchObject({
      sha256: (first.structured as { sha256: string }).sha256,
      fullRead: true,
    });
    expect((await write({ path: 'work/a.md', content: 'v2' })).isError).toBe(false);
    expect(await get('work/a.md')).toBe('v2');
  });

  it('refuses to replace an existing file that was not read (workspace.write_requires_read)', async () => {
    await put('work/a.md', 'theirs');
    const out = await write({ path: 'work/a.md', content: 'mine' });
    expect(out.errorCode).toBe('workspace.write_requires_read');
    expect(out.content).toContain('workspace_read_file');
    expect(await get('work/a.md')).toBe('theirs');
  });

  it('replaces a file after a full read', async () => {
    await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md' });
    expect((await write({ path: 'work/a.md', content: 'new' })).isError).toBe(false);
    expect(await get('work/a.md')).toBe('new');
  });

  it('replaces a file after a partial read of the current content', async () => {
    await put('work/a.md', 'a\nb\n');
    await read({ path: 'work/a.md', line_count: 1 });
    expect((await write({ path: 'work/a.md', content: 'new' })).isError).toBe(false);
    expect(ctx.readState.get(wp('work/a.md'))).toMatchObject({ fullRead: true, observed: [] });
  });

  it('refuses a file changed since it was read (workspace.write_stale_file)', async () => {
    await put('work/a.md', 'v1');
    await read({ path: 'work/a.md' });
    await put('work/a.md', 'v1 edited elsewhere');
    const out = await write({ path: 'work/a.md', content: 'mine' });
    expect(out.errorCode).toBe('workspace.write_stale_file');
    expect(out.content).toContain('read');
    expect(await get('work/a.md')).toBe('v1 edited elsewhere');
  });

  it('refuses a file changed since this tool wrote it', async () => {
    await write({ path: 'work/a.md', content: 'v1' });
    await put('work/a.md', 'v2 elsewhere');
    expect((await write({ path: 'work/a.md', content: 'v3' })).errorCode).toBe('workspace.write_stale_file');
  });

  it('creates a file again when it is absent, even if it was read before it was removed', async () => {
    await put('work/a.md', 'v1');
    await read({ path: 'work/a.md' });
    await ctx.workspace.remove(wp('work/a.md'));
    expect((await write({ path: 'work/a.md', content: 'v2' })).isError).toBe(false);
  });

  it('reports a read file that vanished during the write as stale, pointing at its directory', async () => {
    await put('work/a.md', 'v1');
    await read({ path: 'work/a.md' });
    ctx.workspace = raceBeforeWrite(ctx.workspace, (ws) => ws.remove(wp('work/a.md')));
    const out = await write({ path: 'work/a.md', content: 'v2' });
    expect(out.errorCode).toBe('workspace.write_stale_file');
    expect(out.content).toContain('workspace_list_files');
  });

  it('reports a file created concurrently by someone else as workspace.write_requires_read', async () => {
    ctx.workspace = raceBeforeWrite(ctx.workspace, (ws) =>
      ws.write(wp('work/a.md'), new TextEncoder().encode('x')),
    );
    const out = await write({ path: 'work/a.md', content: 'mine' });
    expect(out.errorCode).toBe('workspace.write_requires_read');
    expect(await get('work/a.md')).toBe('x');
  });

  it('refuses a directory (workspace.path_is_directory)', async () => {
    await put('work/dir/a.md', 'x');
    const out = await write({ path: 'work/dir', content: 'x' });
    expect(out.errorCode).toBe('workspace.path_is_directory');
  });

  it('refuses a path below a file (workspace.not_a_directory)', async () => {
    await put('work/a.md', 'x');
    const out = await write({ path: 'work/a.md/b.md', content: 'x' });
    expect(out.errorCode).toBe('workspace.not_a_directory');
    expect(out.content).toContain('`work/a.md` is a file');
  });
});

describe('append', () => {
  it('creates a missing file without adding a newline', async () => {
    const out = await write({ path: 'work/log.md', content: 'first', mode: 'append' });
    const sha256 = await sha256Hex('first');
    expect(out).toMatchObject({
      content: 'Appended 5 chars / 1 words to work/log.md.',
      structured: { path: 'work/log.md', mode: 'append', chars: 5, words: 1, sha256 },
      resourceRefs: ['work/log.md'],
      effects: [{ type: 'file-written', path: 'work/log.md', mode: 'append', chars: 5, words: 1, sha256 }],
    });
    expect(ctx.readState.get(wp('work/log.md'))).toMatchObject({ sha256, fullRead: true });
  });

  it('adds content exactly at the end and reports the whole file', async () => {
    await put('work/log.md', 'one');
    const out = await write({ path: 'work/log.md', content: '\ntwo 二', mode: 'append' });
    expect(await get('work/log.md')).toBe('one\ntwo 二');
    expect(out.content).toBe('Appended 9 chars / 3 words to work/log.md.');
    expect(out.structured).toMatchObject({ sha256: await sha256Hex('one\ntwo 二') });
  });

  it('needs no read, and leaves the state of an unread file unread', async () => {
    await put('work/log.md', 'theirs');
    expect((await write({ path: 'work/log.md', content: '+', mode: 'append' })).isError).toBe(false);
    expect(ctx.readState.get(wp('work/log.md'))).toBeUndefined();
    expect((await write({ path: 'work/log.md', content: 'x' })).errorCode).toBe(
      'workspace.write_requires_read',
    );
  });

  it('keeps a full read valid when the previous content was fully read', async () => {
    await put('work/log.md', 'a\n');
    await read({ path: 'work/log.md' });
    const out = await write({ path: 'work/log.md', content: 'b\n', mode: 'append' });
    expect(ctx.readState.get(wp('work/log.md'))).toMatchObject({
      sha256: (out.structured as { sha256: string }).sha256,
      fullRead: true,
    });
    expect((await write({ path: 'work/log.md', content: 'replaced' })).isError).toBe(false);
  });

  it('leaves a partial read stale, so a later replace must read again', async () => {
    await put('work/log.md', 'a\nb\n');
    await read({ path: 'work/log.md', line_count: 1 });
    const before = ctx.readState.get(wp('work/log.md'));
    await write({ path: 'work/log.md', content: 'c\n', mode: 'append' });
    expect(ctx.readState.get(wp('work/log.md'))).toEqual(before);
    expect((await write({ path: 'work/log.md', content: 'x' })).errorCode).toBe('workspace.write_stale_file');
  });

  it('leaves a full read of older content stale', async () => {
    await put('work/log.md', 'a\n');
    await read({ path: 'work/log.md' });
    await put('work/log.md', 'a\nchanged\n');
    await write({ path: 'work/log.md', content: 'c\n', mode: 'append' });
    expect((await write({ path: 'work/log.md', content: 'x' })).errorCode).toBe('workspace.write_stale_file');
  });

  it('refuses a directory and a path below a file', async () => {
    await put('work/dir/a.md', 'x');
    expect((await write({ path: 'work/dir', content: 'x', mode: 'append' })).errorCode).toBe(
      'workspace.path_is_directory',
    );
    expect((await write({ path: 'work/dir/a.md/b', content: 'x', mode: 'append' })).errorCode).toBe(
      'workspace.not_a_directory',
    );
  });
});

describe('mode and paths', () => {
  it('trims mode and treats a blank mode as replace', async () => {
    expect((await write({ path: 'work/a.md', content: 'x', mode: ' append ' })).structured).toMatchObject({
      mode: 'append',
    });
    expect((await write({ path: 'work/b.md', content: 'x', mode: '  ' })).structured).toMatchObject({
      mode: 'replace',
    });
  });

  it.each(['overwrite', 'Replace', 'create'])(
    'refuses mode %j with workspace.write_mode_invalid',
    async (mode) => {
      const out = await write({ path: 'work/a.md', content: 'x', mode });
      expect(out.errorCode).toBe('workspace.write_mode_invalid');
      expect(out.content).toContain('`replace` or `append`');
      expect(await ctx.workspace.stat(wp('work/a.md'))).toEqual({ ok: true, value: null });
    },
  );

  it.each(['../x.md', '/work/a.md', 'D:\\a.md', 'work/../../x'])(
    'refuses the invalid path %j',
    async (path) => {
      expect((await write({ path, content: 'x' })).errorCode).toBe('workspace.invalid_path');
    },
  );

  it('treats a blank path as missing', async () => {
    expect(await write({ path: ' ', content: 'x' })).toMatchObject({
      errorCode: 'tool.invalid_arguments',
      content: 'path is required',
    });
  });

  it.each([
    ['work', 'is a root directory'],
    ['tool-results/x.md', 'is not writable'],
    ['skills/s/SKILL.md', 'is not writable'],
    ['runs/x.json', 'is not writable'],
    ['x.md', 'is not writable'],
  ])('refuses %j with workspace.path_not_writable, naming the writable roots', async (path, why) => {
    const out = await write({ path, content: 'x', mode: 'append' });
    expect(out.errorCode).toBe('workspace.path_not_writable');
    expect(out.content).toContain(why);
    expect(out.content).toContain('work/, tmp/');
  });

  it('throws a system failure when storage fails', async () => {
    ctx.workspace = {
      ...ctx.workspace,
      stat: async () => err({ code: 'workspace.storage_failed', message: 'quota exceeded' }),
      append: async () => err({ code: 'workspace.storage_failed', message: 'quota exceeded' }),
    };
    await expect(write({ path: 'work/a.md', content: 'x' })).rejects.toBeInstanceOf(HearthFailure);
    await expect(write({ path: 'work/a.md', content: 'x', mode: 'append' })).rejects.toBeInstanceOf(
      HearthFailure,
    );
  });
});

/** A workspace where `interfere` runs just before the first write: a change racing the tool. */
function raceBeforeWrite(ws: Workspace, interfere: (ws: Workspace) => Promise<unknown>): Workspace {
  let done = false;
  return {
    key: ws.key,
    stat: (p) => ws.stat(p),
    read: (p) => ws.read(p),
    append: (p, d) => ws.append(p, d),
    list: (d) => ws.list(d),
    remove: (p) => ws.remove(p),
    write: async (p, d, g) => {
      if (!done) {
        done = true;
        await interfere(ws);
      }
      return ws.write(p, d, g);
    },
  };
}
