import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileKey, parseRegexKey, scanText, type ScanText } from '$lib/chat/keys';
import { ScanBuffer, type KeyScope, type ScanSource } from '$lib/chat/scan-buffer';

/**
 * The scan buffer remembers answers (per key and scope, per recursion piece searched, phrase
 * indexes and scans across buffers). These tests compare it with a reference that recomputes
 * everything on every question, while recursion content is added between questions.
 */

const JOINER = '\n\u0001';

interface Texts {
  newestFirst: string[];
  context: Map<string, string>;
  injections: string[];
  recursion: { world: string; uid: number; text: string }[];
}

/** Every piece tested with the key on every call; regexes also on the joined pieces. */
function reference(t: Texts, key: string, scope: KeyScope): ScanSource | null {
  const matcher = compileKey(key, scope.caseSensitive, scope.wholeWords);
  const regex = parseRegexKey(key) !== null;
  const test = (text: string) => matcher(scanText(text));
  const joined = (texts: string[]): ScanText => scanText(texts.join(JOINER));
  const window = t.newestFirst.slice(0, scope.depth);
  if (regex) {
    if (window.length > 0 && matcher(joined(window))) {
      const r = window.findIndex(test);
      return r >= 0 ? { kind: 'message', index: r } : { kind: 'messages' };
    }
  } else {
    const r = window.findIndex(test);
    if (r >= 0) return { kind: 'message', index: r };
  }
  for (const field of scope.context) {
    const text = t.context.get(field);
    if (text !== undefined && test(text)) return { kind: 'context', field };
  }
  if (t.injections.length > 0) {
    const i = t.injections.findIndex(test);
    if (i >= 0) return { kind: 'injection', index: i };
    if (regex && matcher(joined(t.injections))) return { kind: 'injection', index: 0 };
  }
  if (t.recursion.length > 0) {
    const hit =
      t.recursion.find((p) => test(p.text)) ??
      (regex && matcher(joined(t.recursion.map((p) => p.text))) ? t.recursion[0] : undefined);
    if (hit) return { kind: 'entry', world: hit.world, uid: hit.uid };
  }
  return null;
}

const KEYS = [
  'ab',
  'AB',
  'b a',
  'ca',
  'a',
  '/a\\s/',
  '/b$/',
  '/^c/',
  '/a.c/',
  '/\\bab\\b/i',
  '/c(?!a)/',
  '/b\\s+c/',
  '/[^a]c/',
  '/a[\\s\\S]*c/',
  '/C/gi',
  '/ca/y',
  '/\\u0001/',
];

const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'A', ' ', '\n'), maxLength: 8 });
const scopeArb = fc.record({
  caseSensitive: fc.boolean(),
  wholeWords: fc.boolean(),
  depth: fc.integer({ min: 1, max: 4 }),
  context: fc.subarray(['scenario', 'persona']),
});

describe('ScanBuffer against a reference that recomputes everything', () => {
  it('gives the same answers while recursion content is added between questions', () => {
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 4 }),
        fc.option(text, { nil: undefined }),
        fc.array(text, { maxLength: 2 }),
        fc.array(fc.array(text, { maxLength: 3 }), { maxLength: 4 }),
        fc.array(scopeArb, { minLength: 1, maxLength: 3 }),
        (messages, scenario, injections, passes, scopes) => {
          const t: Texts = {
            newestFirst: messages,
            context: new Map(scenario === undefined ? [] : [['scenario', scenario]]),
            injections,
            recursion: [],
          };
          const buffer = new ScanBuffer(
            KEYS,
            messages.map((m, index) => ({ source: { kind: 'message', index }, text: m })),
            t.context,
            injections,
          );
          const ask = () => {
            for (const scope of scopes)
              for (const key of [...KEYS, 'unlisted b'])
                expect(buffer.locate(key, scope), `${key} ${JSON.stringify(scope)}`).toEqual(
                  reference(t, key, scope),
                );
          };
          ask();
          let uid = 0;
          for (const pass of passes) {
            for (const content of pass) {
              buffer.addRecursion('W', uid, content);
              t.recursion.push({ world: 'W', uid: uid++, text: content });
            }
            ask();
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finds a regex that matches a piece only with the line break after it, once another piece follows', () => {
    const scope = { caseSensitive: false, wholeWords: false, depth: 1, context: [] };
    const b = new ScanBuffer(['/lamp\\s/'], [], new Map(), []);
    b.addRecursion('W', 1, 'a lamp');
    expect(b.locate('/lamp\\s/', scope)).toBeNull();
    b.addRecursion('W', 2, 'dark');
    expect(b.locate('/lamp\\s/', scope)).toEqual({ kind: 'entry', world: 'W', uid: 1 });
    b.addRecursion('W', 3, 'lamp lit');
    expect(b.locate('/lamp\\s/', scope)).toEqual({ kind: 'entry', world: 'W', uid: 3 });
  });

  it('answers a regex per message the same in every buffer, the joined window included', () => {
    const scope = (depth: number) => ({ caseSensitive: false, wholeWords: false, depth, context: [] });
    const keys = ['/lamp\\s/', '/\\bdoor\\b/i'];
    const messages = (...texts: string[]) =>
      texts.map((text, index) => ({ source: { kind: 'message' as const, index }, text }));
    for (let round = 0; round < 2; round++) {
      const b = new ScanBuffer(keys, messages('a lamp', 'the Door'), new Map(), []);
      // Only with the line break that joins it to the next message.
      expect(b.locate('/lamp\\s/', scope(2))).toEqual({ kind: 'messages' });
      // The newest message alone is followed by nothing.
      expect(b.locate('/lamp\\s/', scope(1))).toBeNull();
      expect(b.locate('/\\bdoor\\b/i', scope(2))).toEqual({ kind: 'message', index: 1 });
    }
    // An edited message is another text.
    const edited = new ScanBuffer(keys, messages('a lamp lit', 'the doors'), new Map(), []);
    expect(edited.locate('/lamp\\s/', scope(1))).toEqual({ kind: 'message', index: 0 });
    expect(edited.locate('/\\bdoor\\b/i', scope(2))).toBeNull();
  });

  it('does not carry answers from one buffer to the next (same keys, other texts)', () => {
    const scope = { caseSensitive: false, wholeWords: false, depth: 5, context: [] };
    const keys = ['lamp', 'door'];
    const first = new ScanBuffer(
      keys,
      [{ source: { kind: 'message', index: 0 }, text: 'a lamp' }],
      new Map(),
      [],
    );
    expect(first.locate('lamp', scope)).toEqual({ kind: 'message', index: 0 });
    expect(first.locate('door', scope)).toBeNull();
    const second = new ScanBuffer(
      keys,
      [{ source: { kind: 'message', index: 7 }, text: 'a door' }],
      new Map(),
      [],
    );
    expect(second.locate('lamp', scope)).toBeNull();
    expect(second.locate('door', scope)).toEqual({ kind: 'message', index: 7 });
    // Other keys over the same text: a new phrase index, the old scan of that text not reused.
    const third = new ScanBuffer(
      ['door', 'a d'],
      [{ source: { kind: 'message', index: 7 }, text: 'a door' }],
      new Map(),
      [],
    );
    expect(third.locate('a d', scope)).toEqual({ kind: 'message', index: 7 });
    expect(third.locate('door', scope)).toEqual({ kind: 'message', index: 7 });
  });
});
