import { hearthError, type HearthError } from '$lib/domain/errors';
import { quotaExceeded } from '$lib/domain/storage-quota';

const QUOTA = 'QuotaExceededError';

/**
 * Whether `e` says the origin's storage quota is used up: a `QuotaExceededError` DOMException
 * (IndexedDB, OPFS writes and closes), Dexie's `QuotaExceededError`, or an error wrapping one
 * (Dexie's `AbortError` and `BulkError` keep the cause in `inner` and `failures`).
 */
export function isQuotaExceeded(e: unknown, depth = 0): boolean {
  if (typeof e !== 'object' || e === null || depth > 4) return false;
  const { name, inner, cause, failures } = e as {
    name?: unknown;
    inner?: unknown;
    cause?: unknown;
    failures?: unknown;
  };
  if (name === QUOTA) return true;
  const wrapped = [inner, cause, ...(Array.isArray(failures) ? failures : [])];
  return wrapped.some((w) => isQuotaExceeded(w, depth + 1));
}

/** A storage adapter's failure to `what` (a verb phrase: `save the session`), coded by its cause. */
export function storageFailure(what: string, e: unknown): HearthError {
  if (isQuotaExceeded(e)) return quotaExceeded(what);
  return hearthError('storage.failed', `Could not ${what}: ${e instanceof Error ? e.message : String(e)}`);
}
