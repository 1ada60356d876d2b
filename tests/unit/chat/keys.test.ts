import { describe, expect, it } from 'vitest';
import { compileKey, parseRegexKey, scanText } from '$lib/chat/keys';
import { ScanBuffer } from '$lib/chat/scan-buffer';

describe('parseRegexKey', () => {
  it.each([
    ['/abc/', 'abc', ''],
    ['/a,b/gi', 'a,b', 'gi'],
    ['/a\\/b/', 'a\\/b', ''],
    ['/x/y', 'x', 'y'],
    ['/a/b/', null, null], // unescaped slash inside
    ['/(/', null, null], // does not compile
    ['/abc/q', null, null], // unknown flag
    ['abc', null, null],
    ['//', null, null],
  ])('%s', (key, source, flags) => {
    const rx = parseRegexKey(key);
    if (source === null) expect(rx).toBeNull();
    else expect([rx?.source, rx?.flags]).toEqual([source, flags]);
  });
});

describe('compileKey', () => {
  const t = scanText('The Red-Door, at night.');
  it.each([
    ['red', false, false, true],
    ['red', true, false, false],
    ['Red', true, false, true],
    ['red', false, true, true],
    ['re', false, true, false],
    ['door,', false, true, true],
    ['red-door', false, true, true],
    ['at nig', false, true, true], // several words: plain substring
    ['/r[e]d-d/i', true, true, true],
  ])('%j (case %s, whole words %s) -> %s', (key, cs, ww, expected) => {
    expect(compileKey(key, cs, ww)(t)).toBe(expected);
  });
});

describe('ScanBuffer', () => {
  const messages = ['first part', 'second part'].map((text, index) => ({
    source: { kind: 'message' as const, index },
    text,
  }));
  const scope = { caseSensitive: false, wholeWords: false, depth: 2, context: [] };

  it('reports a regex that only matches across messages', () => {
    const b = new ScanBuffer(['/part\\s\\u0001first/'], [...messages].reverse(), new Map(), []);
    expect(b.locate('/part\\s\\u0001first/', scope)).toEqual({ kind: 'messages' });
  });

  it('finds plain keys it was not told about', () => {
    const b = new ScanBuffer([], messages, new Map(), []);
    expect(b.locate('SECOND', scope)).toEqual({ kind: 'message', index: 1 });
    expect(b.locate('second', { ...scope, depth: 1 })).toBeNull();
  });

  it('looks in recursion content after the messages', () => {
    const b = new ScanBuffer(['lamp'], messages, new Map(), []);
    expect(b.locate('lamp', scope)).toBeNull();
    b.addRecursion('W', 3, 'a lamp');
    expect(b.locate('lamp', scope)).toEqual({ kind: 'entry', world: 'W', uid: 3 });
  });
});
