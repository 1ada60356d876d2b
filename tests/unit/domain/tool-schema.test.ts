import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonObject, JsonValue } from '$lib/domain/json';
import { sanitizeToolSchema, type ToolSchemaProvider } from '$lib/domain/tool-schema';

const PROVIDERS: ToolSchemaProvider[] = ['openai', 'anthropic', 'gemini'];

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const clone = (v: JsonObject): JsonObject => JSON.parse(JSON.stringify(v)) as JsonObject;

/** Every object node of a JSON value, to check that no output node is shared with the input. */
function* objectsOf(v: JsonValue): Generator<object> {
  if (typeof v !== 'object' || v === null) return;
  yield v;
  for (const child of Object.values(v)) yield* objectsOf(child);
}

const zodSchema = z.toJSONSchema(
  z.strictObject({
    path: z.string().describe('Workspace path such as work/notes.md.'),
    title: z.string().default('Untitled'),
    mode: z.enum(['overwrite', 'append']).optional(),
    kind: z.literal('note'),
    value: z.union([z.string(), z.strictObject({ ref: z.string() })]),
    count: z.number().nullable(),
    tags: z.array(z.strictObject({ name: z.string(), weight: z.number().optional() })),
    options: z.strictObject({}),
    meta: z.record(z.string(), z.number()),
  }),
) as JsonObject;

describe('sanitizeToolSchema (tools.md §3.4)', () => {
  it('never changes the canonical schema and shares no object with it', () => {
    const canonical = deepFreeze(clone(zodSchema));
    for (const provider of PROVIDERS) {
      const out = sanitizeToolSchema(canonical, provider);
      const inputs = new Set(objectsOf(canonical));
      for (const node of objectsOf(out)) expect(inputs.has(node)).toBe(false);
      out.mutated = true;
    }
    expect(canonical).toEqual(zodSchema);
  });

  it('OpenAI: an unchanged copy', () => {
    expect(sanitizeToolSchema(zodSchema, 'openai')).toEqual(zodSchema);
    expect(sanitizeToolSchema(zodSchema, 'openai')).not.toBe(zodSchema);
  });

  it('Anthropic: zod output loses only $schema', () => {
    const { $schema, ...rest } = zodSchema;
    expect($schema).toBeDefined();
    expect(sanitizeToolSchema(zodSchema, 'anthropic')).toEqual(rest);
  });

  it('Anthropic: $schema and $id go from every sub-schema position, nowhere else', () => {
    const schema: JsonObject = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'urn:tool',
      type: 'object',
      properties: {
        $id: { type: 'string', $id: 'urn:prop' },
        list: { type: 'array', items: { $id: 'urn:item', type: 'string' } },
        pick: { anyOf: [{ $id: 'urn:a', type: 'string' }, { type: 'null' }] },
      },
      $defs: { Node: { $id: 'urn:node', type: 'object' } },
      default: { $id: 'kept: a value, not a schema' },
      examples: [{ $schema: 'kept' }],
    };
    expect(sanitizeToolSchema(schema, 'anthropic')).toEqual({
      type: 'object',
      properties: {
        $id: { type: 'string' },
        list: { type: 'array', items: { type: 'string' } },
        pick: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      },
      $defs: { Node: { type: 'object' } },
      default: { $id: 'kept: a value, not a schema' },
      examples: [{ $schema: 'kept' }],
    });
  });

  it('Gemini: real zod output', () => {
    expect(sanitizeToolSchema(zodSchema, 'gemini')).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Workspace path such as work/notes.md.' },
        title: { type: 'string' },
        mode: { type: 'string', enum: ['overwrite', 'append'] },
        kind: { type: 'string' },
        // only an anyOf: no type left
        value: {},
        count: { type: ['number', 'null'] },
        tags: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, weight: { type: 'number' } } },
        },
        // nested objects without properties
        options: { type: 'string' },
        meta: { type: 'string', propertyNames: { type: 'string' } },
      },
      required: ['path', 'title', 'kind', 'value', 'count', 'tags', 'options', 'meta'],
    });
  });

  it('Gemini: property names that equal dropped keywords survive', () => {
    const schema: JsonObject = {
      type: 'object',
      title: 'Create note',
      properties: {
        title: { type: 'string', title: 'Title', default: 'Untitled' },
        default: { type: 'boolean', examples: [true] },
        anyOf: { type: 'string', const: 'x' },
        $defs: { type: 'integer' },
        additionalProperties: { type: 'number' },
      },
      required: ['title', 'default', 'anyOf', '$defs', 'additionalProperties'],
      additionalProperties: false,
    };
    expect(sanitizeToolSchema(schema, 'gemini')).toEqual({
      type: 'object',
      properties: {
        title: { type: 'string' },
        default: { type: 'boolean' },
        anyOf: { type: 'string' },
        $defs: { type: 'integer' },
        additionalProperties: { type: 'number' },
      },
      required: ['title', 'default', 'anyOf', '$defs', 'additionalProperties'],
    });
  });

  it('Gemini: descends into every sub-schema position', () => {
    const t = { type: 'string', title: 'gone', default: 'gone' };
    const schema: JsonObject = {
      type: 'object',
      properties: {
        tuple: { type: 'array', items: [t, t], additionalItems: t },
        prefixed: { type: 'array', prefixItems: [t], unevaluatedItems: t, contains: t },
        keys: { type: 'object', properties: { a: t }, propertyNames: t },
        encoded: { type: 'string', contentSchema: t },
        either: { description: 'one of', oneOf: [t], allOf: [t], not: t, if: t, then: t, else: t },
      },
      definitions: { d: t },
      dependencies: { a: ['b'] },
      dependentSchemas: { a: t },
      dependentRequired: { a: ['b'] },
      patternProperties: { '^x': t },
      unevaluatedProperties: false,
    };
    const s = { type: 'string' };
    expect(sanitizeToolSchema(schema, 'gemini')).toEqual({
      type: 'object',
      properties: {
        tuple: { type: 'array', items: [s, s], additionalItems: s },
        prefixed: { type: 'array', prefixItems: [s], unevaluatedItems: s, contains: s },
        keys: { type: 'object', properties: { a: s }, propertyNames: s },
        encoded: { type: 'string', contentSchema: s },
        either: { description: 'one of' },
      },
    });
  });

  it('Gemini: $defs go; a $ref is left as it is', () => {
    const Node = z.object({
      name: z.string(),
      get children() {
        return z.array(Node);
      },
    });
    const schema = z.toJSONSchema(z.strictObject({ tree: Node })) as JsonObject;
    expect(schema.$defs).toBeDefined();
    expect(sanitizeToolSchema(schema, 'gemini')).toEqual({
      type: 'object',
      properties: { tree: { $ref: '#/$defs/__schema0' } },
      required: ['tree'],
    });
  });

  it('Gemini: nested required go, root required is pruned to declared properties', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: {
        a: { type: 'object', properties: { x: { type: 'string' } }, required: ['x', 'ghost'] },
        b: {
          type: 'array',
          items: { type: 'object', properties: { y: { type: 'number' } }, required: ['y'] },
        },
      },
      required: ['a', 'ghost', 'b'],
    };
    expect(sanitizeToolSchema(schema, 'gemini')).toEqual({
      type: 'object',
      properties: {
        a: { type: 'object', properties: { x: { type: 'string' } } },
        b: { type: 'array', items: { type: 'object', properties: { y: { type: 'number' } } } },
      },
      required: ['a', 'b'],
    });
  });

  it.each<[string, JsonObject, JsonObject]>([
    [
      'no declared property',
      { type: 'object', properties: {}, required: ['a'] },
      { type: 'object', properties: {} },
    ],
    ['no properties at all', { type: 'object', required: ['a'] }, { type: 'object' }],
    [
      'an empty list',
      { type: 'object', properties: { a: {} }, required: [] },
      { type: 'object', properties: { a: {} } },
    ],
    [
      'a malformed list',
      { type: 'object', properties: { a: {} }, required: 'a' },
      { type: 'object', properties: { a: {} } },
    ],
  ])('Gemini: root required is removed when it names %s', (_, schema, expected) =>
    expect(sanitizeToolSchema(schema, 'gemini')).toEqual(expected),
  );

  it('Gemini: a nested object without properties becomes a string; the root stays an object', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: {
        bare: { type: 'object', description: 'free-form' },
        empty: { type: 'object', properties: {} },
        list: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } },
        full: { type: 'object', properties: { k: { type: 'object' } } },
      },
    };
    expect(sanitizeToolSchema(schema, 'gemini')).toEqual({
      type: 'object',
      properties: {
        bare: { type: 'string', description: 'free-form' },
        empty: { type: 'string' },
        list: { type: 'array', items: { type: 'string' } },
        full: { type: 'object', properties: { k: { type: 'string' } } },
      },
    });
    expect(sanitizeToolSchema({ type: 'object', properties: {} }, 'gemini')).toEqual({
      type: 'object',
      properties: {},
    });
  });

  it('copies a property named __proto__ as a property', () => {
    const schema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string","title":"t"}},"required":["__proto__"]}',
    ) as JsonObject;
    for (const provider of PROVIDERS) {
      const out = sanitizeToolSchema(schema, provider);
      const props = out.properties as JsonObject;
      expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
      expect(Object.hasOwn(props, '__proto__')).toBe(true);
      expect(out.required).toEqual(['__proto__']);
    }
  });

  it('keeps boolean sub-schemas', () => {
    const schema: JsonObject = { type: 'object', properties: { any: true, never: false } };
    for (const provider of PROVIDERS) expect(sanitizeToolSchema(schema, provider)).toEqual(schema);
  });
});

describe('sanitizeToolSchema properties', () => {
  const keys = fc.constantFrom(
    'type',
    'title',
    'default',
    'description',
    '$schema',
    '$id',
    'anyOf',
    'items',
    'not',
    'required',
    'properties',
    '$defs',
    'additionalProperties',
    'prefixItems',
  );
  const { schema } = fc.letrec<{ schema: JsonValue; node: JsonValue }>((tie) => ({
    schema: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.boolean(),
      fc.dictionary(keys, tie('node'), { maxKeys: 5 }),
    ),
    node: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom('object', 'string', 'x'),
      tie('schema'),
      fc.array(fc.oneof(tie('schema'), fc.string()), { maxLength: 3 }),
      fc.dictionary(fc.oneof(keys, fc.string()), tie('schema'), { maxKeys: 3 }),
    ),
  }));
  const root = schema.filter(
    (s): s is JsonObject => typeof s === 'object' && s !== null && !Array.isArray(s),
  );

  it('leaves the input alone, copies it for OpenAI, and is idempotent', () => {
    fc.assert(
      fc.property(root, fc.constantFrom(...PROVIDERS), (input, provider) => {
        const before = clone(input);
        const once = sanitizeToolSchema(deepFreeze(input), provider);
        expect(input).toEqual(before);
        if (provider === 'openai') expect(once).toEqual(before);
        expect(sanitizeToolSchema(once, provider)).toEqual(once);
      }),
    );
  });
});
