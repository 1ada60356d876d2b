import type { SkillScope } from '$lib/domain/skill';
import type { CharacterSummary, ProfileSummary } from '$lib/worker/protocol';

/** The profiles and characters a skill can be put in scope for, as the page loaded them. */
export interface ScopeTargets {
  profiles: ProfileSummary[];
  characters: CharacterSummary[];
}

/** One key per scope, for comparing and for form values. */
export const scopeKey = (s: SkillScope): string =>
  s.kind === 'global'
    ? 'global'
    : s.kind === 'profile'
      ? `profile:${s.profileId}`
      : `character:${s.characterId}`;

/** A scope in words: Global, Profile <id>, Character <name> (its id when it is gone). */
export function describeScope(s: SkillScope, targets: ScopeTargets): string {
  if (s.kind === 'global') return 'Global';
  if (s.kind === 'profile') return `Profile ${s.profileId}`;
  const character = targets.characters.find((c) => c.id === s.characterId);
  return `Character ${character?.name || s.characterId}`;
}

/** A skill's scopes in words, or that it applies nowhere. */
export const describeScopes = (scopes: readonly SkillScope[], targets: ScopeTargets): string =>
  scopes.length ? scopes.map((s) => describeScope(s, targets)).join(', ') : 'Nowhere (no agent sees it)';

/** Whether `scopes` holds `scope`. */
export const hasScope = (scopes: readonly SkillScope[], scope: SkillScope): boolean =>
  scopes.some((s) => scopeKey(s) === scopeKey(scope));

/** Files under `scripts/` are shown and exported, never run by this page (tools.md §16.1). */
export const isScriptPath = (path: string): boolean => path.startsWith('scripts/');

/** `binary, 1,234 bytes`. */
export const binaryLabel = (bytes: number): string => `binary, ${bytes.toLocaleString('en')} bytes`;
