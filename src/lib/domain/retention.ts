import { hearthError, type HearthError } from './errors';
import { err, ok, type Result } from './result';
import type { RunId, RunStatus, RunTarget } from './run';

/**
 * How many finished runs keep what (runtime.md §1.17.6, adapted to Sessions and chats). Terminal
 * runs, Session runs and chat replies together, are counted newest first: the newest
 * `keepFullRuns` keep everything; the newest `keepJournalRuns` keep their journal; older runs keep
 * only their record. Conversation messages and chat messages are never touched.
 */
export interface RetentionPolicy {
  /** Runs that keep their stored files (model responses, tool arguments and results, checkpoints). */
  keepFullRuns: number;
  /** Runs that keep their journal (the event log the run view replays). */
  keepJournalRuns: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = { keepFullRuns: 20, keepJournalRuns: 100 };
export const RETENTION_MAX = 10_000;

export type RetentionField = keyof RetentionPolicy;

/** Field-level problems, for forms: `{ keepFullRuns: 'Use a whole number from 0 to 10,000.' }`. */
export type RetentionProblems = Partial<Record<RetentionField, string>>;

const RANGE = `a whole number from 0 to ${RETENTION_MAX.toLocaleString('en')}`;

/** Checks each field (0..10000, whole) and that `keepFullRuns` is not larger than `keepJournalRuns`. */
export function retentionProblems(input: {
  keepFullRuns: unknown;
  keepJournalRuns: unknown;
}): RetentionProblems {
  const problems: RetentionProblems = {};
  const inRange = (v: unknown): v is number =>
    typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= RETENTION_MAX;
  if (!inRange(input.keepFullRuns)) problems.keepFullRuns = `Use ${RANGE}.`;
  if (!inRange(input.keepJournalRuns)) problems.keepJournalRuns = `Use ${RANGE}.`;
  if (
    !problems.keepFullRuns &&
    !problems.keepJournalRuns &&
    (input.keepFullRuns as number) > (input.keepJournalRuns as number)
  ) {
    problems.keepFullRuns = 'Cannot be more than the runs that keep their journal.';
  }
  return problems;
}

/** A valid policy, or `settings.invalid` naming every problem. Unknown keys are dropped. */
export function parseRetentionPolicy(input: unknown): Result<RetentionPolicy, HearthError> {
  if (typeof input !== 'object' || input === null) {
    return err(hearthError('settings.invalid', 'Retention settings must be an object.'));
  }
  const { keepFullRuns, keepJournalRuns } = input as Record<string, unknown>;
  const problems = retentionProblems({ keepFullRuns, keepJournalRuns });
  const entries = Object.entries(problems);
  if (entries.length) {
    return err(
      hearthError(
        'settings.invalid',
        entries.map(([field, message]) => `${FIELD_LABELS[field as RetentionField]}: ${message}`).join(' '),
      ),
    );
  }
  return ok({ keepFullRuns: keepFullRuns as number, keepJournalRuns: keepJournalRuns as number });
}

export const FIELD_LABELS: Record<RetentionField, string> = {
  keepFullRuns: 'Runs that keep everything',
  keepJournalRuns: 'Runs that keep their journal',
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
