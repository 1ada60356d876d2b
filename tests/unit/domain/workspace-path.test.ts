import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  joinPath,
  parentOf,
  parseWorkspacePath,
  pathSegments,
  type WorkspacePath,
} from '$lib/domain/workspace-path';

const parsed = (raw: string) => {
  const r = parseWorkspacePath(raw);
  return r.ok ? r.value : r.error.code;
};

describe('parseWorkspacePath (tools.md §12.1)', () => {
  it.each([
    '../secrets.json',
    '/Users/me/file',
    'C:\\Users\\me\\file',
    'output/../../chat.jsonl',
    'scratch/\0bad',
  ])('rejects the spec example %j', (raw) => expect(parsed(raw)).toBe('workspace.invalid_path'));

  it.each([
    '',
    '\\server\\share',
    'c:relative',
    'z:',
    '.',
    './',
    '//',
    'a/..',
    '..\\x',
    'a/\\..',
    '.\\a:',
    './C:/x',
  ])('rejects %j', (raw) => expect(parsed(raw)).toBe('workspace.invalid_path'));

  it.each([
    ['output/./main.md', 'output/main.md'],
    ['output/main.md', 'output/main.md'],
    ['work\\notes\\a.md', 'work/notes/a.md'],
    ['work//a.md', 'work/a.md'],
    ['work/a/', 'work/a'],
    ['./work/./a.md', 'work/a.md'],
    ['work/..hidden/a..b', 'work/..hidden/a..b'],
    ['work/日本語 file.md', 'work/日本語 file.md'],
    ['1:2', '1:2'],
  ])('normalizes %j to %j', (raw, expected) => expect(parsed(raw)).toBe(expected));

  it('says why a path is invalid', () => {
    const r = parseWorkspacePath('../x');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain('`..`');
  });

  const pathish = fc
    .array(fc.constantFrom('a', 'b', 'é', '日', '.', '..', '/', '\\', '\0', ':', 'C', ' ', ''), {
      maxLength: 12,
    })
    .map((parts) => parts.join(''));

  it('yields only relative, normalized paths without `..` segments, and is idempotent', () => {
    fc.assert(
      fc.property(fc.oneof(pathish, fc.string()), (raw) => {
        const r = parseWorkspacePath(raw);
        if (!r.ok) return;
        const segments = r.value.split('/');
        expect(segments).not.toContain('..');
        expect(segments).not.toContain('.');
        expect(segments).not.toContain('');
        expect(r.value.startsWith('/')).toBe(false);
        expect(r.value).not.toMatch(/[\\\0]/);
        expect(parseWorkspacePath(r.value)).toEqual(r);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('path helpers', () => {
  const p = (s: string) => s as WorkspacePath;

  it('splits, finds parents and joins', () => {
    expect(pathSegments(p('a/b/c.md'))).toEqual(['a', 'b', 'c.md']);
    expect(parentOf(p('a/b/c.md'))).toBe('a/b');
    expect(parentOf(p('a'))).toBeNull();
    expect(joinPath(p('a/b'), 'c.md')).toBe('a/b/c.md');
    expect(joinPath(null, 'c.md')).toBe('c.md');
  });
});
