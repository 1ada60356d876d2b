import { CHAT_ROOTS, SESSION_ROOTS } from '../workspace-roots';
import type { ToolScope } from '../tool-scope';

/** The built-in Chat profile, used when a chat run names no profile (runtime.md §3.1, §3.5). */
export const DEFAULT_WRITER_ID = 'default-writer';

/**
 * The one Session profile, shared by every session (D13). Hearth keeps the profile JSON in
 * the spec's schema-5 form (no Hearth-only fields, so exports stay portable) and derives the
 * profile's scope from this reserved id instead of storing a `scope` field.
 */
export const SESSION_PROFILE_ID = 'session';

/** Where a profile runs: a Chat run (a character reply) or a Session run. */
export type ProfileScope = ToolScope;

export const profileScope = (id: string): ProfileScope => (id === SESSION_PROFILE_ID ? 'session' : 'chat');

/**
 * The roots a profile may name in `workspace.visibleRoots`/`writableRoots` (tools.md §12.2):
 * Chat runs use `output/ scratch/ plan/ summaries/ persist/`, Session runs `work/ tmp/`.
 * Profiles only narrow this universe. The read-only mounts (`tool-results/`, `skills/`) are
 * never profile roots: the runtime always mounts them.
 */
export const rootUniverse = (scope: ProfileScope): readonly string[] =>
  scope === 'session' ? SESSION_ROOTS : CHAT_ROOTS;
