import { HearthFailure, hearthError } from '$lib/domain/errors';
import type { JsonValue } from '$lib/domain/json';
import {
  describeProblem,
  migrateProfileDocument,
  PROFILE_SCHEMA_VERSION,
  type ProfileV5,
} from '$lib/domain/profile';
import { isJsonObject } from '$lib/domain/json';
import type { ProfileIssue, ProfileStore, StoredProfiles } from '$lib/ports/profiles';
import type { HearthDatabase, ProfileRow } from './database';
import { storageFailure } from '../storage-failure';

type Decoded = { ok: true; profile: ProfileV5; stale: boolean } | { ok: false; issue: ProfileIssue };

/**
 * A stored row: the document as JSON (or, tolerated, as JSON text). Decoding goes through the
 * one migration; a row whose key differs from its document's id is unreadable, like a file
 * whose name and id differ.
 */
function decodeRow(row: ProfileRow): Decoded {
  const issue = (kind: ProfileIssue['kind'], message: string): Decoded => ({
    ok: false,
    issue: { profileId: row.id, kind, message },
  });
  let document: unknown = row.document;
  if (typeof document === 'string') {
    try {
      document = JSON.parse(document);
    } catch (e) {
      return issue('invalidJson', `The stored profile is not JSON: ${e instanceof Error ? e.message : e}`);
    }
  }
  const decoded = migrateProfileDocument(document);
  if (!decoded.ok) return issue('invalidProfile', decoded.error.map(describeProblem).join('; '));
  if (decoded.value.id !== row.id) {
    return issue(
      'invalidProfile',
      `The profile is stored as "${row.id}" but its id is "${decoded.value.id}".`,
    );
  }
  const version = isJsonObject(document) ? document.schemaVersion : undefined;
  return { ok: true, profile: decoded.value, stale: version !== PROFILE_SCHEMA_VERSION };
}

const rowOf = (profile: ProfileV5): ProfileRow => ({
  id: profile.id,
  document: JSON.parse(JSON.stringify(profile)) as JsonValue,
});

async function guarded<T>(what: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof HearthFailure) throw e;
    throw new HearthFailure(storageFailure(what, e));
  }
}

/** Profiles in the Dexie `profiles` table, keyed by id, holding the schema-5 document. */
export class DexieProfileStore implements ProfileStore {
  constructor(private readonly db: HearthDatabase) {}

  list = (): Promise<StoredProfiles> =>
    guarded('list profiles', async () => {
      const rows = await this.db.profiles.orderBy('id').toArray();
      const out: StoredProfiles = { profiles: [], issues: [] };
      const upgraded: ProfileRow[] = [];
      for (const row of rows) {
        const decoded = decodeRow(row);
        if (!decoded.ok) {
          out.issues.push(decoded.issue);
          continue;
        }
        out.profiles.push(decoded.profile);
        if (decoded.stale) upgraded.push(rowOf(decoded.profile));
      }
      // Older schemas persist at the current version once read (runtime.md §3.3).
      if (upgraded.length > 0) await this.db.profiles.bulkPut(upgraded);
      return out;
    });

  ids = (): Promise<string[]> =>
    guarded('list profiles', async () => await this.db.profiles.toCollection().primaryKeys());

  get = (id: string): Promise<ProfileV5 | undefined> =>
    guarded('read the profile', async () => {
      const row = await this.db.profiles.get(id);
      if (!row) return undefined;
      const decoded = decodeRow(row);
      if (!decoded.ok) {
        const code =
          decoded.issue.kind === 'invalidJson' ? 'agent.profile_invalid_json' : 'agent.profile_invalid';
        throw new HearthFailure(
          hearthError(code, `Profile "${id}" cannot be read. ${decoded.issue.message}`),
        );
      }
      if (decoded.stale) await this.db.profiles.put(rowOf(decoded.profile));
      return decoded.profile;
    });

  put = (profile: ProfileV5, options: { replaces?: string } = {}): Promise<void> =>
    guarded('save the profile', () =>
      this.db.transaction('rw', this.db.profiles, async () => {
        await this.db.profiles.put(rowOf(profile));
        if (options.replaces !== undefined && options.replaces !== profile.id) {
          await this.db.profiles.delete(options.replaces);
        }
      }),
    );

  delete = (id: string): Promise<void> => guarded('delete the profile', () => this.db.profiles.delete(id));
}
