import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import { isWritable, sessionRoots } from '$lib/domain/workspace-roots';
import type { Workspace } from '$lib/ports/workspace';
import type { ToolContext, ToolOutcome } from '$lib/tools/tool';
import { applyPatchTool } from '$lib/tools/workspace/apply-patch';
import { listFilesTool } from '$lib/tools/workspace/list-files';
import { readFileTool } from '$lib/tools/workspace/read-file';
import { ReadState } from '$lib/tools/workspace/read-state';
import { searchFilesTool } from '$lib/tools/workspace/search-files';
import { writeFileTool } from '$lib/tools/workspace/write-file';
import { callTool, putText, wp } from '../../../support/tool-context';

/**
 * Hostile paths fed to every file tool against a store whose hidden runtime storage and second
 * workspace hold a sentinel: it is never read, listed, matched or changed, and nothing outside
 * the writable roots is created or modified.
 */

/** What the sentinel files hold; searches look for its first half, and no output may contain the second. */
const SENTINEL = 'SENTINEL-7f3a9c';
const SECRET = 'PAYLOAD-b81d44';
const SENTINEL_TEXT = `${SENTINEL} ${SECRET}`;
const LONG = 'n'.repeat(4_096);

const FRAGMENTS = [
  '..',
  '.',
  '...',
  '',
  ' ',
  '\t',
  '\n',
  '\0',
  '/',
  '\\',
  '//',
  'C:',
  'c:',
  'Z:\\',
  '\\\\server\\share',
  '\u2215', // DIVISION SLASH
  '\uFF0F', // FULLWIDTH SOLIDUS
  '\u2044', // FRACTION SLASH
  '\uFF3C', // FULLWIDTH REVERSE SOLIDUS
  '\u2024', // ONE DOT LEADER
  '\u2024\u2024',
  '\uFF0E\uFF0E', // FULLWIDTH FULL STOPS
  '.\u200B.', // zero-width space between dots
  '..\u0000',
  '%2e%2e',
  '%2f',
  '~',
  '$HOME',
  'runs',
  'runs/secret.json',
  'secret.json',
  'manifest.json',
  'checkpoints',
  'sessions',
  'other',
  'workspaces',
  'work',
  'tmp',
  'tool-results',
  'skills',
  'work_extra',
  'visible.md',
  LONG,
  'é',
  '🎉',
];

const separator = fc.constantFrom('/', '\\', '', '//', '/./', '/../', '\\..\\', '\u2215', '\uFF0F');
const fragment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...FRAGMENTS) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
);
const composed = fc
  .tuple(
    fc.constantFrom('', '/', '\\', './', 'C:', '\0'),
    fc.array(fc.tuple(fragment, separator), { minLength: 1, maxLength: 8 }),
  )
  .map(([lead, parts]) => lead + parts.map(([f, s]) => f + s).join(''));
/** Starts in a visible root, then wanders: look-alike separators and dots, long names, `runs`. */
const rooted = fc
  .tuple(
    fc.constantFrom('work/', 'tmp/', ' ./work//', 'work\\', 'tool-results/', 'skills/'),
    fc.array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom(
            ...FRAGMENTS.filter((f) => !f.includes('..') && !f.includes('\0') && f.trim() !== ''),
          ),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }),
        ),
        fc.constantFrom('/', '\\', '//', '/./', '\u2215', '\uFF0F'),
      ),
      { minLength: 1, maxLength: 5 },
    ),
  )
  .map(([lead, parts]) => lead + parts.map(([f, s]) => f + s).join('') + 'f.md');
const hostilePath = fc.oneof(
  { weight: 6, arbitrary: composed },
  { weight: 4, arbitrary: rooted },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
  { weight: 1, arbitrary: fc.constantFrom(...FRAGMENTS) },
);

interface World {
  store: MemoryWorkspaceStore;
  ws: Workspace;
  other: Workspace;
  ctx: ToolContext;
}

async function world(): Promise<World> {
  const store = new MemoryWorkspaceStore();
  const open = async (key: string) => {
    const r = await store.open(key);
    if (!r.ok) throw new Error(r.error.message);
    return r.value;
  };
  const ws = await open('sessions/test');
  const other = await open('sessions/other');
  await putText(ws, 'runs/secret.json', `{"token":"${SENTINEL_TEXT}"}`);
  await putText(ws, 'runs/r1/checkpoints/cp_000001/files/work/visible.md', SENTINEL_TEXT);
  await putText(ws, 'manifest.json', SENTINEL_TEXT);
  await putText(ws, 'work/visible.md', 'visible text\n');
  await putText(other, 'work/secret.md', SENTINEL_TEXT);
  await putText(other, 'work/visible.md', SENTINEL_TEXT);
  const ctx: ToolContext = {
    workspace: ws,
    roots: sessionRoots(),
    readState: new ReadState(),
    signal: new AbortController().signal,
  };
  return { store, ws, other, ctx };
}

/** Every file of a workspace with its text, found through the port (the tree as stored). */
async function snapshot(ws: Workspace): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const visit = async (dir?: string) => {
    const listed = await ws.list(dir === undefined ? undefined : wp(dir));
    if (!listed.ok) throw new Error(listed.error.message);
    for (const e of listed.value) {
      if (e.kind === 'directory') await visit(e.path);
      else {
        const r = await ws.read(e.path);
        if (!r.ok) throw new Error(r.error.message);
        files.set(e.path, new TextDecoder().decode(r.value));
      }
    }
  };
  await visit();
  return files;
}

const outsideWritable = (files: Map<string, string>) =>
  new Map([...files].filter(([p]) => !p.startsWith('work/') && !p.startsWith('tmp/')));

function expectNoLeak(out: ToolOutcome) {
  expect(JSON.stringify(out)).not.toContain(SECRET);
}

async function everyTool(ctx: ToolContext, path: string): Promise<ToolOutcome[]> {
  const calls: [Parameters<typeof callTool>[0], Record<string, unknown>][] = [
    [readFileTool, { path }],
    [readFileTool, { path, start_char: 0, max_chars: 100 }],
    [listFilesTool, { path, depth: 4 }],
    [searchFilesTool, { query: 'sentinel 7f3a9c', path }],
    [searchFilesTool, { query: 'SENTINEL', path, regex: true, limit: 50 }],
    [applyPatchTool, { path, old_string: 'visible', new_string: 'patched' }],
    [writeFileTool, { path, content: 'fuzz replace' }],
    [writeFileTool, { path, content: 'fuzz append', mode: 'append' }],
    [applyPatchTool, { path, old_string: 'fuzz', new_string: 'FUZZ', replace_all: true }],
  ];
  const outcomes: ToolOutcome[] = [];
  for (const [tool, args] of calls) outcomes.push(await callTool(tool, args, ctx));
  return outcomes;
}

describe('hostile paths (fast-check)', () => {
  it('the generator produces the classic escapes', () => {
    const samples = fc.sample(hostilePath, { numRuns: 2_000, seed: 42 });
    expect(samples.some((p) => p.includes('..'))).toBe(true);
    expect(samples.some((p) => p.startsWith('/'))).toBe(true);
    expect(samples.some((p) => /^[A-Za-z]:/.test(p))).toBe(true);
    expect(samples.some((p) => p.includes('\0'))).toBe(true);
    expect(samples.some((p) => p.includes('\\'))).toBe(true);
    expect(samples.some((p) => p.includes('\uFF0F') || p.includes('\u2215'))).toBe(true);
    expect(samples.some((p) => p.length > 4_000)).toBe(true);
    // Enough of them are valid and land in writable roots, so the success paths run too.
    const writable = samples.filter((p) => {
      const parsed = parseWorkspacePath(p.trim());
      return parsed.ok && isWritable(sessionRoots(), parsed.value);
    });
    expect(writable.length).toBeGreaterThan(100);
  });

  it('never reads, lists, matches or changes anything outside the visible roots', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(hostilePath, { minLength: 1, maxLength: 3 }), async (paths) => {
        const w = await world();
        const before = outsideWritable(await snapshot(w.ws));
        const otherBefore = await snapshot(w.other);
        for (const path of paths) {
          for (const out of await everyTool(w.ctx, path)) expectNoLeak(out);
        }
        // The whole visible workspace: listing and searching it shows no sentinel either.
        expectNoLeak(await callTool(listFilesTool, { depth: 4 }, w.ctx));
        for (const query of ['sentinel 7f3a9c', 'payload']) {
          const found = await callTool(searchFilesTool, { query }, w.ctx);
          expect(found.content).toBe(`No visible workspace files matched \`${query}\`.`);
        }
        expect(outsideWritable(await snapshot(w.ws))).toEqual(before);
        expect(await snapshot(w.other)).toEqual(otherBefore);
      }),
      { numRuns: 1_500 },
    );
  }, 120_000);

  it('accepts a path only when it parses to a location under a visible root', async () => {
    await fc.assert(
      fc.asyncProperty(hostilePath, async (path) => {
        const w = await world();
        const out = await callTool(writeFileTool, { path, content: 'x', mode: 'append' }, w.ctx);
        if (out.isError) {
          expect(out.errorCode).toMatch(
            /^(workspace\.(invalid_path|path_not_writable|path_is_directory|not_a_directory)|tool\.invalid_arguments)$/,
          );
        } else {
          const written = (out.structured as { path: string }).path;
          expect(written).toMatch(/^(work|tmp)\/./s);
          expect(written.split('/')).not.toContain('..');
        }
      }),
      { numRuns: 2_000 },
    );
  }, 120_000);
});
