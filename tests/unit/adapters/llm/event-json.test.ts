import { describe, expect, it } from 'vitest';
import { createEventJsonParser } from '$lib/adapters/llm/event-json';

/** What `JSON.parse` gives, as text that keeps key order and own `__proto__` keys; or its error. */
function plain(data: string): string {
  try {
    return JSON.stringify(JSON.parse(data));
  } catch (e) {
    return `throws ${(e as Error).name}`;
  }
}

/**
 * Parses the events in order and returns each answer the same way, read before the next call;
 * `reused` counts the answers given by an object also given for another event (a known shape).
 */
function parsed(events: readonly string[]): { answers: string[]; reused: number } {
  const parse = createEventJsonParser();
  const given = new Map<unknown, number>();
  const answers = events.map((data) => {
    try {
      const value = parse(data);
      given.set(value, (given.get(value) ?? 0) + 1);
      return JSON.stringify(value);
    } catch (e) {
      return `throws ${(e as Error).name}`;
    }
  });
  let reused = 0;
  for (const times of given.values()) if (times > 1) reused += times;
  return { answers, reused };
}

function expectPlain(events: readonly string[]): number {
  const { answers, reused } = parsed(events);
  expect(answers).toEqual(events.map(plain));
  return reused;
}

const chat = (delta: string) =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":${delta},"finish_reason":null}]}`;
const content = (token: string) => chat(`{"content":${token}}`);

describe('createEventJsonParser', () => {
  it('gives JSON.parse answers for a chat stream and reads the repeated shape without it', () => {
    const texts = [
      'Hel',
      'lo',
      ' wörld',
      ' 日本語',
      ' 😀',
      ' 👩‍💻',
      '',
      ' ',
      'tab\there',
      'q"uote',
      'back\\',
      'line\n',
    ];
    const events = texts.map((t) => content(JSON.stringify(t)));
    // From the third event on the shape is known; the escaped tab is read there too.
    expect(expectPlain(events)).toBe(events.length - 2);
  });

  it('reads tokens written with escapes, whitespace around them or as \\u sequences', () => {
    const tokens = [
      '"a"',
      '"\\u00e9t\\u00E9"',
      '"\\ud83d\\ude00"',
      '"\\"\\\\"',
      ' "spaced" ',
      '"\\/"',
      '"\\b\\f\\n\\r\\t"',
    ];
    expect(expectPlain(['"x"', ...tokens.map(content)])).toBe(tokens.length - 2);
  });

  it('learns a shape whose string has escaped quotes and backslashes before the change', () => {
    const events = [1, 2, 3, 4, 5].map((i) => content(JSON.stringify(`say "hi" \\ ${i}`)));
    expect(expectPlain(events)).toBe(events.length - 2);
  });

  it('gives JSON.parse answers for other values and for garbage in the known place', () => {
    const events = [
      content('"a"'),
      content('"b"'),
      content('5'),
      content('null'),
      content('{"nested":"c"}'),
      content('"a","role":"user"'),
      content('"d"'),
      content('"unterminated'),
      content('"raw\u0001control"'),
      content('"bad \\x escape"'),
      content('""'),
      content('"a" "b"'),
      `${content('"e"')} trailing`,
      content('"f"').slice(0, -1),
      content('"g"'),
    ];
    expectPlain(events);
  });

  it('throws like JSON.parse for garbage, also after learning a shape', () => {
    const events = [content('"a"'), content('"b"'), 'not json', '', content('"c'), content('"d"')];
    const { answers } = parsed(events);
    expect(answers).toEqual(events.map(plain));
    expect(answers.filter((a) => a.startsWith('throws'))).toHaveLength(3);
  });

  it('follows shapes that take turns: text, reasoning and tool-call arguments', () => {
    const delta = [
      (s: string) => chat(`{"content":${JSON.stringify(s)}}`),
      (s: string) => chat(`{"reasoning_content":${JSON.stringify(s)}}`),
      (s: string) => chat(`{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(s)}}}]}`),
      (s: string) => chat(`{"tool_calls":[{"index":1,"function":{"arguments":${JSON.stringify(s)}}}]}`),
      (s: string) =>
        `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(s)}}}`,
      (s: string) => `[${JSON.stringify(s)}, 1]`,
    ];
    const events: string[] = [];
    for (let i = 0; i < 120; i++) events.push(delta[Math.floor(i / 4) % delta.length]!(`part ${i} "é"\n`));
    expect(expectPlain(events)).toBeGreaterThan(0);
  });

  it('does not take a token for the value when a later duplicate key overrides it', () => {
    const events = ['{"c":"a1","c":"y"}', '{"c":"a2","c":"y"}', '{"c":"a3","c":"y"}', '{"c":"a4","c":"z"}'];
    expectPlain(events);
    const later = ['{"c":"y","c":"a1"}', '{"c":"y","c":"a2"}', '{"c":"y","c":"a3"}', '{"c":"q","c":"a3"}'];
    later.push('{"c":"y","c":"a5"}');
    expect(expectPlain(later)).toBe(2);
  });

  it('keeps own __proto__ keys as JSON.parse does and never sets a prototype', () => {
    const events = ['{"__proto__":"a"}', '{"__proto__":"b"}', '{"__proto__":"c"}', '{"__proto__":{"x":"d"}}'];
    events.push('{"__proto__":{"x":"e"}}', '{"__proto__":{"x":"f"}}');
    expectPlain(events);
    const parse = createEventJsonParser();
    for (const data of events) expect(Object.getPrototypeOf(parse(data))).toBe(Object.prototype);
  });

  it('is not fooled by the probe string in the data', () => {
    const probe = JSON.stringify('\u0000hearth-probe\u0000');
    const events = [
      `{"a":${probe},"b":"x1"}`,
      `{"a":${probe},"b":"x2"}`,
      `{"a":${probe},"b":"x3"}`,
      `{"b":"x1","b":${probe}}`,
      `{"b":"x2","b":${probe}}`,
      `{"b":"x3","b":${probe}}`,
      `{"b":${probe}}`,
      `{"b":"x4"}`,
      `{"b":"x5"}`,
      // The event's own token is the probe, and a duplicate key overrides it.
      `{"c":"x1","c":${probe}}`,
      `{"c":${probe},"c":${probe}}`,
      `{"c":"x3","c":${probe}}`,
    ];
    expectPlain(events);
  });

  it('learns nothing from changes outside one string and from roots that are not objects', () => {
    const events = [
      '{"n":1,"c":"a"}',
      '{"n":2,"c":"b"}',
      '{"n":3,"c":"c"}',
      '"s1"',
      '"s2"',
      '"s3"',
      '1',
      '2',
    ];
    expect(expectPlain(events)).toBe(0);
  });

  it('gives JSON.parse answers for random edits of recent events', () => {
    let seed = 12345;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const alphabet = ['a', 'é', '"', '\\', ',', ':', '{', '}', '[', ']', ' ', '0', 'n', 'u', '😀'];
    const events: string[] = [content('"start"')];
    for (let i = 0; i < 3000; i++) {
      const base = events[Math.max(0, events.length - 1 - Math.floor(random() * 6))]!;
      const at = Math.floor(random() * base.length);
      const cut = Math.floor(random() * 3);
      const insert = random() < 0.7 ? alphabet[Math.floor(random() * alphabet.length)]! : '';
      events.push(
        random() < 0.3 ? content(JSON.stringify(`t${i}`)) : base.slice(0, at) + insert + base.slice(at + cut),
      );
    }
    const reused = expectPlain(events);
    expect(reused).toBeGreaterThan(100);
  });
});
