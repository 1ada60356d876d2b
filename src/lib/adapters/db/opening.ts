import Dexie from 'dexie';
import {
  NEWER_VERSION_MESSAGE,
  UPDATED_ELSEWHERE_MESSAGE,
  type DatabaseProblem,
} from '$lib/domain/database-problem';

const reason = (e: unknown) => {
  const inner = (e as { inner?: unknown } | null)?.inner;
  const cause = inner instanceof Error ? inner : e;
  return cause instanceof Error ? cause.message : String(e);
};

/** The version IndexedDB holds the database at, where the browser tells without opening it. */
async function installedVersion(name: string): Promise<number | undefined> {
  const factory = Dexie.dependencies.indexedDB;
  if (typeof factory?.databases !== 'function') return undefined;
  return (await factory.databases()).find((d) => d.name === name)?.version;
}

class NewerDatabase extends Error {}

/**
 * Opens the database this tab's code declares, and keeps watching it. A database a newer Hearth
 * already upgraded is closed before anything reads it (Dexie would open it at that version, with
 * this version's idea of its rows); when a newer Hearth in another tab asks to upgrade it, this
 * tab lets go at once so that upgrade is never blocked. Each is told through `tell`, and then
 * every use of `db` fails (it is closed and never reopens by itself). The open starts before
 * this returns, so queries made meanwhile wait for it.
 */
export async function openWatched(
  db: Dexie,
  tell: (problem: DatabaseProblem) => void,
): Promise<DatabaseProblem | null> {
  const stop = (problem: DatabaseProblem) => {
    db.close();
    tell(problem);
    return problem;
  };
  // Dexie keeps IndexedDB's version at ten times its own.
  const declared = Math.round(db.verno * 10);
  // Listeners run newest first; `false` keeps Dexie's own from closing with reopening allowed.
  db.on('versionchange', () => {
    stop({ kind: 'updated_elsewhere', message: UPDATED_ELSEWHERE_MESSAGE });
    return false;
  });
  // Before any waiting query runs: failing here fails the open.
  db.on('ready', () => {
    if (db.backendDB().version > declared) throw new NewerDatabase();
  });
  try {
    await db.open();
    return null;
  } catch (e) {
    const name = (e as { name?: unknown } | null)?.name;
    if (
      e instanceof NewerDatabase ||
      (e as { inner?: unknown }).inner instanceof NewerDatabase ||
      name === 'VersionError'
    ) {
      return stop({ kind: 'newer_version', message: NEWER_VERSION_MESSAGE });
    }
    // A failed upgrade is rolled back: the database is still at the version it was.
    const installed = await installedVersion(db.name).catch(() => undefined);
    if (installed !== undefined && installed > 0 && installed < declared) {
      return stop({
        kind: 'upgrade_failed',
        message:
          `Hearth could not upgrade your data to this version: ${reason(e)}. Nothing was changed or ` +
          'deleted: your data is as the previous version left it, and this version does not use it ' +
          'until the upgrade succeeds. Reload to try again; export a backup from the previous version ' +
          'if it keeps failing.',
      });
    }
    return stop({
      kind: 'open_failed',
      message: `Hearth could not open its database: ${reason(e)}. Nothing was deleted. Reload to try again.`,
    });
  }
}
