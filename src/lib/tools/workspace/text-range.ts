import { countChars } from '$lib/domain/text-metrics';

/** One line of a text: `[start, end)` are UTF-16 offsets; `end` includes the line's `\n`. */
export interface Line {
  text: string;
  start: number;
  end: number;
}

/** Splits on `\n` only; a final `\n` ends the last line rather than starting an empty one. */
export function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl + 1;
    lines.push({ text: text.slice(start, nl < 0 ? end : nl), start, end });
    start = end;
  }
  return lines;
}

/** `<n> | <line>` with numbers right-aligned to the width of the last one (tools.md §13). */
export function renderNumbered(lines: readonly string[], firstLineNo: number): string {
  const width = String(firstLineNo + lines.length - 1).length;
  return lines.map((line, i) => `${String(firstLineNo + i).padStart(width)} | ${line}`).join('\n');
}

/**
 * The text between character positions `[startChar, startChar + maxChars)`, where characters are
 * Unicode scalar values; also returns the end position actually reached.
 */
export function sliceChars(
  text: string,
  startChar: number,
  maxChars: number,
): { text: string; endChar: number } {
  let index = 0;
  let char = 0;
  let from = text.length;
  for (const ch of text) {
    if (char === startChar) from = index;
    if (char === startChar + maxChars) return { text: text.slice(from, index), endChar: char };
    index += ch.length;
    char++;
  }
  return { text: startChar < char ? text.slice(from) : '', endChar: Math.max(char, startChar) };
}

/** Character position (Unicode scalar values) of a UTF-16 offset. */
export const charOffset = (text: string, index: number): number => countChars(text.slice(0, index));
