import { BUILTIN_PROFILE_IDS, resolveProfile, type ProfileV5 } from '$lib/domain/profile';
import { builtinToolId } from '$lib/domain/tool-id';
import type { ProfileStore } from '$lib/ports/profiles';
import { eligibility } from './delegation';
import type { ToolSnapshot, Withheld } from './tool-snapshot';

/** A profile by id as runs resolve it: the stored one, else the built-in. */
export async function findProfile(store: ProfileStore, id: string): Promise<ProfileV5 | undefined> {
  return resolveProfile(id, await store.get(id).catch(() => undefined))?.profile;
}

/** Every profile a run could call: the built-ins (or their stored versions) and the stored ones. */
export async function allProfiles(store: ProfileStore): Promise<ProfileV5[]> {
  const { profiles } = await store.list();
  const stored = new Map(profiles.map((p) => [p.id, p]));
  const builtins = BUILTIN_PROFILE_IDS.flatMap((id) => resolveProfile(id, stored.get(id))?.profile ?? []);
  return [...builtins, ...profiles.filter((p) => !BUILTIN_PROFILE_IDS.includes(p.id))];
}

/** What an invocation can do with other agents: the directory it is shown, and the tools it is not given. */
export interface DelegationSurface {
  /** The callable-agent directory, for the end of its instructions; null when it has nobody to call. */
  directory: string | null;
  withheld: Withheld;
  /** It may delegate (it has someone to delegate to). */
  delegates: boolean;
}

const entry = (p: ProfileV5) => {
  const about = (p.delegation.descriptionForAgents ?? p.description ?? '').trim();
  return `- \`${p.id}\`: ${p.displayName}${about ? `. ${about}` : ''}`;
};

/**
 * The callable-agent directory (runtime.md §2.11) of an invocation of `caller`: the agents it may
 * delegate to and hand off to, each with its id, name and what it is for. A tool with nobody to
 * call (or a policy that does not allow it, or a run that cannot hand off) is withheld, with why.
 */
export function delegationSurface(
  profiles: readonly ProfileV5[],
  caller: ProfileV5,
  options: { canHandOff: boolean },
): DelegationSurface {
  const eligible = (purpose: 'subagent' | 'handoff') =>
    profiles.filter((p) => p.id !== caller.id && eligibility(p, caller.id, purpose) === null);
  const delegates = caller.delegation.canDelegate ? eligible('subagent') : [];
  const handoffs = caller.delegation.canHandoff && options.canHandOff ? eligible('handoff') : [];
  const withheld = new Map<
    string,
    { code: 'agent.delegation_policy_denied' | 'agent.handoff_policy_denied'; message: string }
  >();
  if (delegates.length === 0) {
    const message = caller.delegation.canDelegate
      ? 'No agent takes delegated tasks from this profile.'
      : 'This profile does not delegate (its delegation settings).';
    for (const name of ['agent.delegate', 'agent.await'] as const)
      withheld.set(builtinToolId(name), { code: 'agent.delegation_policy_denied', message });
  }
  if (handoffs.length === 0)
    withheld.set(builtinToolId('agent.handoff'), {
      code: 'agent.handoff_policy_denied',
      message: !options.canHandOff
        ? 'This kind of run has one agent: it cannot be handed off.'
        : caller.delegation.canHandoff
          ? 'No agent takes handoffs from this profile.'
          : 'This profile does not hand off (its delegation settings).',
    });
  const sections: string[] = [];
  if (delegates.length)
    sections.push(
      '## Agents you can delegate to',
      'Start a task with `agent_delegate` (agentId and a self-contained brief); it runs in the background in this workspace. Call `agent_await` when you need the result.',
      ...delegates.map(entry),
    );
  if (handoffs.length)
    sections.push(
      ...(sections.length ? [''] : []),
      '## Agents you can hand the run to',
      'To let one of them continue, call `agent_handoff` with a brief; saying that someone will take over does nothing.',
      ...handoffs.map(entry),
    );
  return {
    directory: sections.length ? sections.join('\n') : null,
    withheld,
    delegates: delegates.length > 0,
  };
}

/** The instructions with the directory at their end, when the invocation has a tool to use it. */
export function withDirectory(system: string, surface: DelegationSurface, snapshot: ToolSnapshot): string {
  const uses = ['agent.delegate', 'agent.handoff'].some((n) => snapshot.byToolId.has(builtinToolId(n)));
  return surface.directory && uses ? `${system}\n\n${surface.directory}` : system;
}

/** The instructions with a section (the skills) at their end, when there is one. */
export const withSection = (system: string, section: string | null): string =>
  section ? `${system}\n\n${section}` : system;
