import { describe, expect, it } from 'vitest';
import { defaultDelegation, type ProfileV5 } from '$lib/domain/profile';
import {
  delegationSummary,
  formatCallers,
  parseCallers,
  sameCallers,
} from '$lib/ui/profiles/delegation-summary';

const policy = (change: Partial<ProfileV5['delegation']>): ProfileV5['delegation'] => ({
  ...defaultDelegation(),
  ...change,
});
const target = { callable: true, allowAsSubagent: true, allowAsHandoffTarget: true };

describe('delegationSummary', () => {
  it('says a profile nobody may call works only when run directly', () => {
    expect(delegationSummary(policy({}), 'chat')).toBe('This profile works only when run directly.');
    expect(delegationSummary(policy({ canDelegate: true }), 'chat')).toBe(
      'This profile works only when run directly; it can delegate tasks.',
    );
    expect(delegationSummary(policy({ canDelegate: true, canHandoff: true }), 'chat')).toBe(
      'This profile works only when run directly; it can delegate tasks and hand off the run.',
    );
  });

  it('says how other agents may give it work, and from whom it takes it', () => {
    expect(delegationSummary(policy(target), 'chat')).toBe(
      'Other agents can give this profile tasks and hand it the run; it accepts work from any agent.',
    );
    expect(delegationSummary(policy({ ...target, allowAsHandoffTarget: false }), 'chat')).toBe(
      'Other agents can give this profile tasks; it accepts work from any agent.',
    );
    expect(
      delegationSummary(
        policy({
          ...target,
          allowAsSubagent: false,
          allowedCallers: ['default-writer', 'planner', 'editor'],
        }),
        'chat',
      ),
    ).toBe('Other agents can hand it the run; it accepts work from only default-writer, planner and editor.');
    expect(
      delegationSummary(policy({ ...target, canDelegate: true, allowedCallers: ['planner'] }), 'chat'),
    ).toBe(
      'Other agents can give this profile tasks and hand it the run; it accepts work from only planner, and it can delegate tasks itself.',
    );
  });

  it('treats a callable profile without a way to be used as not callable', () => {
    expect(delegationSummary(policy({ callable: true }), 'chat')).toBe(
      'This profile works only when run directly.',
    );
    expect(delegationSummary(policy({ allowAsSubagent: true }), 'chat')).toBe(
      'This profile works only when run directly.',
    );
  });

  it('gives the Session profile only delegation', () => {
    expect(delegationSummary(policy({ canDelegate: true }), 'session')).toBe(
      'The Session agent can delegate tasks to other agents; it cannot hand off the run or be called by them.',
    );
    expect(delegationSummary(policy({}), 'session')).toBe('The Session agent does all its work itself.');
  });
});

describe('Accepts work from', () => {
  it('reads comma-separated ids, trimmed; nothing means any agent', () => {
    expect(parseCallers(' planner ,editor,, ')).toEqual(['planner', 'editor']);
    expect(parseCallers('*')).toEqual(['*']);
    expect(parseCallers('')).toEqual(['*']);
    expect(parseCallers(' , ')).toEqual(['*']);
  });

  it('shows the list as it reads it back', () => {
    expect(formatCallers(['planner', 'editor'])).toBe('planner, editor');
    expect(parseCallers(formatCallers(['planner', 'editor']))).toEqual(['planner', 'editor']);
    expect(sameCallers(parseCallers('planner, '), ['planner'])).toBe(true);
    expect(sameCallers(['planner'], ['editor'])).toBe(false);
  });
});
