import type { ProfileV5 } from '$lib/domain/profile';
import type { Ids } from '$lib/ports/clock';
import type { ProfileStore } from '$lib/ports/profiles';
import type { InvocationDeps } from './invocation-runner';
import { alwaysAllowIn } from './profile-approvals';

type ProfileDeps = Pick<
  InvocationDeps,
  'clock' | 'retry' | 'sleep' | 'providers' | 'alwaysAllow' | 'newId' | 'images' | 'inlineCharLimit'
>;

/**
 * What every agent of a run, Session or Chat, takes from its profile and the runtime's services:
 * its retries, "always allow", the inline limit of external results, the clock, ids and images.
 * The targets add where it works (model, gateway, workspace, roots), its capabilities and control.
 */
export function profileDeps(
  services: Pick<InvocationDeps, 'clock' | 'sleep' | 'providers' | 'images'> & {
    profiles: ProfileStore;
    ids: Ids;
  },
  profile: ProfileV5,
): ProfileDeps {
  return {
    clock: services.clock,
    retry: profile.run.modelRetry,
    sleep: services.sleep,
    providers: services.providers,
    alwaysAllow: alwaysAllowIn(services.profiles, profile.id),
    newId: (prefix) => services.ids.contentId(prefix),
    images: services.images,
    inlineCharLimit: profile.tools.externalResultInlineCharLimit,
  };
}
