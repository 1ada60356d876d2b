import { hearthError, type HearthError } from './errors';

/** Where a person frees space: the same advice wherever a write did not fit. */
export const FREE_SPACE_ADVICE =
  'To free space, open Settings → Storage and apply shorter retention settings (old runs and their files are deleted), or export what you want to keep and then delete it.';

/**
 * The failure of a write that did not fit in the browser's storage for Hearth. `what` says what
 * was not saved, as a verb phrase: `save the run journal`, `save the file work/x.md`.
 */
export const quotaExceeded = (what: string): HearthError =>
  hearthError(
    'storage.quota_exceeded',
    `Could not ${what}: this browser's storage for Hearth is full, so it was not saved. ${FREE_SPACE_ADVICE}`,
  );

/** The share of the quota in use from which Hearth warns that storage is nearly full. */
export const NEARLY_FULL = 0.9;

export const isNearlyFull = (usage: number, quota: number): boolean =>
  quota > 0 && usage / quota >= NEARLY_FULL;

/** One session or chat and what it keeps: its messages (their stored JSON) and its files. */
export interface StorageUser {
  kind: 'session' | 'chat';
  id: string;
  label: string;
  messageBytes: number;
  files: number;
  bytes: number;
}

/** What takes the space, the largest first. */
export interface StorageUse {
  users: StorageUser[];
}
