import { beforeEach, describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import { err } from '$lib/domain/result';
import { CHAT_ROOTS, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { ToolContext } from '$lib/tools/tool';
import { listFilesTool, MAX_LIST_ENTRIES } from '$lib/tools/workspace/list-files';
import { argumentErrors, callTool, memoryToolContext, putText } from '../../../support/tool-context';
import { overrideWorkspace } from '../../../support/workspace-override';

let ctx: ToolContext;
const list = (args: Record<string, unknown> = {}) => callTool(listFilesTool, args, ctx);
const put = (path: string, text = 'x') => putText(ctx.workspace, path, text);
const lines = async (args: Record<string, unknown> = {}) => (await list(args)).content.split('\n');

beforeEach(async () => {
  ctx = await memoryToolContext();
});

describe('workspace.list_files descriptor', () => {
  it('has the builtin id and fixed call name, for chat and session', () => {
    expect(listFilesTool.id).toBe('builtin:workspace.list_files');
    expect(listFilesTool.callName).toBe('workspace_list_files');
    expect(listFilesTool.facts.scopes).toEqual(['chat', 'session']);
    expect(listFilesTool.description).toContain('this tool');
    expect(listFilesTool.description).toContain('workspace_read_file');
    expect(listFilesTool.description).not.toMatch(/workspace\.\w+/);
  });

  it('rejects invalid argument shapes', () => {
    expect(argumentErrors(listFilesTool, {})).toEqual([]);
    expect(argumentErrors(listFilesTool, { path: null })).toEqual([]);
    expect(argumentErrors(listFilesTool, { path: 3 })).toEqual(['path must be a string']);
    for (const bad of [-1, 1.5, '2', true, null]) {
      expect(argumentErrors(listFilesTool, { depth: bad })).toEqual(['depth must be a non-negative integer']);
    }
    expect(argumentErrors(listFilesTool, { recursive: true })).toHaveLength(1);
  });
});

describe('listing', () => {
  it.each([undefined, null, '', '.', './', '  ./ ', ' . '])(
    'treats path %j as the workspace root, listing only visible roots',
    async (path) => {
      await put('work/a.md');
      await put('runs/r1/events.jsonl');
      await put('manifest.json', '{}');
      const out = await list(path === undefined ? {} : { path });
      expect(out.isError).toBe(false);
      expect(out.content).toBe(['skills/', 'tmp/', 'tool-results/', 'work/', 'work/a.md'].join('\n'));
      expect(out.content).not.toContain('runs');
      expect(out.content).not.toContain('manifest');
    },
  );

  it('returns structured entries and the entry paths as resource refs', async () => {
    await put('work/notes/a.md');
    await put('work/b.md');
    const out = await list({ path: 'work' });
    expect(out.content).toBe('work/notes/\nwork/b.md\nwork/notes/a.md');
    expect(out.structured).toEqual({
      entries: [
        { path: 'work/notes', kind: 'directory' },
        { path: 'work/b.md', kind: 'file' },
        { path: 'work/notes/a.md', kind: 'file' },
      ],
      truncated: false,
    });
    expect(out.resourceRefs).toEqual(['work/notes', 'work/b.md', 'work/notes/a.md']);
    expect(out.effects).toEqual([]);
  });

  it('sorts directories first, then by path', async () => {
    for (const p of ['work/z.md', 'work/a/1.md', 'work/B.md', 'work/m/k/2.md', 'work/a.md']) await put(p);
    expect(await lines({ path: 'work', depth: 4 })).toEqual([
      'work/a/',
      'work/m/',
      'work/m/k/',
      'work/B.md',
      'work/a.md',
      'work/a/1.md',
      'work/m/k/2.md',
      'work/z.md',
    ]);
  });

  it('expands one more directory level per depth, default 2, at most 4', async () => {
    await put('work/l0/l1/l2/l3/l4/f.md');
    await put('work/top.md');
    const at = async (depth?: number) =>
      (await lines({ path: 'work', ...(depth === undefined ? {} : { depth }) })).filter((l) =>
        l.endsWith('/'),
      );
    expect(await at(0)).toEqual(['work/l0/']);
    expect(await at(1)).toEqual(['work/l0/', 'work/l0/l1/']);
    expect(await at()).toEqual(['work/l0/', 'work/l0/l1/', 'work/l0/l1/l2/']);
    expect(await at(4)).toEqual([
      'work/l0/',
      'work/l0/l1/',
      'work/l0/l1/l2/',
      'work/l0/l1/l2/l3/',
      'work/l0/l1/l2/l3/l4/',
    ]);
    expect(await lines({ path: 'work', depth: 0 })).toEqual(['work/l0/', 'work/top.md']);
  });

  it('counts depth from the roots when listing the workspace root', async () => {
    await put('work/a/b/c.md');
    expect(await lines({ depth: 0 })).toEqual(['skills/', 'tmp/', 'tool-results/', 'work/']);
    expect(await lines({ depth: 1 })).toContain('work/a/');
    expect(await lines({ depth: 1 })).not.toContain('work/a/b/');
  });

  it('refuses depth over 4 with workspace.list_depth_too_large', async () => {
    const out = await list({ depth: 5 });
    expect(out).toMatchObject({ isError: true, errorCode: 'workspace.list_depth_too_large' });
    expect(out.content).toContain('at most 4');
  });

  it('lists a single file when path names a file', async () => {
    await put('work/a.md');
    const out = await list({ path: 'work/a.md' });
    expect(out.content).toBe('work/a.md');
    expect(out.structured).toEqual({ entries: [{ path: 'work/a.md', kind: 'file' }], truncated: false });
  });

  it('says so when nothing visible exists', async () => {
    ctx = await memoryToolContext({ visible: [], writable: [], readOnly: [] });
    await put('runs/secret.json');
    const out = await list();
    expect(out).toMatchObject({
      isError: false,
      content: 'No visible workspace files found.',
      structured: { entries: [], truncated: false },
      resourceRefs: [],
    });
  });

  it('lists a visible root that holds nothing yet as empty', async () => {
    const out = await list({ path: 'tmp' });
    expect(out.isError).toBe(false);
    expect(out.content).toBe('No visible workspace files found.');
  });

  it('lists chat roots', async () => {
    const roots: WorkspaceRoots = { visible: [...CHAT_ROOTS], writable: [...CHAT_ROOTS], readOnly: [] };
    ctx = await memoryToolContext(roots);
    await put('output/main.md');
    await put('output_extra/x.md');
    expect(await lines({ depth: 0 })).toEqual(['output/', 'persist/', 'plan/', 'scratch/', 'summaries/']);
  });
});

describe('the 200-entry cap', () => {
  it('keeps exactly 200 entries without truncation', async () => {
    for (let i = 0; i < MAX_LIST_ENTRIES; i++) await put(`work/f${String(i).padStart(3, '0')}.md`);
    const out = await list({ path: 'work' });
    expect(out.structured).toMatchObject({ truncated: false });
    expect(out.content.split('\n')).toHaveLength(200);
  });

  it('truncates at 200 entries with a final line', async () => {
    for (let i = 0; i < 250; i++) await put(`work/f${String(i).padStart(3, '0')}.md`);
    const out = await list({ path: 'work' });
    const shown = out.content.split('\n');
    expect(shown).toHaveLength(201);
    expect(shown.at(-1)).toBe('... truncated at 200 entries');
    expect(shown[0]).toBe('work/f000.md');
    expect(shown[199]).toBe('work/f199.md');
    expect(out.structured).toMatchObject({ truncated: true });
    expect((out.structured as { entries: unknown[] }).entries).toHaveLength(200);
    expect(out.resourceRefs).toHaveLength(200);
  });

  it('counts only visible entries: hidden runtime storage never uses up the cap', async () => {
    for (let i = 0; i < 300; i++) await put(`runs/r${i}/events.jsonl`);
    for (let i = 0; i < 190; i++) await put(`work/f${String(i).padStart(3, '0')}.md`);
    const out = await list();
    expect(out.structured).toMatchObject({ truncated: false });
    expect(out.content.split('\n')).toHaveLength(4 + 190);
  });

  it('lists all entries of a directory before descending, so shallow entries survive truncation', async () => {
    for (let i = 0; i < 150; i++) await put(`work/f${String(i).padStart(3, '0')}.md`);
    for (let i = 0; i < 100; i++) await put(`work/d/g${String(i).padStart(3, '0')}.md`);
    const out = await list({ path: 'work', depth: 1 });
    const entries = (out.structured as { entries: { path: string }[] }).entries.map((e) => e.path);
    expect(entries).toHaveLength(200);
    expect(entries).toContain('work/d');
    expect(entries).toContain('work/f149.md');
    expect(entries.filter((p) => p.startsWith('work/d/'))).toHaveLength(49);
    expect(out.structured).toMatchObject({ truncated: true });
  });
});

describe('paths and errors', () => {
  it.each(['runs', 'runs/r1', 'manifest.json', 'output'])(
    'refuses the invisible path %j with workspace.path_not_visible',
    async (path) => {
      await put('runs/r1/x.json');
      const out = await list({ path });
      expect(out.errorCode).toBe('workspace.path_not_visible');
      expect(out.content).toContain('work/, tmp/, tool-results/, skills/');
    },
  );

  it('uses `/` boundaries for roots', async () => {
    await put('work_extra/a.md');
    expect((await list({ path: 'work_extra' })).errorCode).toBe('workspace.path_not_visible');
  });

  it.each(['../secrets', '/etc', 'C:\\x', 'work/../..', 'work/\0'])(
    'reports the unparseable path %j as tool.invalid_arguments',
    async (path) => {
      const out = await list({ path });
      expect(out.errorCode).toBe('tool.invalid_arguments');
      expect(out.content).toContain('Invalid workspace path');
    },
  );

  it('reports a missing path with workspace.path_not_found', async () => {
    await put('work/a.md');
    for (const path of ['work/none', 'work/a.md/b']) {
      const out = await list({ path });
      expect(out.errorCode).toBe('workspace.path_not_found');
      expect(out.content).toContain('parent directory');
    }
  });

  it('trims and normalizes the path', async () => {
    await put('work/d/a.md');
    expect((await list({ path: ' ./work//d/ ' })).content).toBe('work/d/a.md');
  });

  it('throws a system failure when storage fails', async () => {
    ctx.workspace = overrideWorkspace(ctx.workspace, {
      list: async () => err({ code: 'workspace.storage_failed', message: 'disk on fire' }),
    });
    await expect(list()).rejects.toBeInstanceOf(HearthFailure);
  });
});
