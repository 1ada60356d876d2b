/**
 * Why this tab cannot use the database, as the person is told. IndexedDB runs an upgrade in one
 * transaction, so a failed one leaves the data as the previous version left it.
 */
export interface DatabaseProblem {
  kind: 'newer_version' | 'updated_elsewhere' | 'upgrade_failed' | 'open_failed';
  message: string;
}

export const NEWER_VERSION_MESSAGE =
  'A newer version of Hearth is open in another tab, or was used in this browser before, and upgraded ' +
  'your data. This tab runs an older version and has left the data alone: reload to use the newer one.';

export const UPDATED_ELSEWHERE_MESSAGE = 'Hearth was updated in another tab — reload to continue.';
