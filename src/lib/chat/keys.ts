/**
 * Lorebook key matching, with SillyTavern's rules:
 * - a key written `/pattern/flags` (flags from `gimsuy`) is a regular expression; it ignores the
 *   case and whole-word options (its own flags decide). A pattern with an unescaped `/` inside, or
 *   one that does not compile, is not a regex and is matched as plain text;
 * - otherwise the key is a substring, compared in lower case unless case-sensitive;
 * - whole-word matching applies to one-word keys: the key must be bounded by the start or end of
 *   the text or by a character outside `[A-Za-z0-9_]`; a key with spaces is a plain substring.
 */

const REGEX_KEY = /^\/([\w\W]+?)\/([gimsuy]*)$/;

/** The RegExp a `/pattern/flags` key stands for, or null when the key is plain text. */
export function parseRegexKey(key: string): RegExp | null {
  const m = REGEX_KEY.exec(key);
  if (!m) return null;
  const [, pattern, flags] = m;
  if (/(^|[^\\])\//.test(pattern!)) return null;
  try {
    return new RegExp(pattern!, flags);
  } catch {
    return null;
  }
}

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** Text to scan, with its lower-case form computed once. */
export interface ScanText {
  text: string;
  lower: string;
}

export const scanText = (text: string): ScanText => ({ text, lower: text.toLowerCase() });

export type KeyMatcher = (t: ScanText) => boolean;

/** Compiles keys once per (key, options); a cache lives for one activation. */
export class KeyMatchers {
  #cache = new Map<string, KeyMatcher>();

  get(key: string, caseSensitive: boolean, wholeWords: boolean): KeyMatcher {
    const id = `${caseSensitive ? 1 : 0}${wholeWords ? 1 : 0}${key}`;
    let m = this.#cache.get(id);
    if (!m) {
      m = compileKey(key, caseSensitive, wholeWords);
      this.#cache.set(id, m);
    }
    return m;
  }
}

export function compileKey(key: string, caseSensitive: boolean, wholeWords: boolean): KeyMatcher {
  const rx = parseRegexKey(key);
  if (rx) {
    return (t) => {
      rx.lastIndex = 0;
      return rx.test(t.text);
    };
  }
  const needle = caseSensitive ? key : key.toLowerCase();
  const pick = caseSensitive ? (t: ScanText) => t.text : (t: ScanText) => t.lower;
  if (wholeWords && !/\s/.test(needle)) {
    const bounded = new RegExp(`(?:^|\\W)${escapeRegex(needle)}(?:$|\\W)`);
    return (t) => pick(t).includes(needle) && bounded.test(pick(t));
  }
  return (t) => pick(t).includes(needle);
}
