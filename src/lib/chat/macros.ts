import { createRng, hash32 } from './random';

/**
 * SillyTavern macros in character, persona and lorebook text. Names are case-insensitive
 * (`{{Char}}` = `{{char}}`); a macro Hearth does not know is left as written. Evaluation follows
 * SillyTavern's order: legacy `<USER>`/`<BOT>` forms, `{{roll}}`, `{{newline}}`/`{{trim}}`/`{{noop}}`,
 * the named values, `{{reverse:...}}`, `{{// comments}}`, time and date, `{{random}}`, `{{pick}}`.
 * Pure: randomness comes from `seed`, time from `now`.
 */

export interface MacroClock {
  /** Milliseconds since the Unix epoch. */
  epochMs: number;
  /** The person's time zone offset from UTC, in minutes (UTC+2 is 120). */
  utcOffsetMinutes: number;
}

export interface MacroContext {
  /** The persona's name (`{{user}}`, `<USER>`). */
  user: string;
  /** The character's name (`{{char}}`, `<BOT>`, `<CHAR>`). */
  char: string;
  /** The persona's description (`{{persona}}`). */
  persona?: string;
  description?: string;
  personality?: string;
  scenario?: string;
  /** Formatted example messages (`{{mesExamples}}`); `{{mesExamplesRaw}}` gets the raw text. */
  mesExamples?: string;
  mesExamplesRaw?: string;
  /** The model's id (`{{model}}`). */
  model?: string;
  /** Group members' names (`{{group}}`, `<GROUP>`); defaults to `char`. */
  group?: string;
  /** More `{{name}}` values (for example `lastMessage`), names compared case-insensitively. */
  values?: Readonly<Record<string, string>>;
  /** Seeds `{{random}}` and `{{roll}}` (a stream: each occurrence draws the next number). */
  seed: string | number;
  /**
   * Seeds `{{pick}}`, which, as in SillyTavern, gives the same choice for the same text and place
   * every time (use the chat's id). Defaults to `seed`.
   */
  pickSeed?: string | number;
  /** For `{{time}}`, `{{date}}`, `{{weekday}}`, `{{isotime}}`, `{{isodate}}`, `{{time_UTC±N}}`; left as is without. */
  now?: MacroClock;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** Calendar fields of `epochMs` shifted by `offsetMinutes` (read with UTC getters: no host time zone). */
function local(epochMs: number, offsetMinutes: number): Date {
  return new Date(epochMs + offsetMinutes * 60_000);
}

/** `9:05 PM` (moment's `LT` in English). */
function clockTime(d: Date): string {
  const h = d.getUTCHours();
  return `${h % 12 === 0 ? 12 : h % 12}:${pad2(d.getUTCMinutes())} ${h < 12 ? 'AM' : 'PM'}`;
}

/** `September 28, 2024` (moment's `LL` in English). */
const longDate = (d: Date): string => `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;

const isoDate = (d: Date): string =>
  `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;

/** Splits a `{{random}}`/`{{pick}}` list: on `::` if present, else on commas (`\,` escapes one). */
function splitList(list: string): string[] {
  if (list.includes('::')) return list.split('::');
  const mark = '\u0000COMMA\u0000';
  return list
    .replace(/\\,/g, mark)
    .split(',')
    .map((item) => item.trim().replaceAll(mark, ','));
}

export const MAX_DICE = 100;
export const MAX_SIDES = 1_000_000;

/** The total of a dice formula (`d6`, `2d20`, `3d6+4`, `20` = `1d20`), or null when invalid or over the limits. */
export function rollDice(formula: string, rng: () => number): number | null {
  const f = formula.replace(/\s+/g, '');
  const m = /^(\d*)d(\d+)([+-]\d+)?$/i.exec(/^\d+$/.test(f) ? `1d${f}` : f);
  if (!m) return null;
  const count = m[1] === '' ? 1 : Number(m[1]);
  const sides = Number(m[2]);
  if (count < 1 || count > MAX_DICE || sides < 1 || sides > MAX_SIDES) return null;
  let total = Number(m[3] ?? 0);
  for (let i = 0; i < count; i++) total += 1 + Math.floor(rng() * sides);
  return total;
}

export function expandMacros(text: string, ctx: MacroContext): string {
  if (!text) return '';
  const raw = text;
  const char = ctx.char;
  const group = ctx.group ?? char;
  let out = text
    .replace(/<USER>/gi, () => ctx.user)
    .replace(/<BOT>/gi, () => char)
    .replace(/<CHAR>/gi, () => char)
    .replace(/<CHARIFNOTGROUP>/gi, () => group)
    .replace(/<GROUP>/gi, () => group);
  if (!out.includes('{{')) return out;

  const rng = createRng(ctx.seed);
  out = out.replace(/\{\{roll[ :]([^}]+)\}\}/gi, (_, formula: string) => {
    const total = rollDice(formula.trim(), rng);
    return total === null ? '' : String(total);
  });
  out = out
    .replace(/\{\{newline\}\}/gi, '\n')
    .replace(/(?:\r?\n)*\{\{trim\}\}(?:\r?\n)*/gi, '')
    .replace(/\{\{noop\}\}/gi, '');

  const values = new Map<string, string>();
  const named: [string, string | undefined][] = [
    ['user', ctx.user],
    ['char', char],
    ['persona', ctx.persona],
    ['description', ctx.description],
    ['personality', ctx.personality],
    ['scenario', ctx.scenario],
    ['mesexamples', ctx.mesExamples],
    ['mesexamplesraw', ctx.mesExamplesRaw ?? ctx.mesExamples],
    ['model', ctx.model],
    ['group', group],
    ['charifnotgroup', group],
  ];
  for (const [k, v] of named) if (v !== undefined) values.set(k, v);
  // A given value wins: a card field formatted into a template comes in already expanded.
  for (const [k, v] of Object.entries(ctx.values ?? {})) values.set(k.toLowerCase(), v);
  out = out.replace(
    /\{\{([A-Za-z_][\w-]*)\}\}/g,
    (whole, name: string) => values.get(name.toLowerCase()) ?? whole,
  );

  out = out
    .replace(/\{\{reverse:(.+?)\}\}/gi, (_, s: string) => Array.from(s).reverse().join(''))
    .replace(/\{\{\/\/[\s\S]*?\}\}/g, '');

  const now = ctx.now;
  if (now) {
    const d = local(now.epochMs, now.utcOffsetMinutes);
    out = out
      .replace(/\{\{time\}\}/gi, () => clockTime(d))
      .replace(/\{\{date\}\}/gi, () => longDate(d))
      .replace(/\{\{weekday\}\}/gi, () => WEEKDAYS[d.getUTCDay()]!)
      .replace(/\{\{isotime\}\}/gi, () => `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`)
      .replace(/\{\{isodate\}\}/gi, () => isoDate(d))
      .replace(/\{\{time_UTC([-+]\d+)\}\}/gi, (_, h: string) =>
        clockTime(local(now.epochMs, Number(h) * 60)),
      );
  }

  out = out.replace(/\{\{random\s?::?([^}]+)\}\}/gi, (_, list: string) => {
    const items = splitList(list);
    return items[Math.floor(rng() * items.length)] ?? '';
  });
  const pickBase = `${ctx.pickSeed ?? ctx.seed}\u0000${hash32(raw)}`;
  out = out.replace(/\{\{pick\s?::?([^}]+)\}\}/gi, (_, list: string, offset: number) => {
    const items = splitList(list);
    const pick = createRng(`${pickBase}\u0000${offset}`);
    return items[Math.floor(pick() * items.length)] ?? '';
  });
  return out;
}
