import { describe, expect, it } from 'vitest';
import { treeRows } from '$lib/ui/session/workspace-tree';
import type { WorkspaceItem } from '$lib/worker/protocol';

const file = (path: string): WorkspaceItem => ({ path, kind: 'file', size: 1 });
const dir = (path: string): WorkspaceItem => ({ path, kind: 'directory', size: 0 });

describe('treeRows', () => {
  const tree = {
    '': [dir('work'), dir('output'), file('README.md')],
    work: [dir('work/notes'), file('work/a.md')],
    'work/notes': [file('work/notes/b.md')],
    output: [file('output/main.md')],
  };

  it('expands open folders depth first, in listing order, each at its depth', () => {
    const rows = treeRows(tree, { work: true, 'work/notes': true });
    expect(rows.map((r) => `${r.depth}:${r.item.path}`)).toEqual([
      '0:work',
      '1:work/notes',
      '2:work/notes/b.md',
      '1:work/a.md',
      '0:output',
      '0:README.md',
    ]);
  });

  it('leaves closed folders and folders not listed yet collapsed', () => {
    expect(treeRows(tree, { 'work/notes': true }).map((r) => r.item.path)).toEqual([
      'work',
      'output',
      'README.md',
    ]);
    expect(treeRows({ '': [dir('later')] }, { later: true }).map((r) => r.item.path)).toEqual(['later']);
    expect(treeRows({}, {})).toEqual([]);
  });
});
