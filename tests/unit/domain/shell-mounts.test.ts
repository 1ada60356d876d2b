import { describe, expect, it } from 'vitest';
import {
  normalizeShellPath,
  shellAccess,
  shellMayChange,
  shellMounts,
  shellToWorkspacePath,
} from '$lib/domain/shell-mounts';
import { CHAT_ROOTS, READ_ONLY_MOUNTS, sessionRoots } from '$lib/domain/workspace-roots';

const session = shellMounts(sessionRoots());
const chat = shellMounts({
  visible: [...CHAT_ROOTS],
  writable: ['output', 'scratch'],
  readOnly: [...READ_ONLY_MOUNTS],
});

describe('shell mounts', () => {
  it('maps writable roots, read-only mounts and scratch /tmp per scenario', () => {
    expect(session).toEqual({ writable: ['work', 'tmp'], readOnly: ['tool-results', 'skills'], scratch: [] });
    expect(chat.writable).toEqual(['output', 'scratch']);
    // Visible but not writable roots are read-only in the shell too.
    expect(chat.readOnly).toEqual(['plan', 'summaries', 'persist', 'tool-results', 'skills']);
    expect(chat.scratch).toEqual(['tmp']);
  });

  it('classifies absolute paths', () => {
    expect(shellAccess(session, '/')).toBe('root');
    expect(shellAccess(session, '/work/a')).toBe('writable');
    expect(shellAccess(session, '/skills/x/SKILL.md')).toBe('read-only');
    expect(shellAccess(session, '/bin/ls')).toBe('system');
    expect(shellAccess(session, '/runs/r1')).toBe('absent');
    expect(shellAccess(chat, '/tmp/x')).toBe('scratch');
  });

  it('never lets a mount point itself be changed', () => {
    expect(shellMayChange(session, '/work')).toBe(false);
    expect(shellMayChange(session, '/work/a.txt')).toBe(true);
    expect(shellMayChange(session, '/skills/a')).toBe(false);
    expect(shellMayChange(session, '/a.txt')).toBe(false);
    expect(shellMayChange(chat, '/tmp/a')).toBe(true);
  });

  it('maps shell paths to workspace paths, and nothing else', () => {
    expect(shellToWorkspacePath(session, '/work/a/b.md')).toBe('work/a/b.md');
    expect(shellToWorkspacePath(session, '/tmp/x')).toBe('tmp/x');
    expect(shellToWorkspacePath(chat, '/tmp/x')).toBeNull();
    expect(shellToWorkspacePath(session, '/')).toBeNull();
    expect(shellToWorkspacePath(session, '/runs/x')).toBeNull();
  });

  it('normalizes workdirs: relative from /, and .. stops at the root', () => {
    expect(normalizeShellPath('')).toBe('/');
    expect(normalizeShellPath('work/a/')).toBe('/work/a');
    expect(normalizeShellPath('/work/./a/../b')).toBe('/work/b');
    expect(normalizeShellPath('/../../etc')).toBe('/etc');
  });
});
