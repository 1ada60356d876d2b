import { describe, expect, it } from 'vitest';
import { diceRollTool, parseDiceFormula, renderRoll } from '$lib/tools/dice/roll';
import type { ToolContext } from '$lib/tools/tool';
import { chatToolContext } from '../../../support/chat-context';
import { argumentErrors, callTool, memoryToolContext } from '../../../support/tool-context';

/** A random source that yields the faces asked for on dice of `sides` sides. */
const faces = (sides: number, ...values: number[]) => {
  let i = 0;
  return () => (values[i++ % values.length]! - 1 + 0.5) / sides;
};

async function roll(formula: unknown, random?: () => number) {
  const ctx: ToolContext = await chatToolContext(undefined, random ? { random } : {});
  return callTool(diceRollTool, { formula }, ctx);
}

describe('dice.roll descriptor', () => {
  it('is a builtin for Chat and Session runs with its fixed call name', () => {
    expect(diceRollTool.id).toBe('builtin:dice.roll');
    expect(diceRollTool.callName).toBe('dice_roll');
    expect(diceRollTool.facts.scopes).toEqual(['chat', 'session']);
  });

  it.each([
    [{}, ['formula is required']],
    [{ formula: 20 }, ['formula must be a string']],
    [{ formula: '1d6', seed: 1 }, ['Unrecognized key: "seed"']],
  ])('rejects %j', (args, errors) => {
    expect(argumentErrors(diceRollTool, args)).toEqual(errors);
  });

  it('treats a blank formula as missing (tool.invalid_arguments)', async () => {
    expect(await roll('   ')).toMatchObject({
      isError: true,
      errorCode: 'tool.invalid_arguments',
      content: 'formula is required',
    });
  });
});

describe('the dice grammar (tools.md §13.17)', () => {
  it.each([
    // [formula, normalized, dice, sides, modifier, min, max]
    ['20', '1d20', 1, 20, 0, 1, 20],
    ['1d20', '1d20', 1, 20, 0, 1, 20],
    ['d6-2', '1d6-2', 1, 6, -2, -1, 4],
    ['3D6+4', '3d6+4', 3, 6, 4, 7, 22],
    ['D20', '1d20', 1, 20, 0, 1, 20],
    ['2d10-1', '2d10-1', 2, 10, -1, 1, 19],
    ['1d20+0', '1d20', 1, 20, 0, 1, 20],
    ['1d20-0', '1d20', 1, 20, 0, 1, 20],
    ['1d20+05', '1d20+5', 1, 20, 5, 6, 25],
    ['  4d4  ', '4d4', 4, 4, 0, 4, 16],
    ['1d1', '1d1', 1, 1, 0, 1, 1],
    ['100d1000000', '100d1000000', 100, 1_000_000, 0, 100, 100_000_000],
    ['1d6+1000000', '1d6+1000000', 1, 6, 1_000_000, 1_000_001, 1_000_006],
    ['1d6-1000000', '1d6-1000000', 1, 6, -1_000_000, -999_999, -999_994],
    ['1000000', '1d1000000', 1, 1_000_000, 0, 1, 1_000_000],
  ])('%j → %s', (formula, normalized, dice, sides, modifier, min, max) => {
    expect(parseDiceFormula(formula)).toEqual({
      ok: true,
      value: { normalized, dice, sides, modifier, min, max },
    });
  });

  it.each([
    ['', 'formula is required'],
    ['1d20 + 4', 'formula must not contain spaces'],
    ['1 d20', 'formula must not contain spaces'],
    ['1d\u00a020', 'formula must not contain spaces'],
    ['1d20\u3000+1', 'formula must not contain spaces'],
    ['abc', 'formula must use dice notation such as 1d20 or 3d6+2'],
    ['-5', 'formula must use dice notation such as 1d20 or 3d6+2'],
    ['+5', 'formula must use dice notation such as 1d20 or 3d6+2'],
    ['1Ｄ20', 'formula must use dice notation such as 1d20 or 3d6+2'],
    ['1dd20', 'formula must contain only one d separator'],
    ['1d20d4', 'formula must contain only one d separator'],
    ['d', 'side count must be a positive integer'],
    ['0d6', 'dice count must be a positive integer'],
    ['01d6', 'dice count must be a positive integer'],
    ['xd6', 'dice count must be a positive integer'],
    ['+1d6', 'dice count must be a positive integer'],
    ['1d0', 'side count must be a positive integer'],
    ['0', 'side count must be a positive integer'],
    ['020', 'side count must be a positive integer'],
    ['1d06', 'side count must be a positive integer'],
    ['1d', 'side count must be a positive integer'],
    ['1d-5', 'side count must be a positive integer'],
    ['1d20x', 'side count must be a positive integer'],
    ['1d20++4', 'modifier must be an integer'],
    ['1d20+', 'modifier must be an integer'],
    ['1d20-', 'modifier must be an integer'],
    ['1d20+4+2', 'modifier must be an integer'],
    ['1d20+-4', 'modifier must be an integer'],
    ['1d20+4x', 'modifier must be an integer'],
    ['101d6', 'dice count must be <= 100'],
    ['1d1000001', 'side count must be <= 1000000'],
    ['1d6+1000001', 'modifier absolute value must be <= 1000000'],
    ['1d6-1000001', 'modifier absolute value must be <= 1000000'],
    ['18446744073709551615d6', 'dice count must be <= 100'],
    ['18446744073709551616d6', 'dice count is too large'],
    ['1d99999999999999999999', 'side count is too large'],
    ['1d6+9223372036854775807', 'modifier absolute value must be <= 1000000'],
    ['1d6+9223372036854775808', 'modifier is too large'],
  ])('%j is invalid: %s', (formula, reason) => {
    expect(parseDiceFormula(formula)).toEqual({ ok: false, error: reason });
  });

  it('reports an invalid formula as dice.invalid_formula with the reason and a fix', async () => {
    const out = await roll(' 1d20 + 4 ');
    expect(out).toMatchObject({ isError: true, errorCode: 'dice.invalid_formula' });
    expect(out.content).toBe(
      'Invalid dice formula `1d20 + 4`: formula must not contain spaces. Write it like `1d20`, `d6`, `3d6+2` or `2d10-1`, without spaces.',
    );
    expect((await roll('101d6')).errorCode).toBe('dice.invalid_formula');
  });
});

describe('rolling', () => {
  it.each([
    ['1d20', [14], 'Rolled 1d20: 14.', 14],
    ['20', [1], 'Rolled 1d20: 1.', 1],
    ['3d6+4', [2, 5, 6], 'Rolled 3d6+4: 2 + 5 + 6 + 4 = 17.', 17],
    ['d6-2', [3], 'Rolled 1d6-2: 3 - 2 = 1.', 1],
    ['2d6', [3, 3], 'Rolled 2d6: 3 + 3 = 6.', 6],
    ['1d1+2', [1], 'Rolled 1d1+2: 1 + 2 = 3.', 3],
    ['1d20+0', [7], 'Rolled 1d20: 7.', 7],
    ['1d6-6', [6], 'Rolled 1d6-6: 6 - 6 = 0.', 0],
  ])('%j with faces %j → %s', async (formula, rolls, content, total) => {
    const sides = parseDiceFormula(formula);
    if (!sides.ok) throw new Error(sides.error);
    const out = await roll(formula, faces(sides.value.sides, ...rolls));
    expect(out).toEqual({
      content,
      structured: {
        formula: sides.value.normalized,
        rolls,
        modifier: sides.value.modifier,
        total,
        min: sides.value.min,
        max: sides.value.max,
      },
      isError: false,
      resourceRefs: [],
      images: [],
      effects: [],
    });
  });

  it('maps [0, 1) uniformly onto 1..sides, and keeps an out-of-range source on a face', async () => {
    const at = async (formula: string, value: number) =>
      ((await roll(formula, () => value)).structured as { rolls: number[] }).rolls;
    expect(await at('1d6', 0)).toEqual([1]);
    expect(await at('1d6', 1 / 6 - 1e-12)).toEqual([1]);
    expect(await at('1d6', 1 / 6)).toEqual([2]);
    expect(await at('1d6', 0.999_999_999)).toEqual([6]);
    expect(await at('2d1000000', 0.5)).toEqual([500_001, 500_001]);
    expect(await at('1d6', 1)).toEqual([6]);
    expect(await at('1d6', -0.5)).toEqual([1]);
  });

  it('renders a single die without modifier as the bare total', () => {
    const f = parseDiceFormula('1d20');
    if (!f.ok) throw new Error(f.error);
    expect(renderRoll(f.value, [20], 20)).toBe('Rolled 1d20: 20.');
  });

  it('uses a crypto source by default: every face of 1d6 appears, nothing else', async () => {
    const ctx = await memoryToolContext();
    const seen = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const out = await callTool(diceRollTool, { formula: '10d6' }, ctx);
      for (const r of (out.structured as { rolls: number[] }).rolls) seen.add(r);
    }
    expect([...seen].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('rolls up to 100 dice in one call', async () => {
    const out = await roll('100d1000000+1000000', () => 0);
    expect(out.structured).toMatchObject({ total: 100 + 1_000_000, min: 1_000_100, max: 101_000_000 });
    expect((out.structured as { rolls: number[] }).rolls).toHaveLength(100);
  });
});
