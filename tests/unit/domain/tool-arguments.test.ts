import { describe, expect, it } from 'vitest';
import { invalidArgumentsMessage, normalizeToolArguments, replayArguments } from '$lib/domain/tool-arguments';

describe('normalizeToolArguments', () => {
  it.each([undefined, null, '', '   ', 'null', '{}', {}])('treats %j as no arguments', (wire) => {
    expect(normalizeToolArguments(wire)).toEqual({ kind: 'object', value: {} });
  });

  it('gives the same object for an object and its JSON string', () => {
    const obj = { path: 'work/a.md', line_count: 3 };
    expect(normalizeToolArguments(obj)).toEqual(normalizeToolArguments(JSON.stringify(obj)));
  });

  it.each(['{"path": "work/a', '[1,2]', '42', '"text"', 'true'])('keeps %s verbatim as invalid', (wire) => {
    expect(normalizeToolArguments(wire)).toEqual({ kind: 'invalid', raw: wire });
  });

  it('strips only one layer of string encoding', () => {
    const twice = JSON.stringify(JSON.stringify({ a: 1 }));
    expect(normalizeToolArguments(twice)).toEqual({ kind: 'invalid', raw: twice });
  });

  it('replays invalid arguments as an empty object', () => {
    expect(replayArguments(normalizeToolArguments('[1]'))).toEqual({});
    expect(replayArguments(normalizeToolArguments('{"a":1}'))).toEqual({ a: 1 });
  });

  it('echoes the first 200 characters of the raw text', () => {
    const raw = 'x'.repeat(250);
    const msg = invalidArgumentsMessage(raw);
    expect(msg).toContain('x'.repeat(200) + '…');
    expect(msg).not.toContain('x'.repeat(201));
  });
});
