import { describe, expect, it } from 'vitest';
import {
  activateWorldInfo,
  type Activation,
  type ActivationCause,
  type MatchSource,
  type SkipReason,
} from '$lib/chat/activation';
import { emptyLorebook, newLorebookEntry } from '$lib/chat/lorebook';
import {
  asActivation,
  budgetText,
  entryNames,
  loreCountText,
  plainText,
  positionText,
  skipText,
  whyText,
  type EntryNames,
} from '$lib/ui/run/activation-view';

const KNOWN: Record<string, string> = { 'Harbour:7': "Brindle's lamp", 'Harbour:8': 'Fog bell' };
const names: EntryNames = (ref) => KNOWN[`${ref.world}:${ref.uid}`] ?? `entry ${ref.uid} of ${ref.world}`;

const why = (cause: ActivationCause) => plainText(whyText(cause, names));
const skip = (reason: SkipReason, unit?: 'tokens' | 'chars') => plainText(skipText(reason, names, unit));
const key = (k: string, source: MatchSource): ActivationCause => ({
  kind: 'key',
  key: k,
  source,
  secondary: null,
});

describe('why an entry fired', () => {
  const cases: Record<ActivationCause['kind'], [ActivationCause, string][]> = {
    constant: [[{ kind: 'constant' }, 'always on (constant)']],
    decorator: [[{ kind: 'decorator', decorator: '@@activate' }, 'decorator `@@activate`']],
    key: [
      [key('lighthouse', { kind: 'message', index: 2 }), 'key `lighthouse` in message 3'],
      [key('/lamp|light/i', { kind: 'messages' }), 'key `/lamp|light/i` across the scanned messages'],
      [
        key('keeper', { kind: 'context', field: 'personaDescription' }),
        'key `keeper` in the persona description',
      ],
      [key('fog', { kind: 'context', field: 'scenario' }), 'key `fog` in the scenario'],
      [key('tide', { kind: 'injection', index: 0 }), 'key `tide` in injected prompt text 1'],
      [key('oil', { kind: 'entry', world: 'Harbour', uid: 7 }), "recursion from Brindle's lamp: key `oil`"],
      [key('oil', { kind: 'entry', world: 'Coast', uid: 3 }), 'recursion from entry 3 of Coast: key `oil`'],
    ],
  };
  for (const [kind, rows] of Object.entries(cases))
    it(kind, () => {
      for (const [cause, text] of rows) expect(why(cause)).toBe(text);
    });

  it('names the secondary keys under each logic', () => {
    const withSecondary = (
      logic: 'and_any' | 'and_all' | 'not_any' | 'not_all',
      matched: string[],
      unmatched: string[],
    ) =>
      why({
        kind: 'key',
        key: 'lamp',
        source: { kind: 'message', index: 0 },
        secondary: { logic, matched, unmatched },
      });
    expect(withSecondary('and_any', ['oil'], ['wick'])).toBe(
      'key `lamp` in message 1, with secondary `oil` (AND ANY)',
    );
    expect(withSecondary('and_all', ['oil', 'wick'], [])).toBe(
      'key `lamp` in message 1, with every secondary key: `oil` and `wick` (AND ALL)',
    );
    expect(withSecondary('not_any', [], ['storm', 'wreck', 'gale'])).toBe(
      'key `lamp` in message 1, and none of `storm`, `wreck` and `gale` (NOT ANY)',
    );
    expect(withSecondary('not_all', ['storm'], ['wreck'])).toBe(
      'key `lamp` in message 1, and not `wreck` (NOT ALL)',
    );
  });
});

describe('why an entry was skipped', () => {
  const secondary = (
    logic: 'and_any' | 'and_all' | 'not_any' | 'not_all',
    matched: string[],
    unmatched: string[],
  ) => ({ kind: 'secondary_logic', secondary: { logic, matched, unmatched } }) as const;
  const cases: Record<SkipReason['kind'], [SkipReason, string][]> = {
    disabled: [[{ kind: 'disabled' }, 'disabled']],
    no_keys: [[{ kind: 'no_keys' }, 'no keys, and not constant']],
    no_match: [
      [{ kind: 'no_match', scanDepth: 2 }, 'no key matched in the last 2 messages'],
      [{ kind: 'no_match', scanDepth: 1 }, 'no key matched in the last message'],
      [{ kind: 'no_match', scanDepth: 0 }, 'scan depth 0: nothing was scanned'],
    ],
    secondary_logic: [
      [
        secondary('and_any', [], ['oil', 'wick']),
        'none of its secondary keys found: `oil` and `wick` (AND ANY)',
      ],
      [secondary('and_all', ['oil'], ['wick']), 'secondary keys missing: `wick` (AND ALL)'],
      [secondary('not_any', ['storm'], []), 'a secondary key was found: `storm` (NOT ANY)'],
      [
        secondary('not_all', ['storm', 'gale'], []),
        'every secondary key was found: `storm` and `gale` (NOT ALL)',
      ],
    ],
    probability: [
      [
        { kind: 'probability', probability: 30, roll: 72.4567 },
        'lost its 30% probability roll (rolled 72.5)',
      ],
    ],
    group_lost: [
      [
        { kind: 'group_lost', group: 'lights', winner: { world: 'Harbour', uid: 7 }, by: 'override' },
        "inclusion group `lights`: Brindle's lamp won (group override)",
      ],
      [
        { kind: 'group_lost', group: 'lights', winner: { world: 'Harbour', uid: 8 }, by: 'weight' },
        'inclusion group `lights`: Fog bell won the weighted draw',
      ],
      [
        { kind: 'group_lost', group: 'lights', winner: { world: 'Harbour', uid: 7 }, by: 'score' },
        "inclusion group `lights`: Brindle's lamp scored higher",
      ],
      [
        { kind: 'group_lost', group: 'lights', winner: null, by: 'already_active' },
        'inclusion group `lights` already had an active entry',
      ],
      [
        { kind: 'group_lost', group: 'lights', winner: null, by: 'weight' },
        'inclusion group `lights`: another entry won the weighted draw',
      ],
    ],
    budget: [
      [
        { kind: 'budget', cost: 40, used: 90, limit: 100 },
        'over the budget: needs 40 tokens, 90 of 100 already used',
      ],
    ],
    trigger: [
      [
        { kind: 'trigger', trigger: 'continue', triggers: ['normal', 'swipe'] },
        'only for `normal` and `swipe` generations (this was `continue`)',
      ],
    ],
    character_filter: [[{ kind: 'character_filter' }, 'filtered out for this character']],
    delay: [[{ kind: 'delay', messages: 3, delay: 5 }, 'delayed until the chat has 5 messages (it has 3)']],
    decorator: [[{ kind: 'decorator', decorator: '@@dont_activate' }, 'decorator `@@dont_activate`']],
    recursion_excluded: [
      [{ kind: 'recursion_excluded' }, 'excluded from recursion: only the chat itself can activate it'],
    ],
    delayed_until_recursion: [
      [{ kind: 'delayed_until_recursion', level: 2 }, 'delayed until recursion level 2'],
    ],
    empty_content: [[{ kind: 'empty_content' }, 'matched, but its content is empty']],
  };
  for (const [kind, rows] of Object.entries(cases))
    it(kind, () => {
      for (const [reason, text] of rows) expect(skip(reason)).toBe(text);
    });

  it('counts a character budget in characters', () => {
    expect(skip({ kind: 'budget', cost: 400, used: 900, limit: 1000 }, 'chars')).toBe(
      'over the budget: needs 400 characters, 900 of 1000 already used',
    );
  });
});

describe('the rest of the view', () => {
  it('marks code segments', () => {
    expect(whyText(key('lamp', { kind: 'message', index: 0 }), names)).toEqual([
      { text: 'key ' },
      { text: 'lamp', code: true },
      { text: ' ' },
      { text: 'in message 1' },
    ]);
  });

  it('describes positions', () => {
    const at = (position: Parameters<typeof positionText>[0]['position'], outletName = '') =>
      positionText({ position, depth: 4, role: 'system', outletName });
    expect(at('before')).toBe('before the character');
    expect(at('after')).toBe('after the character');
    expect(at('an_top')).toBe("top of the author's note");
    expect(at('an_bottom')).toBe("bottom of the author's note");
    expect(at('depth')).toBe('in the chat at depth 4 (system)');
    expect(at('em_top')).toBe('before the examples');
    expect(at('em_bottom')).toBe('after the examples');
    expect(at('outlet', 'weather')).toBe('outlet “weather”');
    expect(at('outlet')).toBe('outlet');
  });

  it('describes the budget', () => {
    expect(budgetText({ unit: 'tokens', limit: null, used: 0, overflowed: false })).toBe('no limit');
    expect(budgetText({ unit: 'tokens', limit: 100, used: 90, overflowed: false })).toBe(
      '90 of 100 tokens used',
    );
    expect(budgetText({ unit: 'chars', limit: 100, used: 90, overflowed: true })).toBe(
      '90 of 100 characters used, full: some entries did not fit',
    );
  });

  it('counts lore entries', () => {
    expect(loreCountText(1)).toBe('1 lore entry');
    expect(loreCountText(3)).toBe('3 lore entries');
  });

  it('reads a real activation and names entries from it', () => {
    const book = emptyLorebook('Harbour');
    book.entries = [
      newLorebookEntry(7, {
        comment: "Brindle's lamp",
        keys: ['lighthouse'],
        content: 'The lamp burns whale oil.',
      }),
      newLorebookEntry(8, { comment: 'Fog bell', keys: ['fog'], content: 'The bell rings in fog.' }),
      newLorebookEntry(9, {
        comment: 'Keeper',
        keys: ['oil'],
        content: 'Keeper Brindle.',
        excludeRecursion: false,
      }),
      newLorebookEntry(10, { comment: 'Tides', constant: true, content: 'Tides run high.' }),
    ];
    const activation = activateWorldInfo({
      books: [{ world: 'Harbour', scope: 'character', book }],
      messages: [{ index: 0, text: 'the lighthouse is dark' }],
      settings: { recursive: true },
      seed: 'run_1',
      timestampMs: 0,
    });
    const parsed = asActivation(JSON.parse(JSON.stringify(activation)));
    expect(parsed).not.toBeNull();
    const n = entryNames(parsed!);
    const whys = Object.fromEntries(
      parsed!.entries.map((e) => [e.displayName, plainText(whyText(e.why, n))]),
    );
    expect(whys).toEqual({
      "Brindle's lamp": 'key `lighthouse` in message 1',
      Keeper: "recursion from Brindle's lamp: key `oil`",
      Tides: 'always on (constant)',
    });
    expect(parsed!.skipped.map((s) => [s.displayName, plainText(skipText(s.why, n))])).toEqual([
      ['Fog bell', 'no key matched in the last 2 messages'],
    ]);
    expect(n({ world: 'Elsewhere', uid: 1 })).toBe('entry 1 of Elsewhere');
  });

  it('refuses what is not an activation', () => {
    expect(asActivation(null)).toBeNull();
    expect(asActivation({ entries: [] })).toBeNull();
    expect(asActivation({ entries: [{}], skipped: [], budget: { used: 0 } })).toBeNull();
    const ok: Pick<Activation, 'entries' | 'skipped' | 'budget'> = {
      entries: [],
      skipped: [],
      budget: { unit: 'tokens', limit: null, used: 0, overflowed: false },
    };
    expect(asActivation(ok)).toBe(ok);
  });
});
