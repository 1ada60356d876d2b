import { isHearthError, type HearthError } from '$lib/domain/errors';
import { HearthFailure } from '$lib/domain/errors';

/** A readable line for anything a client call rejected with. */
export function describeError(e: unknown): HearthError {
  if (e instanceof HearthFailure) return e.error;
  if (isHearthError(e)) return e;
  return { code: 'agent.internal_error', message: e instanceof Error ? e.message : String(e) };
}
