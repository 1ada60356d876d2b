import type { ProfileScope, ProfileV5 } from '$lib/domain/profile';

type Delegation = ProfileV5['delegation'];

/** The callers field as typed: comma-separated profile ids, `*` for any agent; empty is `['*']`. */
export function parseCallers(text: string): string[] {
  const ids = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return ids.length ? ids : ['*'];
}

export const formatCallers = (callers: readonly string[]): string => callers.join(', ');

/** Whether two caller lists say the same (the input keeps what was typed while they do). */
export const sameCallers = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((id, i) => id === b[i]);

/** `a`, `a and b`, `a, b and c`. */
const joinWords = (words: readonly string[]): string =>
  words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;

const callersText = (callers: readonly string[]): string =>
  callers.length === 0 || callers.includes('*') ? 'any agent' : `only ${joinWords(callers)}`;

/**
 * The profile's delegation policy as one plain sentence: who may give it work and how, from
 * whom it accepts it, and what it may pass on. The Session profile may only delegate.
 */
export function delegationSummary(d: Delegation, scope: ProfileScope): string {
  if (scope === 'session')
    return d.canDelegate
      ? 'The Session agent can delegate tasks to other agents; it cannot hand off the run or be called by them.'
      : 'The Session agent does all its work itself.';
  const own = [d.canDelegate && 'delegate tasks', d.canHandoff && 'hand off the run'].filter(
    (s): s is string => typeof s === 'string',
  );
  const modes = [
    d.allowAsSubagent && 'give this profile tasks',
    d.allowAsHandoffTarget && 'hand it the run',
  ].filter((s): s is string => typeof s === 'string');
  if (d.callable && modes.length) {
    const from = `it accepts work from ${callersText(d.allowedCallers)}`;
    return own.length
      ? `Other agents can ${joinWords(modes)}; ${from}, and it can ${joinWords(own)} itself.`
      : `Other agents can ${joinWords(modes)}; ${from}.`;
  }
  return own.length
    ? `This profile works only when run directly; it can ${joinWords(own)}.`
    : 'This profile works only when run directly.';
}
