/**
 * `JSON.parse` for the events of one stream, faster when events repeat a shape: a chat stream
 * sends `{"id":…,"choices":[{"delta":{"content":"Hi"}}]}` thousands of times with only the text
 * changed. When an event is the text of a recent event with one string token replaced, only
 * that token is read and its value is set into the object kept for that shape.
 *
 * The answer is always what `JSON.parse` gives (a garbage event throws its SyntaxError). A shape
 * is learnt from an event that differs from the one before inside one string token, as the text
 * before the token (`head`) and after it (`tail`), and only where `JSON.parse(head + probe +
 * tail)` has the probe string at a place where the event itself has the token's string: the
 * token is then the value at that place (not a key, nor a value a later duplicate key
 * overrides), and `head + value + tail` for any JSON value differs from it only there.
 *
 * The object returned for a shape is the same object each time, changed: use it before the next
 * call and keep no part of it.
 */
export type EventJsonParser = (data: string) => unknown;

interface Shape {
  head: string;
  tail: string;
  root: unknown;
  parent: Record<string, unknown>;
  key: string;
}

const MAX_SHAPES = 4;
const PROBE = '\u0000hearth-probe\u0000';
const PROBE_JSON = JSON.stringify(PROBE);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export function createEventJsonParser(): EventJsonParser {
  const shapes: Shape[] = [];
  let previous = '';
  return (data) => {
    for (let i = 0; i < shapes.length; i++) {
      const shape = shapes[i]!;
      const start = shape.head.length;
      const end = data.length - shape.tail.length;
      // `slice` and `===` compare in bulk; `startsWith` walks character by character.
      if (end - start < 2 || data.slice(end) !== shape.tail || data.slice(0, start) !== shape.head) continue;
      const value = valueAt(data, start, end);
      if (value === undefined) continue;
      shape.parent[shape.key] = value;
      if (i > 0) shapes.unshift(...shapes.splice(i, 1));
      previous = data;
      return shape.root;
    }
    const value: unknown = JSON.parse(data);
    const shape = learn(previous, data, value);
    if (shape) {
      shapes.unshift(shape);
      if (shapes.length > MAX_SHAPES) shapes.pop();
    }
    previous = data;
    return value;
  };
}

/** The JSON value `text[start, end)` stands for, or undefined when it is not one. */
function valueAt(text: string, start: number, end: number): unknown {
  const last = end - 1;
  // The usual case, a string without escapes, needs no parse.
  if (text.charCodeAt(start) === QUOTE && text.charCodeAt(last) === QUOTE) {
    let i = start + 1;
    for (; i < last; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE || c === BACKSLASH || c < 0x20) break;
    }
    if (i === last) return text.slice(start + 1, last);
  }
  try {
    return JSON.parse(text.slice(start, end)) as unknown;
  } catch {
    return undefined;
  }
}

function learn(previous: string, data: string, value: unknown): Shape | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const n = Math.min(previous.length, data.length);
  let same = 0;
  while (same < n && previous.charCodeAt(same) === data.charCodeAt(same)) same++;
  let sameEnd = 0;
  while (
    sameEnd < n - same &&
    previous.charCodeAt(previous.length - 1 - sameEnd) === data.charCodeAt(data.length - 1 - sameEnd)
  )
    sameEnd++;
  // The string token around the first difference, if the difference ends inside it.
  let open = same - 1;
  while (open >= 0 && (data.charCodeAt(open) !== QUOTE || escapedAt(data, open))) open--;
  if (open < 0) return undefined;
  let close = open + 1;
  for (; close < data.length; close++) {
    const c = data.charCodeAt(close);
    if (c === BACKSLASH) close++;
    else if (c === QUOTE) break;
  }
  if (close >= data.length || data.length - sameEnd > close + 1) return undefined;

  const head = data.slice(0, open);
  const tail = data.slice(close + 1);
  let root: unknown;
  let original: unknown;
  try {
    root = JSON.parse(head + PROBE_JSON + tail);
    original = JSON.parse(data.slice(open, close + 1));
  } catch {
    return undefined;
  }
  const path = pathTo(root, PROBE);
  if (!path || original === PROBE || at(value, path) !== original) return undefined;
  const parent = at(root, path.slice(0, -1)) as Record<string, unknown>;
  return { head, tail, root, parent, key: path[path.length - 1]! };
}

function escapedAt(text: string, i: number): boolean {
  let slashes = 0;
  while (i - 1 - slashes >= 0 && text.charCodeAt(i - 1 - slashes) === BACKSLASH) slashes++;
  return slashes % 2 === 1;
}

/**
 * The keys leading to a value equal to `target`. A value under an own `__proto__` key is never
 * found (reading that key gives the prototype), so a shape never sets one.
 */
function pathTo(root: unknown, target: string): string[] | undefined {
  if (root === target) return [];
  if (typeof root !== 'object' || root === null) return undefined;
  for (const key of Object.keys(root)) {
    const rest = pathTo((root as Record<string, unknown>)[key], target);
    if (rest) return [key, ...rest];
  }
  return undefined;
}

function at(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
