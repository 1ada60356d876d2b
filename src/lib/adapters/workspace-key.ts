import type { WorkspaceError } from '$lib/ports/workspace';
import { err, ok, type Result } from '$lib/domain/result';

/** Starts with no dot, so `.` and `..` cannot appear. */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * Splits a workspace key (`sessions/<id>`, `chats/<id>`) into storage segments. Keys come from
 * the runtime, never from a model, so a bad key is a system failure rather than a path error.
 */
export function workspaceKeySegments(key: string): Result<string[], WorkspaceError> {
  const segments = key.split('/');
  if (!segments.every((s) => SEGMENT.test(s))) {
    return err({ code: 'workspace.storage_failed', message: `Invalid workspace key \`${key}\`.` });
  }
  return ok(segments);
}
