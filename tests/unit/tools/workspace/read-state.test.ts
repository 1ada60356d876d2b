import { describe, expect, it } from 'vitest';
import { ReadState } from '$lib/tools/workspace/read-state';
import { wp } from '../../../support/tool-context';

const path = wp('work/a.md');

describe('ReadState (tools.md §12.3)', () => {
  it('has no state for an unread path', () => {
    const s = new ReadState();
    expect(s.get(path)).toBeUndefined();
    expect(s.hasObserved(path, 'x')).toBe(false);
  });

  it('full read: {sha, fullRead, observed: []} and clears the patch flag', () => {
    const s = new ReadState();
    s.recordPartialRead(path, 'h1', 'part');
    s.requireFullReadForPatch(path);
    s.recordFullRead(path, 'h1');
    expect(s.get(path)).toEqual({ sha256: 'h1', fullRead: true, observed: [], patchRequiresFullRead: false });
    expect(s.hasObserved(path, 'anything')).toBe(true);
  });

  it('partial read with the same sha adds the text to observed', () => {
    const s = new ReadState();
    s.recordPartialRead(path, 'h1', 'one');
    s.recordPartialRead(path, 'h1', 'two');
    expect(s.get(path)).toEqual({
      sha256: 'h1',
      fullRead: false,
      observed: ['one', 'two'],
      patchRequiresFullRead: false,
    });
    expect(s.hasObserved(path, 'tw')).toBe(true);
    expect(s.hasObserved(path, 'onetwo')).toBe(false);
  });

  it('partial read after a full read of the same sha stays a full read', () => {
    const s = new ReadState();
    s.recordFullRead(path, 'h1');
    s.recordPartialRead(path, 'h1', 'part');
    expect(s.get(path)).toEqual({ sha256: 'h1', fullRead: true, observed: [], patchRequiresFullRead: false });
  });

  it('partial read with a different sha resets the state but keeps the patch flag', () => {
    const s = new ReadState();
    s.recordPartialRead(path, 'h1', 'old');
    s.requireFullReadForPatch(path);
    s.recordPartialRead(path, 'h2', 'new');
    expect(s.get(path)).toEqual({
      sha256: 'h2',
      fullRead: false,
      observed: ['new'],
      patchRequiresFullRead: true,
    });
    s.recordFullRead(path, 'h3');
    s.recordPartialRead(path, 'h4', 'newer');
    expect(s.get(path)?.fullRead).toBe(false);
    expect(s.get(path)?.patchRequiresFullRead).toBe(false);
  });

  it('replace write marks the file fully read at the new sha', () => {
    const s = new ReadState();
    s.recordPartialRead(path, 'h1', 'x');
    s.requireFullReadForPatch(path);
    s.recordReplaceWrite(path, 'h2');
    expect(s.get(path)).toEqual({ sha256: 'h2', fullRead: true, observed: [], patchRequiresFullRead: false });
  });

  it('append that created the file marks it fully read', () => {
    const s = new ReadState();
    s.recordAppend(path, { sha256: 'h1', created: true, previousSha256: null });
    expect(s.get(path)).toMatchObject({ sha256: 'h1', fullRead: true });
  });

  it('append after a full read of the previous content marks the new content fully read', () => {
    const s = new ReadState();
    s.recordFullRead(path, 'h1');
    s.recordAppend(path, { sha256: 'h2', created: false, previousSha256: 'h1' });
    expect(s.get(path)).toMatchObject({ sha256: 'h2', fullRead: true });
  });

  it.each([
    ['nothing was read', undefined],
    ['only a partial read', 'partial'],
    ['a full read of other content', 'stale'],
  ] as const)('append after %s leaves the state unchanged', (_, before) => {
    const s = new ReadState();
    if (before === 'partial') s.recordPartialRead(path, 'h1', 'x');
    if (before === 'stale') s.recordFullRead(path, 'h0');
    const snapshot = s.get(path);
    s.recordAppend(path, { sha256: 'h2', created: false, previousSha256: 'h1' });
    expect(s.get(path)).toEqual(snapshot);
  });

  it('sets the patch flag only on a path with state', () => {
    const s = new ReadState();
    s.requireFullReadForPatch(path);
    expect(s.get(path)).toBeUndefined();
    s.recordPartialRead(path, 'h1', 'x');
    s.requireFullReadForPatch(path);
    expect(s.get(path)?.patchRequiresFullRead).toBe(true);
  });

  it('keeps paths apart', () => {
    const s = new ReadState();
    s.recordFullRead(path, 'h1');
    expect(s.get(wp('work/b.md'))).toBeUndefined();
  });

  it('patch after a full read: full read at the new sha', () => {
    const s = new ReadState();
    s.recordFullRead(path, 'h1');
    s.recordPatch(path, { sha256: 'h2', oldString: 'a', newString: 'b' });
    expect(s.get(path)).toEqual({ sha256: 'h2', fullRead: true, observed: [], patchRequiresFullRead: false });
  });

  it('patch after a partial read: new sha, first occurrence replaced in each observed text, flag cleared', () => {
    const s = new ReadState();
    s.recordPartialRead(path, 'h1', 'x a a');
    s.recordPartialRead(path, 'h1', 'nothing');
    s.recordPartialRead(path, 'h1', 'a$');
    s.requireFullReadForPatch(path);
    s.recordPatch(path, { sha256: 'h2', oldString: 'a', newString: '$&' });
    expect(s.get(path)).toEqual({
      sha256: 'h2',
      fullRead: false,
      observed: ['x $& a', 'nothing', '$&$'],
      patchRequiresFullRead: false,
    });
  });

  it('patch without state records nothing', () => {
    const s = new ReadState();
    s.recordPatch(path, { sha256: 'h2', oldString: 'a', newString: 'b' });
    expect(s.get(path)).toBeUndefined();
  });
});
