import { parseRegexKey } from '$lib/chat/keys';
import type { SelectiveLogic, WorldInfoPosition, PromptRole } from '$lib/chat/lorebook';

/** Labels and conversions for the lorebook entry editor. */

export const LOGIC_LABELS: Record<SelectiveLogic, string> = {
  and_any: 'AND ANY: any secondary key matches too',
  and_all: 'AND ALL: every secondary key matches too',
  not_any: 'NOT ANY: no secondary key matches',
  not_all: 'NOT ALL: not every secondary key matches',
};

export const POSITION_LABELS: Record<WorldInfoPosition, string> = {
  before: 'Before the character definitions',
  after: 'After the character definitions',
  an_top: "Top of the author's note",
  an_bottom: "Bottom of the author's note",
  depth: 'In the chat, at a depth',
  em_top: 'Before the example messages',
  em_bottom: 'After the example messages',
  outlet: 'Outlet (only where its name is used)',
};

export const ROLE_LABELS: Record<PromptRole, string> = {
  system: 'System',
  user: 'User',
  assistant: 'Assistant',
};

/** One key per line; blank lines dropped. */
export const parseKeys = (text: string): string[] =>
  text
    .split('\n')
    .map((k) => k.trim())
    .filter((k) => k !== '');

/** Keys written like a regex (`/…/flags`) that do not compile: they are matched as plain text. */
export function brokenRegexKeys(keys: readonly string[]): string[] {
  return keys.filter((k) => /^\/.+\/[a-z]*$/s.test(k) && parseRegexKey(k) === null);
}

export const regexKeyCount = (keys: readonly string[]): number =>
  keys.filter((k) => parseRegexKey(k) !== null).length;

/** An optional boolean (null: the global setting) as a select value, and back. */
export type TriState = 'global' | 'yes' | 'no';
export const triOf = (v: boolean | null): TriState => (v === null ? 'global' : v ? 'yes' : 'no');
export const boolOf = (v: string): boolean | null => (v === 'global' ? null : v === 'yes');

/** A number input's value, or `fallback` when it is empty or not a number. */
export function numberOf(value: string, fallback: number): number {
  const n = Number(value);
  return value.trim() === '' || !Number.isFinite(n) ? fallback : n;
}

/** An optional number input: empty is null. */
export function optionalNumberOf(value: string): number | null {
  const n = Number(value);
  return value.trim() === '' || !Number.isFinite(n) ? null : n;
}

/** A short title for an entry in the list: its memo, else its keys. */
export function entryTitle(e: { comment: string; keys: readonly string[]; uid: number }): string {
  if (e.comment.trim()) return e.comment.trim();
  if (e.keys.length > 0) return e.keys.join(', ');
  return `Entry ${e.uid}`;
}
