import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  activateWorldInfo,
  DEFAULT_ACTIVATION_SETTINGS,
  parseDecorators,
  worldInfoBudget,
  type Activation,
  type ActivationBook,
  type ActivationInput,
  type ActivationSettings,
} from '$lib/chat/activation';
import { emptyLorebook, newLorebookEntry, parseWorldInfo, type LorebookEntry } from '$lib/chat/lorebook';
import { fixtureJson } from './helpers';

type EntryInit = Partial<LorebookEntry> & { uid: number };

const book = (
  entries: EntryInit[],
  world = 'W',
  scope: ActivationBook['scope'] = 'global',
): ActivationBook => ({
  world,
  scope,
  book: { ...emptyLorebook(world), entries: entries.map((e) => newLorebookEntry(e.uid, e)) },
});

/** Messages oldest first; the last one is the newest. */
const chat = (...texts: string[]) => texts.map((text, index) => ({ index, text }));

const run = (
  books: ActivationBook | ActivationBook[],
  messages: ReturnType<typeof chat>,
  settings: Partial<ActivationSettings> = {},
  extra: Partial<ActivationInput> = {},
): Activation =>
  activateWorldInfo({
    books: Array.isArray(books) ? books : [books],
    messages,
    settings,
    seed: 'seed-1',
    timestampMs: 1_700_000_000_000,
    ...extra,
  });

const fired = (a: Activation) => a.entries.map((e) => e.uid);
const skipOf = (a: Activation, uid: number) => a.skipped.find((s) => s.uid === uid)?.why;
const causeOf = (a: Activation, uid: number) => a.entries.find((e) => e.uid === uid)?.why;

describe('scan depth', () => {
  const b = book([{ uid: 1, keys: ['lantern'], content: 'Lanterns.' }]);
  const messages = chat('a lantern', 'x', 'y');

  it('scans only the newest `scanDepth` messages', () => {
    expect(fired(run(b, messages, { scanDepth: 2 }))).toEqual([]);
    expect(skipOf(run(b, messages, { scanDepth: 2 }), 1)).toEqual({ kind: 'no_match', scanDepth: 2 });
    expect(fired(run(b, messages, { scanDepth: 3 }))).toEqual([1]);
  });

  it('lets an entry override the global depth', () => {
    const deep = book([{ uid: 1, keys: ['lantern'], content: 'L', scanDepth: 3 }]);
    expect(fired(run(deep, messages, { scanDepth: 1 }))).toEqual([1]);
  });

  it('matches nothing at depth 0, as SillyTavern', () => {
    const zero = book([{ uid: 1, keys: ['y'], content: 'L', scanDepth: 0 }]);
    expect(fired(run(zero, messages))).toEqual([]);
  });

  it('says which message matched (0-based chat index)', () => {
    expect(causeOf(run(b, messages, { scanDepth: 5 }), 1)).toEqual({
      kind: 'key',
      key: 'lantern',
      source: { kind: 'message', index: 0 },
      secondary: null,
    });
  });

  it('scans `Name: text` when names are included', () => {
    const byName = book([{ uid: 1, keys: ['Wren:'], content: 'W' }]);
    const messages = [{ index: 0, name: 'Wren', text: 'hello' }];
    expect(fired(run(byName, messages))).toEqual([1]);
    expect(fired(run(byName, messages, { includeNames: false }))).toEqual([]);
  });
});

describe('primary keys', () => {
  it('matches plain keys as case-insensitive substrings by default', () => {
    const b = book([{ uid: 1, keys: ['Dragon'], content: 'D' }]);
    expect(fired(run(b, chat('the DRAGONS came')))).toEqual([1]);
  });

  it('honours case sensitivity per entry, falling back to the global setting', () => {
    const b = book([
      { uid: 1, keys: ['Dragon'], content: 'a', caseSensitive: true },
      { uid: 2, keys: ['Dragon'], content: 'b', caseSensitive: false },
      { uid: 3, keys: ['Dragon'], content: 'c' },
    ]);
    expect(fired(run(b, chat('a dragon')))).toEqual([2, 3]);
    expect(fired(run(b, chat('a dragon'), { caseSensitive: true }))).toEqual([2]);
  });

  it('honours whole-word matching per entry, falling back to the global setting', () => {
    const b = book([
      { uid: 1, keys: ['cat'], content: 'a', matchWholeWords: true },
      { uid: 2, keys: ['cat'], content: 'b' },
    ]);
    expect(fired(run(b, chat('concatenate')))).toEqual([2]);
    expect(fired(run(b, chat('concatenate'), { matchWholeWords: true }))).toEqual([]);
    expect(fired(run(b, chat('the cat.'), { matchWholeWords: true }))).toEqual([1, 2]);
  });

  it('matches a multi-word key as a substring even with whole words on', () => {
    const b = book([{ uid: 1, keys: ['red door'], content: 'a', matchWholeWords: true }]);
    expect(fired(run(b, chat('the tired doors')))).toEqual([1]);
  });

  it('treats /pattern/flags keys as regular expressions', () => {
    const b = book([{ uid: 1, keys: ['/dr[a4]g[o0]n/i'], content: 'a', caseSensitive: true }]);
    expect(fired(run(b, chat('a DR4G0N appears')))).toEqual([1]);
    expect(fired(run(b, chat('a drag on')))).toEqual([]);
  });

  it('treats an invalid regex as plain text', () => {
    const b = book([{ uid: 1, keys: ['/(unclosed/'], content: 'a' }]);
    expect(fired(run(b, chat('nothing')))).toEqual([]);
    expect(fired(run(b, chat('literally /(unclosed/ here')))).toEqual([1]);
  });

  it('does not carry regex state between scans (g flag)', () => {
    const b = book([{ uid: 1, keys: ['/x/g'], content: 'a' }]);
    const input = { books: [b], messages: chat('x'), seed: 1, timestampMs: 0 };
    expect(fired(activateWorldInfo(input))).toEqual([1]);
    expect(fired(activateWorldInfo(input))).toEqual([1]);
  });

  it('skips an entry without keys', () => {
    const a = run(book([{ uid: 1, keys: ['  '], content: 'a' }]), chat('anything'));
    expect(skipOf(a, 1)).toEqual({ kind: 'no_keys' });
  });
});

describe('secondary keys', () => {
  const entry = (logic: LorebookEntry['selectiveLogic']) =>
    book([{ uid: 1, keys: ['ship'], secondaryKeys: ['storm', 'rain'], selectiveLogic: logic, content: 'S' }]);
  const cases: [LorebookEntry['selectiveLogic'], string, boolean][] = [
    ['and_any', 'a ship', false],
    ['and_any', 'a ship in the storm', true],
    ['and_any', 'a ship in the storm and rain', true],
    ['and_all', 'a ship in the storm', false],
    ['and_all', 'a ship in the storm and rain', true],
    ['not_any', 'a ship', true],
    ['not_any', 'a ship in the rain', false],
    ['not_all', 'a ship in the rain', true],
    ['not_all', 'a ship in the storm and rain', false],
  ];

  it.each(cases)('%s with %j fires: %s', (logic, text, fires) => {
    expect(fired(run(entry(logic), chat(text)))).toEqual(fires ? [1] : []);
  });

  it('reports which secondary keys matched', () => {
    const a = run(entry('and_all'), chat('a ship in the storm'));
    expect(skipOf(a, 1)).toEqual({
      kind: 'secondary_logic',
      secondary: { logic: 'and_all', matched: ['storm'], unmatched: ['rain'] },
    });
    const b = run(entry('and_any'), chat('a ship in the storm'));
    expect(causeOf(b, 1)).toMatchObject({ secondary: { matched: ['storm'], unmatched: ['rain'] } });
  });

  it('ignores secondary keys when the entry is not selective', () => {
    const b = book([{ uid: 1, keys: ['ship'], secondaryKeys: ['storm'], selective: false, content: 'S' }]);
    expect(fired(run(b, chat('a ship')))).toEqual([1]);
  });
});

describe('constant and disabled entries', () => {
  it('always activates constant entries, even without keys or messages', () => {
    const a = run(book([{ uid: 1, constant: true, content: 'Always.' }]), []);
    expect(fired(a)).toEqual([1]);
    expect(causeOf(a, 1)).toEqual({ kind: 'constant' });
  });

  it('never activates disabled entries, constant or not', () => {
    const a = run(
      book([
        { uid: 1, constant: true, disabled: true, content: 'x' },
        { uid: 2, keys: ['x'], disabled: true, content: 'x' },
      ]),
      chat('x'),
    );
    expect(fired(a)).toEqual([]);
    expect(skipOf(a, 1)).toEqual({ kind: 'disabled' });
    expect(skipOf(a, 2)).toEqual({ kind: 'disabled' });
  });

  it('does not put entries with empty content in the snapshot', () => {
    const a = run(book([{ uid: 1, constant: true, content: '   ' }]), []);
    expect(fired(a)).toEqual([]);
    expect(skipOf(a, 1)).toEqual({ kind: 'empty_content' });
  });
});

describe('probability', () => {
  it('never fires at 0% and always at 100%', () => {
    const b = book([
      { uid: 1, constant: true, probability: 0, content: 'a' },
      { uid: 2, constant: true, probability: 100, content: 'b' },
    ]);
    for (const seed of ['a', 'b', 'c', 1, 2, 3]) expect(fired(run(b, [], {}, { seed }))).toEqual([2]);
  });

  it('ignores the probability when useProbability is off', () => {
    const b = book([{ uid: 1, constant: true, probability: 0, useProbability: false, content: 'a' }]);
    expect(fired(run(b, []))).toEqual([1]);
  });

  it('reports the roll of a failed check', () => {
    const a = run(book([{ uid: 1, constant: true, probability: 0, content: 'a' }]), []);
    expect(skipOf(a, 1)).toMatchObject({ kind: 'probability', probability: 0 });
  });

  it('fires about as often as its probability over many seeds', () => {
    const b = book([{ uid: 1, constant: true, probability: 30, content: 'a' }]);
    let hits = 0;
    for (let s = 0; s < 2000; s++) hits += fired(run(b, [], {}, { seed: s })).length;
    expect(hits / 2000).toBeGreaterThan(0.25);
    expect(hits / 2000).toBeLessThan(0.35);
  });

  it('is reproducible: the same seed gives the same result', () => {
    const b = book(
      Array.from({ length: 20 }, (_, uid) => ({ uid, constant: true, probability: 50, content: `e${uid}` })),
    );
    const first = run(b, [], {}, { seed: 'run_abc' });
    expect(run(b, [], {}, { seed: 'run_abc' })).toEqual(first);
    expect(fired(run(b, [], {}, { seed: 'run_abd' }))).not.toEqual(fired(first));
  });
});

describe('recursion', () => {
  const b = book([
    { uid: 1, keys: ['castle'], content: 'The castle has a hidden library.', order: 10 },
    { uid: 2, keys: ['library'], content: 'The library holds the star map.', order: 20 },
    { uid: 3, keys: ['star map'], content: 'The star map is incomplete.', order: 30 },
  ]);

  it('scans activated content for further entries when recursive', () => {
    const a = run(b, chat('we reach the castle'), { recursive: true });
    expect(fired(a)).toEqual([1, 2, 3]);
    expect(a.passes).toBe(4);
    expect(a.entries.map((e) => e.pass)).toEqual([1, 2, 3]);
    expect(causeOf(a, 2)).toEqual({
      kind: 'key',
      key: 'library',
      source: { kind: 'entry', world: 'W', uid: 1 },
      secondary: null,
    });
  });

  it('does not recurse when recursion is off', () => {
    expect(fired(run(b, chat('we reach the castle')))).toEqual([1]);
  });

  it('stops at the maximum number of passes', () => {
    expect(fired(run(b, chat('castle'), { recursive: true, maxRecursionSteps: 2 }))).toEqual([1, 2]);
  });

  it('preventRecursion: the entry content does not trigger others', () => {
    const p = book([
      { uid: 1, keys: ['castle'], content: 'library', preventRecursion: true },
      { uid: 2, keys: ['library'], content: 'L' },
    ]);
    expect(fired(run(p, chat('castle'), { recursive: true }))).toEqual([1]);
  });

  it('excludeRecursion: the entry cannot be triggered by other entries', () => {
    const x = book([
      { uid: 1, keys: ['castle'], content: 'library' },
      { uid: 2, keys: ['library'], content: 'L', excludeRecursion: true },
    ]);
    const a = run(x, chat('castle'), { recursive: true });
    expect(fired(a)).toEqual([1]);
    expect(skipOf(a, 2)).toEqual({ kind: 'recursion_excluded' });
    expect(fired(run(x, chat('castle library'), { recursive: true }))).toEqual([1, 2]);
  });

  it('delayUntilRecursion: the entry waits for a recursion pass', () => {
    const d = book([
      { uid: 1, keys: ['castle'], content: 'library' },
      { uid: 2, keys: ['library'], content: 'L', delayUntilRecursion: 1 },
    ]);
    const a = run(d, chat('castle library'), { recursive: true });
    expect(a.entries.find((e) => e.uid === 2)?.pass).toBe(2);
    const noRecursion = run(d, chat('castle library'));
    expect(skipOf(noRecursion, 2)).toEqual({ kind: 'delayed_until_recursion', level: 1 });
  });

  it('delayUntilRecursion levels run in order', () => {
    const d = book([
      { uid: 1, keys: ['a'], content: 'x', delayUntilRecursion: 2 },
      { uid: 2, keys: ['a'], content: 'y', delayUntilRecursion: 1 },
      { uid: 3, keys: ['a'], content: 'z' },
    ]);
    const a = run(d, chat('a'), { recursive: true });
    // level 1 opens in pass 2; level 2 only once ordinary recursion has nothing new (pass 3), as SillyTavern
    expect(Object.fromEntries(a.entries.map((e) => [e.uid, e.pass]))).toEqual({ 1: 4, 2: 2, 3: 1 });
  });
});

describe('inclusion groups', () => {
  it('lets one entry of a group win', () => {
    const b = book([
      { uid: 1, keys: ['x'], group: 'weather', content: 'rain' },
      { uid: 2, keys: ['x'], group: 'weather', content: 'sun' },
      { uid: 3, keys: ['x'], group: 'weather', content: 'snow' },
    ]);
    const a = run(b, chat('x'));
    expect(a.entries).toHaveLength(1);
    const winner = a.entries[0]!.uid;
    for (const s of a.skipped) {
      expect(s.why).toEqual({
        kind: 'group_lost',
        group: 'weather',
        winner: { world: 'W', uid: winner },
        by: 'weight',
      });
    }
  });

  it('gives the win to the groupOverride entry with the highest order', () => {
    const b = book([
      { uid: 1, keys: ['x'], group: 'g', content: 'a', groupOverride: true, order: 10 },
      { uid: 2, keys: ['x'], group: 'g', content: 'b', groupOverride: true, order: 50 },
      { uid: 3, keys: ['x'], group: 'g', content: 'c', order: 99 },
    ]);
    const a = run(b, chat('x'));
    expect(fired(a)).toEqual([2]);
    expect(skipOf(a, 3)).toMatchObject({ kind: 'group_lost', by: 'override', winner: { uid: 2 } });
  });

  it('draws by weight with the seeded generator', () => {
    const b = book([
      { uid: 1, keys: ['x'], group: 'g', content: 'a', groupWeight: 90 },
      { uid: 2, keys: ['x'], group: 'g', content: 'b', groupWeight: 10 },
    ]);
    let first = 0;
    for (let s = 0; s < 1000; s++) if (fired(run(b, chat('x'), {}, { seed: s }))[0] === 1) first++;
    expect(first).toBeGreaterThan(850);
    expect(first).toBeLessThan(950);
    expect(fired(run(b, chat('x'), {}, { seed: 7 }))).toEqual(fired(run(b, chat('x'), {}, { seed: 7 })));
  });

  it('handles an entry in several groups (comma separated)', () => {
    const b = book([
      { uid: 1, keys: ['x'], group: 'a, b', content: '1', groupOverride: true },
      { uid: 2, keys: ['x'], group: 'a', content: '2' },
      { uid: 3, keys: ['x'], group: 'b', content: '3' },
    ]);
    expect(fired(run(b, chat('x')))).toEqual([1]);
  });

  it('keeps a group closed once one of its entries fired in an earlier pass', () => {
    const b = book([
      { uid: 1, keys: ['x'], group: 'g', content: 'y' },
      { uid: 2, keys: ['y'], group: 'g', content: 'z' },
    ]);
    const a = run(b, chat('x'), { recursive: true });
    expect(fired(a)).toEqual([1]);
    expect(skipOf(a, 2)).toEqual({ kind: 'group_lost', group: 'g', winner: null, by: 'already_active' });
  });

  it('with group scoring, the entry matching the most keys wins', () => {
    const b = book([
      { uid: 1, keys: ['red'], group: 'g', content: '1' },
      { uid: 2, keys: ['red', 'door'], group: 'g', content: '2' },
    ]);
    const a = run(b, chat('the red door'), { useGroupScoring: true });
    expect(fired(a)).toEqual([2]);
    expect(skipOf(a, 1)).toMatchObject({ kind: 'group_lost', by: 'score', winner: { uid: 2 } });
  });
});

describe('ordering and budget', () => {
  it('lists activated entries by order, ascending', () => {
    const b = book([
      { uid: 1, keys: ['x'], order: 300, content: 'c' },
      { uid: 2, keys: ['x'], order: 100, content: 'a' },
      { uid: 3, keys: ['x'], order: 200, content: 'b' },
    ]);
    expect(fired(run(b, chat('x')))).toEqual([2, 3, 1]);
  });

  it('stops adding entries once the token budget (chars / 4) is exceeded; higher order is served first', () => {
    const b = book([
      { uid: 1, keys: ['x'], order: 300, content: 'a'.repeat(40) }, // 10 tokens
      { uid: 2, keys: ['x'], order: 200, content: 'b'.repeat(40) }, // 10 tokens
      { uid: 3, keys: ['x'], order: 100, content: 'c'.repeat(4) }, // 1 token, but the budget overflowed
    ]);
    const a = run(b, chat('x'), { budget: { unit: 'tokens', limit: 15 } });
    expect(fired(a)).toEqual([1]);
    expect(skipOf(a, 2)).toEqual({ kind: 'budget', cost: 10, used: 10, limit: 15 });
    expect(skipOf(a, 3)).toMatchObject({ kind: 'budget' });
    expect(a.budget).toEqual({ unit: 'tokens', limit: 15, used: 10, overflowed: true });
  });

  it('serves constant entries first', () => {
    const b = book([
      { uid: 1, keys: ['x'], order: 900, content: 'k'.repeat(40) },
      { uid: 2, constant: true, order: 1, content: 'c'.repeat(40) },
    ]);
    expect(fired(run(b, chat('x'), { budget: { unit: 'tokens', limit: 12 } }))).toEqual([2]);
  });

  it('lets ignoreBudget entries through after an overflow', () => {
    const b = book([
      { uid: 1, keys: ['x'], order: 300, content: 'a'.repeat(100) },
      { uid: 2, keys: ['x'], order: 200, content: 'b'.repeat(100), ignoreBudget: true },
    ]);
    expect(fired(run(b, chat('x'), { budget: { unit: 'chars', limit: 10 } }))).toEqual([2]);
  });

  it('counts characters with a chars budget', () => {
    const b = book([{ uid: 1, keys: ['x'], content: '猫'.repeat(10) }]);
    expect(fired(run(b, chat('x'), { budget: { unit: 'chars', limit: 10 } }))).toEqual([1]);
    expect(fired(run(b, chat('x'), { budget: { unit: 'chars', limit: 9 } }))).toEqual([]);
  });

  it('computes SillyTavern budgets from the context size', () => {
    expect(worldInfoBudget(25, 8192)).toEqual({ unit: 'tokens', limit: 2048 });
    expect(worldInfoBudget(25, 8192, 500)).toEqual({ unit: 'tokens', limit: 500 });
    expect(worldInfoBudget(0, 8192)).toEqual({ unit: 'tokens', limit: 1 });
  });

  it('stops recursion once the budget overflowed', () => {
    const b = book([
      { uid: 1, keys: ['x'], order: 2, content: 'y' },
      { uid: 2, keys: ['x'], order: 1, content: 'z'.repeat(80) },
      { uid: 3, keys: ['y'], content: 'w' },
    ]);
    const a = run(b, chat('x'), { recursive: true, budget: { unit: 'tokens', limit: 5 } });
    expect(fired(a)).toEqual([1]);
    expect(a.passes).toBe(1);
  });
});

describe('other filters and sources', () => {
  it('limits entries to their generation triggers', () => {
    const b = book([{ uid: 1, constant: true, content: 'a', triggers: ['swipe'] }]);
    expect(fired(run(b, [], {}, { trigger: 'swipe' }))).toEqual([1]);
    expect(skipOf(run(b, []), 1)).toEqual({ kind: 'trigger', trigger: 'normal', triggers: ['swipe'] });
  });

  it('applies character filters (include and exclude, names and tags)', () => {
    const only = book([
      {
        uid: 1,
        constant: true,
        content: 'a',
        characterFilter: { isExclude: false, names: ['Orrin'], tags: [] },
      },
    ]);
    const not = book([
      {
        uid: 1,
        constant: true,
        content: 'a',
        characterFilter: { isExclude: true, names: [], tags: ['villain'] },
      },
    ]);
    const orrin = { names: ['Orrin'], tags: ['villain'] };
    expect(fired(run(only, [], {}, { character: orrin }))).toEqual([1]);
    expect(fired(run(only, [], {}, { character: { names: ['Sable'], tags: [] } }))).toEqual([]);
    expect(skipOf(run(not, [], {}, { character: orrin }), 1)).toEqual({ kind: 'character_filter' });
  });

  it('waits for `delay` messages before activating', () => {
    const b = book([{ uid: 1, constant: true, content: 'a', delay: 3 }]);
    expect(fired(run(b, chat('1', '2')))).toEqual([]);
    expect(fired(run(b, chat('1', '2', '3')))).toEqual([1]);
  });

  it('honours @@activate and @@dont_activate decorators and strips them from content', () => {
    const b = book([
      { uid: 1, keys: ['nothing'], content: '@@activate\nForced.' },
      { uid: 2, constant: true, content: '@@dont_activate\nNever.' },
    ]);
    const a = run(b, chat('hello'));
    expect(a.entries).toMatchObject([{ uid: 1, content: 'Forced.', why: { kind: 'decorator' } }]);
    expect(skipOf(a, 2)).toEqual({ kind: 'decorator', decorator: '@@dont_activate' });
    expect(parseDecorators('@@unknown\n@@@activate\ntext')).toEqual({
      decorators: ['@@activate'],
      content: 'text',
    });
    expect(parseDecorators('plain')).toEqual({ decorators: [], content: 'plain' });
  });

  it('scans character and persona text only for entries that opt in', () => {
    const b = book([
      { uid: 1, keys: ['volcano'], content: 'a', matchScenario: true },
      { uid: 2, keys: ['volcano'], content: 'b' },
    ]);
    const a = run(b, chat('hi'), {}, { context: { scenario: 'Near a volcano.' } });
    expect(fired(a)).toEqual([1]);
    expect(causeOf(a, 1)).toMatchObject({ source: { kind: 'context', field: 'scenario' } });
  });

  it('scans injected prompt text for every entry', () => {
    const b = book([{ uid: 1, keys: ['note'], content: 'a' }]);
    const a = run(b, [], {}, { injections: ['author note'] });
    expect(causeOf(a, 1)).toMatchObject({ source: { kind: 'injection', index: 0 } });
  });
});

describe('books and the snapshot', () => {
  it('scans chat books first, then character books before global ones, and scans a book once', () => {
    const g = book([{ uid: 1, constant: true, content: 'g' }], 'Global');
    const c = book([{ uid: 1, constant: true, content: 'c' }], 'Char', 'character');
    const k = book([{ uid: 1, constant: true, content: 'k' }], 'Chat', 'chat');
    const dup = book([{ uid: 1, constant: true, content: 'dup' }], 'Global', 'chat');
    const budget = { unit: 'chars', limit: 2 } as const;
    expect(run([g, c, k], [], { budget }).entries.map((e) => e.world)).toEqual(['Chat', 'Char']);
    expect(run([g, c, k], [], { budget, strategy: 'global_first' }).entries.map((e) => e.world)).toEqual([
      'Chat',
      'Global',
    ]);
    expect(run([g, dup], []).entries.map((e) => e.content)).toEqual(['g']);
  });

  it('records what the UI shows and the prompt needs', () => {
    const wi = parseWorldInfo(fixtureJson('world-info.json'), 'Ashfall');
    if (!wi.ok) throw new Error(wi.error.message);
    const a = activateWorldInfo({
      books: [{ world: 'Ashfall', scope: 'global', book: wi.value }],
      messages: chat('1', '2', '3', 'dragon breathes fire'),
      seed: 'x',
      timestampMs: 42,
      trigger: 'normal',
      settings: { recursive: true },
      character: { names: ['Hero.png'], tags: [] },
    });
    expect(a.timestampMs).toBe(42);
    expect(a.trigger).toBe('normal');
    expect(a.seed).toBe('x');
    for (const e of a.entries) {
      expect(Object.keys(e).sort()).toEqual(
        [
          'world',
          'uid',
          'displayName',
          'content',
          'position',
          'depth',
          'role',
          'order',
          'constant',
          'outletName',
          'pass',
          'why',
        ].sort(),
      );
    }
    expect(a.skipped.find((s) => s.uid === 5)?.why).toEqual({ kind: 'disabled' });
  });

  it('keeps defaults for settings passed as undefined', () => {
    const a = run(book([{ uid: 1, keys: ['x'], content: 'x' }]), chat('x'), { scanDepth: undefined });
    expect(fired(a)).toEqual([1]);
    expect(a.settings.scanDepth).toBe(2);
  });

  it('records the defaults with the given settings over them, in the defaults order', () => {
    const given = { budget: null, strategy: 'evenly', recursive: undefined, extra: 1 };
    const a = run(book([]), [], given as Partial<ActivationSettings>);
    expect(Object.entries(a.settings)).toEqual(
      Object.entries({ ...DEFAULT_ACTIVATION_SETTINGS, budget: null, strategy: 'evenly', extra: 1 }),
    );
  });

  it('is deeply frozen', () => {
    const a = run(book([{ uid: 1, constant: true, content: 'x' }]), []);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.entries[0])).toBe(true);
    expect(Object.isFrozen(a.entries[0]!.why)).toBe(true);
  });

  it('uses the comment, else the first key, else the uid as display name', () => {
    const a = run(
      book([
        { uid: 1, constant: true, content: 'x', comment: 'Named' },
        { uid: 2, constant: true, content: 'x', keys: ['key'] },
        { uid: 3, constant: true, content: 'x' },
      ]),
      [],
    );
    expect(a.entries.map((e) => e.displayName)).toEqual(['Named', 'key', 'Entry 3']);
  });
});

describe('reproducibility (property)', () => {
  const entryArb = fc.record({
    keys: fc.array(fc.constantFrom('a', 'b', 'c', 'd', '/[ab]c/i', 'e f'), { maxLength: 2 }),
    secondaryKeys: fc.array(fc.constantFrom('a', 'b', 'x'), { maxLength: 2 }),
    selectiveLogic: fc.constantFrom('and_any', 'not_all', 'not_any', 'and_all' as const),
    constant: fc.boolean(),
    probability: fc.constantFrom(0, 25, 50, 100),
    group: fc.constantFrom('', 'g1', 'g2', 'g1, g2'),
    groupWeight: fc.integer({ min: 0, max: 100 }),
    order: fc.integer({ min: 0, max: 5 }),
    content: fc.constantFrom('a', 'b c', 'd', 'e f', ''),
    delayUntilRecursion: fc.constantFrom(0, 0, 1, 2),
  });
  const inputArb = fc.record({
    entries: fc.array(entryArb, { maxLength: 12 }),
    messages: fc.array(fc.constantFrom('a', 'b', 'c d', 'AC', 'x', 'e f'), { maxLength: 6 }),
    seed: fc.oneof(fc.string(), fc.integer()),
    recursive: fc.boolean(),
    limit: fc.integer({ min: 1, max: 20 }),
  });

  it('gives the same activation for the same seed and input', () => {
    fc.assert(
      fc.property(inputArb, ({ entries, messages, seed, recursive, limit }) => {
        const input = (): ActivationInput => ({
          books: [book(entries.map((e, uid) => ({ ...e, uid })))],
          messages: chat(...messages),
          seed,
          timestampMs: 0,
          settings: { recursive, budget: { unit: 'chars', limit } },
        });
        const a = activateWorldInfo(input());
        expect(activateWorldInfo(input())).toEqual(a);
        // every entry is accounted for exactly once
        const ids = [...a.entries, ...a.skipped].map((e) => e.uid).sort((x, y) => x - y);
        expect(ids).toEqual(entries.map((_, uid) => uid));
        expect(a.budget.used).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 300 },
    );
  });
});
