import { hearthError, type HearthError } from '../errors';
import { isJsonObject } from '../json';
import { err, ok, type Result } from '../result';
import { migrateProfileDocument } from './migrate';
import type { ProfileProblem } from './problem';
import type { ProfileV5 } from './schema';
import { validateProfile, type ProfileValidationContext } from './validate';

/** The embedded package format (runtime.md §3.6): `{version: 1, items: [{profile, …}]}`. */
export const PROFILE_PACKAGE_VERSION = 1;

export interface ProfilePackage {
  version: typeof PROFILE_PACKAGE_VERSION;
  items: { profile: ProfileV5 }[];
}

/**
 * What leaves this device: a `connectionRef` binding names a local connection, so it becomes
 * `{mode: "requiresConfiguration"}` (connection and model id removed); everything else is kept.
 */
export function stripModelBinding(profile: ProfileV5): ProfileV5 {
  const copy = structuredClone(profile);
  if (copy.model.mode === 'connectionRef') copy.model = { mode: 'requiresConfiguration' };
  return copy;
}

export const profilePackage = (profiles: readonly ProfileV5[]): ProfilePackage => ({
  version: PROFILE_PACKAGE_VERSION,
  items: profiles.map((profile) => ({ profile: stripModelBinding(profile) })),
});

/** Export text: one profile as its bare JSON (the file format), several as a package. */
export function exportProfilesJson(profiles: readonly ProfileV5[]): string {
  const value = profiles.length === 1 ? stripModelBinding(profiles[0]!) : profilePackage(profiles);
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Reads import text into the profile documents it holds, undecoded: a package
 * `{version: 1, items: [{profile}]}`, a JSON array of profiles, or one profile. A package with
 * a wrong version, non-array items or an item without an object `profile` is rejected whole.
 */
export function readImportDocuments(text: string): Result<unknown[], HearthError> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return err(
      hearthError('agent.profile_invalid_json', `This is not JSON: ${e instanceof Error ? e.message : e}`),
    );
  }
  if (Array.isArray(json)) return ok(json);
  if (!isJsonObject(json) || !Object.hasOwn(json, 'items')) return ok([json]);
  if (json.version !== PROFILE_PACKAGE_VERSION) {
    return err(
      hearthError(
        'agent.profile_package_invalid',
        `Profile package version ${JSON.stringify(json.version)} is not supported; expected ${PROFILE_PACKAGE_VERSION}.`,
      ),
    );
  }
  const items = json.items;
  if (!Array.isArray(items))
    return err(
      hearthError('agent.profile_package_invalid', 'The profile package\'s "items" must be an array.'),
    );
  const documents: unknown[] = [];
  for (const [i, item] of items.entries()) {
    if (!isJsonObject(item) || !isJsonObject(item.profile)) {
      return err(
        hearthError('agent.profile_package_invalid', `Item ${i + 1} of the package has no profile object.`),
      );
    }
    documents.push(item.profile);
  }
  return ok(documents);
}

/** One imported profile: migrated like every other boundary, then validated. */
export function decodeImportedProfile(
  json: unknown,
  ctx: ProfileValidationContext,
): Result<ProfileV5, ProfileProblem[]> {
  const decoded = migrateProfileDocument(json);
  if (!decoded.ok) return decoded;
  const problems = validateProfile(decoded.value, ctx);
  return problems.length === 0 ? decoded : err(problems);
}
