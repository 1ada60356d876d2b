import { hearthError, type ErrorCode, type HearthError } from '../errors';

/**
 * One thing wrong with a profile's JSON, like an editor diagnostic: a stable code, where it
 * is (`tools.allow[2]`, `tools.toolDescriptions["builtin:dice.roll"].description`; `''` is the
 * whole profile) and what to do about it.
 */
export interface ProfileProblem {
  code: ErrorCode;
  path: string;
  message: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `['tools', 'allow', 2]` → `tools.allow[2]`; keys that are not identifiers are quoted. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && IDENTIFIER.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

export const problem = (code: ErrorCode, path: string, message: string): ProfileProblem => ({
  code,
  path,
  message,
});

/** A list of problems as one coded error (the first problem's code), for RPC and Result values. */
export function problemsToError(problems: readonly ProfileProblem[]): HearthError {
  const first = problems[0];
  if (!first) return hearthError('agent.profile_invalid', 'The profile is invalid.');
  if (problems.length === 1) return hearthError(first.code, describeProblem(first));
  const lines = problems.map((p) => `- ${describeProblem(p)} (${p.code})`);
  return hearthError(first.code, `The profile has ${problems.length} problems:\n${lines.join('\n')}`);
}

export const describeProblem = (p: ProfileProblem): string =>
  p.path ? `${p.path}: ${p.message}` : p.message;
