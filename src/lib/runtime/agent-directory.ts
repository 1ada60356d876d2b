import { BUILTIN_PROFILE_IDS, resolveProfile, type ProfileV5 } from '$lib/domain/profile';
import type { ProfileStore } from '$lib/ports/profiles';
import { builtinToolId } from '$lib/domain/tool-id';
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

/**
 * The callable-agent directory (runtime.md §2.11): the agents `caller` may delegate to, each
 * with its id, name and what it is for, as a section of the caller's instructions. Null when
 * there is none (the delegation tools are then withheld).
 */
export function agentDirectory(profiles: readonly ProfileV5[], caller: ProfileV5): string | null {
  const entries = profiles.filter(
    (p) => p.id !== caller.id && eligibility(p, caller.id, 'subagent') === null,
  );
  if (entries.length === 0) return null;
  return [
    '## Agents you can delegate to',
    'Start a task with `agent_delegate` (agentId and a self-contained brief); it runs in the background in this workspace. Call `agent_await` when you need the result.',
    ...entries.map((p) => {
      const about = (p.delegation.descriptionForAgents ?? p.description ?? '').trim();
      return `- \`${p.id}\`: ${p.displayName}${about ? `. ${about}` : ''}`;
    }),
  ].join('\n');
}

/** With no agent to call, the delegation tools are withheld (and journaled as such). */
export const NO_DELEGATION: Withheld = new Map(
  (['agent.delegate', 'agent.await'] as const).map((name) => [
    builtinToolId(name),
    {
      code: 'agent.delegation_policy_denied' as const,
      message: 'No agent takes delegated tasks from this profile.',
    },
  ]),
);

/** The instructions with the directory at their end, when the invocation can delegate. */
export function withDirectory(system: string, directory: string | null, snapshot: ToolSnapshot): string {
  const delegates = snapshot.byToolId.has(builtinToolId('agent.delegate'));
  return directory && delegates ? `${system}\n\n${directory}` : system;
}
