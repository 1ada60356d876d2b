import { getContext, setContext } from 'svelte';
import { SvelteMap } from 'svelte/reactivity';
import type { HearthClient } from '$lib/client/hearth';

const KEY = Symbol('profile-names');

/** A profile's display name by its id; the id itself until the list is read (or for a deleted profile). */
export type ProfileName = (id: string) => string;

/**
 * Reads the profiles' display names once for a page and gives them to its delegation views
 * (the live "Delegated tasks" list, the run tree): people see "Researcher", not `new-profile`.
 */
export function provideProfileNames(client: HearthClient): ProfileName {
  const names = new SvelteMap<string, string>();
  client.profiles.list().then(
    (r) => {
      for (const p of r.profiles) names.set(p.id, p.displayName);
    },
    () => {},
  );
  const name: ProfileName = (id) => names.get(id) ?? id;
  setContext(KEY, name);
  return name;
}

export const getProfileName = (): ProfileName => getContext<ProfileName | undefined>(KEY) ?? ((id) => id);
