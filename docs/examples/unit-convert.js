// A single-module Hearth extension: one file with `export const manifest` and its tools.
// It reaches no network (no `hosts`) and only computes from its arguments.
// Install it from the Extensions page as it is; see docs/extensions.md.

export const manifest = {
  id: 'unit-convert',
  name: 'Unit convert',
  version: '1.0.0',
  description: 'Converts a value between units of length, mass and temperature.',
};

/** Length and mass units, as how many of the quantity's base unit (metre, kilogram) one is. */
const FACTORS = {
  length: {
    mm: 0.001,
    cm: 0.01,
    m: 1,
    km: 1000,
    in: 0.0254,
    ft: 0.3048,
    yd: 0.9144,
    mi: 1609.344,
    nmi: 1852,
  },
  mass: {
    mg: 0.000001,
    g: 0.001,
    kg: 1,
    t: 1000,
    oz: 0.028349523125,
    lb: 0.45359237,
    st: 6.35029318,
  },
};

/** Temperature units, to and from kelvin. */
const TEMPERATURE = {
  C: { toKelvin: (v) => v + 273.15, fromKelvin: (k) => k - 273.15, label: '°C' },
  F: {
    toKelvin: (v) => ((v - 32) * 5) / 9 + 273.15,
    fromKelvin: (k) => ((k - 273.15) * 9) / 5 + 32,
    label: '°F',
  },
  K: { toKelvin: (v) => v, fromKelvin: (k) => k, label: 'K' },
};

const UNITS = [...Object.keys(FACTORS.length), ...Object.keys(FACTORS.mass), ...Object.keys(TEMPERATURE)];

/** Names a model might use instead of the symbols in the schema's enum. */
const ALIASES = {
  millimeter: 'mm',
  millimetre: 'mm',
  centimeter: 'cm',
  centimetre: 'cm',
  meter: 'm',
  metre: 'm',
  kilometer: 'km',
  kilometre: 'km',
  inch: 'in',
  inches: 'in',
  foot: 'ft',
  feet: 'ft',
  yard: 'yd',
  mile: 'mi',
  'nautical mile': 'nmi',
  milligram: 'mg',
  gram: 'g',
  kilogram: 'kg',
  tonne: 't',
  ounce: 'oz',
  pound: 'lb',
  lbs: 'lb',
  stone: 'st',
  celsius: 'C',
  '°c': 'C',
  fahrenheit: 'F',
  '°f': 'F',
  kelvin: 'K',
};

function quantityOf(unit) {
  if (Object.hasOwn(TEMPERATURE, unit)) return 'temperature';
  return Object.hasOwn(FACTORS.length, unit) ? 'length' : 'mass';
}

/** The unit's symbol, or an Error that lists what is accepted. */
function unitOf(raw, field) {
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new Error(`\`${field}\` must be a unit such as "km", "lb" or "C".`);
  const text = raw.trim();
  if (UNITS.includes(text)) return text;
  const lower = text.toLowerCase();
  // "miles", "inches": also try the name without its plural ending.
  const alias = ALIASES[lower] ?? ALIASES[lower.replace(/s$/, '')] ?? ALIASES[lower.replace(/es$/, '')];
  if (alias) return alias;
  const found = UNITS.find((u) => u.toLowerCase() === lower);
  if (found) return found;
  throw new Error(
    `Unknown unit "${text}" in \`${field}\`. Length: ${Object.keys(FACTORS.length).join(', ')}. ` +
      `Mass: ${Object.keys(FACTORS.mass).join(', ')}. Temperature: C, F, K.`,
  );
}

/** `value` rounded to `digits` significant digits (as a number, without exponent noise). */
const round = (value, digits) => Number(value.toPrecision(digits));

/** Exported too, so a test can import the module and call it (see docs/extensions.md, "Testing"). */
export function convert(value, from, to) {
  const quantity = quantityOf(from);
  if (quantityOf(to) !== quantity)
    throw new Error(
      `Cannot convert ${from} (${quantity}) to ${to} (${quantityOf(to)}): both units must measure the same quantity.`,
    );
  if (quantity !== 'temperature') return (value * FACTORS[quantity][from]) / FACTORS[quantity][to];
  const kelvin = TEMPERATURE[from].toKelvin(value);
  if (kelvin < 0)
    throw new Error(
      `${value} ${TEMPERATURE[from].label} is below absolute zero (${round(TEMPERATURE[from].fromKelvin(0), 6)} ${TEMPERATURE[from].label}).`,
    );
  return TEMPERATURE[to].fromKelvin(kelvin);
}

hearth.registerTool({
  name: 'convert_units',
  description:
    'Converts a number from one unit to another. Length: mm, cm, m, km, in, ft, yd, mi, nmi. ' +
    'Mass: mg, g, kg, t (tonne), oz, lb, st. Temperature: C, F, K. Both units must measure the same ' +
    'quantity. Returns the converted value rounded to `digits` significant digits.',
  inputSchema: {
    type: 'object',
    properties: {
      value: { type: 'number', description: 'The value to convert.' },
      from: { type: 'string', enum: UNITS, description: 'The unit of `value`.' },
      to: { type: 'string', enum: UNITS, description: 'The unit to convert to.' },
      digits: {
        type: 'integer',
        minimum: 1,
        maximum: 15,
        description: 'Significant digits of the result (default 6).',
      },
    },
    required: ['value', 'from', 'to'],
    additionalProperties: false,
  },
  contexts: ['chat', 'session'],
  // Hearth does not check arguments against inputSchema: the handler checks what it uses.
  handler(args) {
    const { value, digits = 6 } = args;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new Error(`\`value\` must be a finite number, not ${JSON.stringify(value)}.`);
    if (!Number.isInteger(digits) || digits < 1 || digits > 15)
      throw new Error('`digits` must be a whole number from 1 to 15.');
    const from = unitOf(args.from, 'from');
    const to = unitOf(args.to, 'to');
    const result = round(convert(value, from, to), digits);
    const label = (unit) => TEMPERATURE[unit]?.label ?? unit;
    // Any JSON value: the model reads its JSON text.
    return {
      quantity: quantityOf(from),
      value,
      from,
      to,
      result,
      text: `${value} ${label(from)} = ${result} ${label(to)}`,
    };
  },
});
