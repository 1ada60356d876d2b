import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandMacros, rollDice, type MacroContext } from '$lib/chat/macros';
import { createRng } from '$lib/chat/random';

// 2024-09-28 21:05:00 UTC, a Saturday
const EPOCH = Date.UTC(2024, 8, 28, 21, 5, 0);

const ctx: MacroContext = {
  user: 'Wren',
  char: 'Orrin',
  persona: 'A curious traveller.',
  description: 'A lamplighter.',
  personality: 'gentle',
  scenario: 'Dusk in Brindle.',
  mesExamples: '<START>\nWren: hi',
  model: 'gpt-test',
  seed: 'seed-1',
  now: { epochMs: EPOCH, utcOffsetMinutes: 0 },
};

describe('expandMacros', () => {
  it.each([
    ['{{char}} greets {{user}}.', 'Orrin greets Wren.'],
    ['{{CHAR}} and {{User}}', 'Orrin and Wren'],
    ['{{persona}}', 'A curious traveller.'],
    ['{{description}}|{{personality}}|{{scenario}}', 'A lamplighter.|gentle|Dusk in Brindle.'],
    ['{{mesExamples}}', '<START>\nWren: hi'],
    ['{{mesExamplesRaw}}', '<START>\nWren: hi'],
    ['{{model}}', 'gpt-test'],
    ['a{{newline}}b', 'a\nb'],
    ['a\n\n{{trim}}\nb', 'ab'],
    ['a{{noop}}b', 'ab'],
    ['x{{// a comment\nover lines}}y', 'xy'],
    ['{{reverse:abc}}', 'cba'],
    ['<USER> meets <BOT> and <char>', 'Wren meets Orrin and Orrin'],
    ['{{unknown}} and {{lastMessage}}', '{{unknown}} and {{lastMessage}}'],
    ['{{ char }}', '{{ char }}'],
    ['no macros', 'no macros'],
    ['', ''],
    ['{{time}}', '9:05 PM'],
    ['{{date}}', 'September 28, 2024'],
    ['{{weekday}}', 'Saturday'],
    ['{{isotime}} {{isodate}}', '21:05 2024-09-28'],
    ['{{time_UTC+2}}', '11:05 PM'],
    ['{{time_UTC-21}}', '12:05 AM'],
  ])('%j -> %j', (input, output) => {
    expect(expandMacros(input, ctx)).toBe(output);
  });

  it('uses the time zone offset it is given', () => {
    expect(
      expandMacros('{{isodate}} {{isotime}}', { ...ctx, now: { epochMs: EPOCH, utcOffsetMinutes: 180 } }),
    ).toBe('2024-09-29 00:05');
  });

  it('leaves time macros alone without a clock', () => {
    const { now: _now, ...noClock } = ctx;
    expect(expandMacros('{{time}} {{date}}', noClock)).toBe('{{time}} {{date}}');
  });

  it('takes extra values case-insensitively', () => {
    expect(expandMacros('{{lastMessage}}', { ...ctx, values: { LastMessage: 'hi' } })).toBe('hi');
    // Over the context's own: the card's scenario, expanded, formatted into the preset's template.
    expect(
      expandMacros('[{{scenario}}]', {
        ...ctx,
        scenario: '{{user}} waits',
        values: { scenario: 'Ann waits' },
      }),
    ).toBe('[Ann waits]');
  });

  it('does not expand macros inside substituted values', () => {
    expect(expandMacros('{{user}}', { ...ctx, user: '{{char}}' })).toBe('{{char}}');
  });

  it('expands nested values inside random lists, as SillyTavern', () => {
    const out = expandMacros('{{random:{{user}},{{user}}}}', ctx);
    expect(out).toBe('Wren');
  });

  it('{{random}} picks from comma or :: lists, seeded', () => {
    const pick = (text: string, seed: string) => expandMacros(text, { ...ctx, seed });
    for (const s of ['a', 'b', 'c', 'd']) {
      expect(['x', 'y', 'z']).toContain(pick('{{random:x,y,z}}', s));
      expect(['x, y', 'z']).toContain(pick('{{random::x, y::z}}', s));
      expect(['a,b', 'c']).toContain(pick('{{random:a\\,b,c}}', s));
    }
    expect(pick('{{random:1,2,3,4,5,6,7,8,9}} {{random:1,2,3,4,5,6,7,8,9}}', 'k')).toBe(
      pick('{{random:1,2,3,4,5,6,7,8,9}} {{random:1,2,3,4,5,6,7,8,9}}', 'k'),
    );
    const outcomes = new Set(Array.from({ length: 50 }, (_, i) => pick('{{random:1,2,3}}', `s${i}`)));
    expect(outcomes).toEqual(new Set(['1', '2', '3']));
  });

  it('{{pick}} is stable for the same text and place, whatever the seed', () => {
    const text = 'A {{pick:red,green,blue,black}} door.';
    const a = expandMacros(text, { ...ctx, seed: 'one', pickSeed: 'chat-1' });
    expect(expandMacros(text, { ...ctx, seed: 'two', pickSeed: 'chat-1' })).toBe(a);
    const picks = new Set(
      Array.from({ length: 40 }, (_, i) => expandMacros(text, { ...ctx, pickSeed: `chat-${i}` })),
    );
    expect(picks.size).toBeGreaterThan(1);
  });

  it('{{roll}} rolls dice with the seed', () => {
    for (let i = 0; i < 50; i++) {
      const n = Number(expandMacros('{{roll:1d6}}', { ...ctx, seed: i }));
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(6);
    }
    expect(expandMacros('{{roll 20}}', ctx)).toMatch(/^\d+$/);
    expect(expandMacros('{{roll:3d6+4}}', ctx)).toBe(expandMacros('{{roll:3d6+4}}', ctx));
    expect(expandMacros('[{{roll:banana}}]', ctx)).toBe('[]');
  });
});

describe('rollDice', () => {
  const rng = () => createRng('dice');
  it.each([
    ['d6', 1, 6],
    ['1d20', 1, 20],
    ['3d6+4', 7, 22],
    ['2d4-1', 1, 7],
    ['20', 1, 20],
    ['4D8', 4, 32],
  ])('%s stays within [%i, %i]', (f, lo, hi) => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const n = rollDice(f, createRng(seed))!;
        return n >= lo && n <= hi;
      }),
      { numRuns: 200 },
    );
  });

  it.each(['', 'd', '0d6', '1d0', '101d6', '1d6*2', 'x'])('rejects %j', (f) => {
    expect(rollDice(f, rng())).toBeNull();
  });
});
