import { z } from 'zod';
import { err, ok, type Result } from '$lib/domain/result';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { requiredString } from '../workspace/params';

export const MAX_DICE = 100;
export const MAX_SIDES = 1_000_000;
export const MAX_ABS_MODIFIER = 1_000_000;

const NAME = 'dice.roll';

const parameters = z.strictObject({
  formula: requiredString('formula').describe(
    'Dice notation without spaces: `<count>d<sides>` with an optional `+<n>` or `-<n>`, e.g. `1d20`, `d6`, `3d6+2`, `2d10-1`; a bare number `20` means `1d20`.',
  ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `Roll dice for an explicit tabletop, roleplay or chance check, and get each die and the total.
Use this tool whenever a roll decides an outcome, and never invent a result yourself. Up to ${MAX_DICE} dice of up to ${MAX_SIDES.toLocaleString('en-US')} sides, plus or minus a modifier of at most ${MAX_ABS_MODIFIER.toLocaleString('en-US')}.`;

export const diceRollTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: roll,
});

export interface DiceFormula {
  /** `<n>d<s>`, then `+k` or `-k` when the modifier is not 0. */
  normalized: string;
  dice: number;
  sides: number;
  modifier: number;
  min: number;
  max: number;
}

// Rust's `char::is_whitespace` / `str::trim` (Unicode White_Space), which the grammar follows.
const WHITESPACE = /\p{White_Space}/u;
const trimWhitespace = (s: string) => s.replace(/^\p{White_Space}+|\p{White_Space}+$/gu, '');
const DIGITS = /^[0-9]+$/;
const U64_MAX = 2n ** 64n - 1n;
const I64_MAX = 2n ** 63n - 1n;

/**
 * The dice grammar of tools.md §13.17: no whitespace anywhere; all digits `N` means `1dN`;
 * otherwise (ASCII-lowercased) exactly one `d`, an optional count before it (default 1), the
 * sides after it, then an optional `+k`/`-k`. Counts and sides are positive integers without
 * leading zeros. Limits: ≤100 dice, ≤1,000,000 sides, |modifier| ≤1,000,000. Errors read as
 * the reference implementation's.
 */
export function parseDiceFormula(raw: string): Result<DiceFormula, string> {
  const trimmed = trimWhitespace(raw);
  if (trimmed === '') return err('formula is required');
  if (WHITESPACE.test(trimmed)) return err('formula must not contain spaces');
  const formula = DIGITS.test(trimmed) ? `1d${trimmed}` : trimmed.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const d = formula.indexOf('d');
  if (d < 0) return err('formula must use dice notation such as 1d20 or 3d6+2');
  if (formula.includes('d', d + 1)) return err('formula must contain only one d separator');

  const countPart = formula.slice(0, d);
  const afterD = formula.slice(d + 1);
  const sign = afterD.search(/[+-]/);
  const sidesPart = sign < 0 ? afterD : afterD.slice(0, sign);
  const modifierPart = sign < 0 ? null : afterD.slice(sign);

  const dice = countPart === '' ? ok(1n) : positive(countPart, 'dice count');
  if (!dice.ok) return dice;
  const sides = positive(sidesPart, 'side count');
  if (!sides.ok) return sides;
  const modifier = modifierPart === null ? ok(0n) : parseModifier(modifierPart);
  if (!modifier.ok) return modifier;

  if (dice.value > BigInt(MAX_DICE)) return err(`dice count must be <= ${MAX_DICE}`);
  if (sides.value > BigInt(MAX_SIDES)) return err(`side count must be <= ${MAX_SIDES}`);
  const abs = modifier.value < 0n ? -modifier.value : modifier.value;
  if (abs > BigInt(MAX_ABS_MODIFIER)) return err(`modifier absolute value must be <= ${MAX_ABS_MODIFIER}`);

  const n = Number(dice.value);
  const s = Number(sides.value);
  const k = Number(modifier.value);
  return ok({
    normalized: `${n}d${s}${k > 0 ? `+${k}` : k < 0 ? String(k) : ''}`,
    dice: n,
    sides: s,
    modifier: k,
    min: n + k,
    max: n * s + k,
  });
}

function positive(part: string, label: string): Result<bigint, string> {
  if (!DIGITS.test(part) || part.startsWith('0')) return err(`${label} must be a positive integer`);
  const value = BigInt(part);
  return value > U64_MAX ? err(`${label} is too large`) : ok(value);
}

function parseModifier(part: string): Result<bigint, string> {
  const digits = part.slice(1);
  if (!DIGITS.test(digits)) return err('modifier must be an integer');
  const value = BigInt(digits);
  if (value > I64_MAX) return err('modifier is too large');
  return ok(part.startsWith('-') ? -value : value);
}

/** `Rolled 3d6+2: 4 + 1 + 6 + 2 = 13.`, or `Rolled 1d20: 14.` when there is nothing to add up. */
export function renderRoll(formula: DiceFormula, rolls: readonly number[], total: number): string {
  let expression = rolls.join(' + ');
  if (formula.modifier > 0) expression += ` + ${formula.modifier}`;
  else if (formula.modifier < 0) expression += ` - ${-formula.modifier}`;
  return expression === String(total)
    ? `Rolled ${formula.normalized}: ${total}.`
    : `Rolled ${formula.normalized}: ${expression} = ${total}.`;
}

/** A uniform number in [0, 1) with 53 random bits. */
function cryptoUnit(): number {
  const words = new Uint32Array(2);
  crypto.getRandomValues(words);
  return (words[0]! * 2 ** 21 + (words[1]! >>> 11)) / 2 ** 53;
}

async function roll(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  if (trimWhitespace(input.formula) === '') return failure('tool.invalid_arguments', 'formula is required');
  const parsed = parseDiceFormula(input.formula);
  if (!parsed.ok) {
    return failure(
      'dice.invalid_formula',
      `Invalid dice formula \`${trimWhitespace(input.formula)}\`: ${parsed.error}. Write it like \`1d20\`, \`d6\`, \`3d6+2\` or \`2d10-1\`, without spaces.`,
    );
  }
  const formula = parsed.value;
  const random = ctx.random ?? cryptoUnit;
  // Uniform over 1..sides; a source outside [0, 1) (out of contract) still lands on a face.
  const rolls = Array.from({ length: formula.dice }, () =>
    Math.max(1, Math.min(formula.sides, 1 + Math.floor(random() * formula.sides))),
  );
  const total = rolls.reduce((a, b) => a + b, 0) + formula.modifier;
  return success(renderRoll(formula, rolls, total), {
    structured: {
      formula: formula.normalized,
      rolls,
      modifier: formula.modifier,
      total,
      min: formula.min,
      max: formula.max,
    },
  });
}
