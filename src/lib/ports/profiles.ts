import type { ProfileV5 } from '$lib/domain/profile';

/** A stored profile that could not be read (runtime.md §3.1); listing skips it and reports it. */
export interface ProfileIssue {
  profileId: string;
  /** `invalidJson`: the stored text is not JSON. `invalidProfile`: JSON that is no valid profile. */
  kind: 'invalidJson' | 'invalidProfile';
  message: string;
}

export interface StoredProfiles {
  profiles: ProfileV5[];
  issues: ProfileIssue[];
}

/**
 * The saved profiles (built-ins are not stored). Every read goes through `migrateProfile`, and
 * rows of an older schema are written back at schema 5. Database failures reject with a
 * HearthFailure (`storage.failed`).
 */
export interface ProfileStore {
  /** Every readable profile, ordered by id; unreadable rows become issues, never a failure. */
  list(): Promise<StoredProfiles>;
  /** Every stored id, readable or not. */
  ids(): Promise<string[]>;
  /** The profile, or undefined; an unreadable row rejects with its decoding code. */
  get(id: string): Promise<ProfileV5 | undefined>;
  /** Saves the profile; with `replaces`, also deletes that id in the same transaction (a rename). */
  put(profile: ProfileV5, options?: { replaces?: string }): Promise<void>;
  delete(id: string): Promise<void>;
}
