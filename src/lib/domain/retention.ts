import { hearthError, type HearthError } from './errors';
import { err, ok, type Result } from './result';
import type { RunId, RunStatus, RunTarget } from './run';

/**
 * What finished runs keep (runtime.md §1.17.6, adapted to Sessions and chats). Terminal runs,
 * Session runs and chat replies together, are counted newest first: the newest `keepFullRuns`
 * keep everything, as long as they are younger than `maxAgeDays` and their files together fit in
 * `maxFullMB`; the newest `keepJournalRuns` younger than `maxAgeDays` keep their journal; the
 * others keep only their record. Conversation messages and chat messages are never touched.
 */
export interface RetentionPolicy {
  /** Runs that keep their stored files (model responses, tool arguments and results, checkpoints). */
  keepFullRuns: number;
  /** Runs that keep their journal (the event log the run view replays). */
  keepJournalRuns: number;
  /** Runs that finished more than this many days ago keep only their record; 0: no age limit. */
  maxAgeDays: number;
  /**
   * The files of the runs that keep everything, together, in MB; past it the older ones lose
   * theirs first. 0: no size limit.
   */
  maxFullMB: number;
  /** Applied by Hearth itself after runs finish and when it starts, not only from Settings. */
  automatic: boolean;
}

/**
 * Hearth prunes by itself (runtime.md's `autoPruneEnabled=false` is a desktop default; a
 * browser's quota is smaller and a person who chats daily would otherwise fill it): a year of 50
 * replies a day stays within a few hundred MB (docs/performance.md).
 */
export const DEFAULT_RETENTION: RetentionPolicy = {
  keepFullRuns: 20,
  keepJournalRuns: 100,
  maxAgeDays: 90,
  maxFullMB: 100,
  automatic: true,
};
export const RETENTION_MAX = 10_000;
export const MAX_AGE_DAYS = 3650;
export const MAX_FULL_MB = 100_000;
export const DAY_MS = 86_400_000;

export type RetentionField = Exclude<keyof RetentionPolicy, 'automatic'>;

/** Field-level problems, for forms: `{ keepFullRuns: 'Use a whole number from 0 to 10,000.' }`. */
export type RetentionProblems = Partial<Record<RetentionField, string>>;

const range = (max: number) => `a whole number from 0 to ${max.toLocaleString('en')}`;
export const RETENTION_LIMITS: Record<RetentionField, number> = {
  keepFullRuns: RETENTION_MAX,
  keepJournalRuns: RETENTION_MAX,
  maxAgeDays: MAX_AGE_DAYS,
  maxFullMB: MAX_FULL_MB,
};

/** Checks each field (whole, within its range) and that `keepFullRuns` is not larger than `keepJournalRuns`. */
export function retentionProblems(input: Record<RetentionField, unknown>): RetentionProblems {
  const problems: RetentionProblems = {};
  for (const field of Object.keys(RETENTION_LIMITS) as RetentionField[]) {
    const v = input[field];
    const fits = typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= RETENTION_LIMITS[field];
    if (!fits) problems[field] = `Use ${range(RETENTION_LIMITS[field])}.`;
  }
  if (
    !problems.keepFullRuns &&
    !problems.keepJournalRuns &&
    (input.keepFullRuns as number) > (input.keepJournalRuns as number)
  ) {
    problems.keepFullRuns = 'Cannot be more than the runs that keep their journal.';
  }
  return problems;
}

/**
 * A valid policy, or `settings.invalid` naming every problem. Unknown keys are dropped; a field a
 * policy saved by an earlier version lacks takes its default.
 */
export function parseRetentionPolicy(input: unknown): Result<RetentionPolicy, HearthError> {
  if (typeof input !== 'object' || input === null) {
    return err(hearthError('settings.invalid', 'Retention settings must be an object.'));
  }
  const given = input as Record<string, unknown>;
  const field = <K extends keyof RetentionPolicy>(k: K): unknown => given[k] ?? DEFAULT_RETENTION[k];
  const values = {
    keepFullRuns: field('keepFullRuns'),
    keepJournalRuns: field('keepJournalRuns'),
    maxAgeDays: field('maxAgeDays'),
    maxFullMB: field('maxFullMB'),
  };
  const problems = Object.entries(retentionProblems(values)).map(
    ([f, message]) => `${FIELD_LABELS[f as RetentionField]}: ${message}`,
  );
  const automatic = field('automatic');
  if (typeof automatic !== 'boolean') problems.push('Automatic: must be true or false.');
  if (problems.length) return err(hearthError('settings.invalid', problems.join(' ')));
  return ok({ ...(values as Record<RetentionField, number>), automatic: automatic as boolean });
}

export const FIELD_LABELS: Record<RetentionField, string> = {
  keepFullRuns: 'Runs that keep everything',
  keepJournalRuns: 'Runs that keep their journal',
  maxAgeDays: 'Days a run keeps more than its record',
  maxFullMB: 'MB the runs kept in full may hold',
};

/** What retention removed from a run; the record stays so the run view can say so. */
export type PrunedLevel = 'artifacts' | 'journal';

export interface RetentionItem {
  runId: RunId;
  target: RunTarget;
  status: RunStatus;
  createdAt: number;
  /** 1-based position among finished runs, newest first. */
  position: number;
  /** What the run keeps afterwards: `artifacts` removed, or `journal` (and artifacts) removed. */
  prune: PrunedLevel;
  /** Which limit it is past: the count of runs, their age, or the size of the newer runs' files. */
  because: 'count' | 'age' | 'size';
  /**
   * Its files go (not already removed): a Session run's `runs/<runId>/` and `tool-results/<runId>/`
   * in the session workspace; a chat reply's own run workspace (the message it committed, its
   * swipes and the persistent state it published live with the chat and stay).
   */
  deleteArtifacts: boolean;
  /** Its journal events go (not already removed). */
  deleteJournal: boolean;
}

export interface RetentionPlan {
  policy: RetentionPolicy;
  /** Finished runs considered. */
  terminalRuns: number;
  /** Runs not finished (working, or left unfinished by a closed tab): left alone. */
  activeRuns: number;
  /** Runs that lose something, newest first. */
  items: RetentionItem[];
}

/**
 * Persistent states of chats that no message or swipe refers to any more (deleted messages and
 * swipes leave them behind): what they hold, and the chats left alone (a reply in progress or
 * unfinished there).
 */
export interface UnreferencedStates {
  states: number;
  files: number;
  bytes: number;
  busyChats: number;
}

/** What a run's removable parts hold. */
export interface Footprint {
  files: number;
  bytes: number;
  events: number;
}

export type MeasuredItem = RetentionItem & Footprint;

export interface RetentionPreview {
  plan: RetentionPlan;
  items: MeasuredItem[];
  totals: Footprint & { runs: number };
}

export type RetentionOutcome =
  | (MeasuredItem & { outcome: 'pruned' })
  | (RetentionItem & { outcome: 'skipped'; reason: string })
  | (MeasuredItem & { outcome: 'failed'; error: HearthError });

export interface RetentionResult {
  outcomes: RetentionOutcome[];
  /** What was actually freed (pruned runs only). */
  totals: Footprint & { runs: number };
  skipped: number;
  failed: number;
}

/** What the last automatic pass did, for the Storage section. */
export interface AutoRetentionReport {
  at: number;
  /** Runs that lost something, and the files, bytes and events freed. */
  runs: number;
  bytes: number;
  events: number;
  /** Persistent states no message used any more. */
  states: number;
  failed: number;
  error?: HearthError;
}
