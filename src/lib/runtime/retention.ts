import { HearthFailure, toHearthError, type HearthError } from '$lib/domain/errors';
import { ok, type Result } from '$lib/domain/result';
import {
  DAY_MS,
  DEFAULT_RETENTION,
  parseRetentionPolicy,
  type Footprint,
  type MeasuredItem,
  type PrunedLevel,
  type RetentionOutcome,
  type RetentionPlan,
  type RetentionPolicy,
  type RetentionPreview,
  type RetentionItem,
  type RetentionResult,
} from '$lib/domain/retention';
import { isTerminal, type RunId, type RunRecord, type RunTarget } from '$lib/domain/run';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Clock } from '$lib/ports/clock';
import type { Journal } from '$lib/ports/journal';
import type { RunStore, SettingsStore } from '$lib/ports/stores';
import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';
import { chatRunWorkspaceKey } from './chats';
import { sessionWorkspaceKey } from './sessions';

export type {
  Footprint,
  MeasuredItem,
  RetentionItem,
  RetentionOutcome,
  RetentionPlan,
  RetentionPreview,
  RetentionResult,
};

/**
 * Retention (runtime.md §1.17.6, adapted): finished runs of Sessions and chats, newest first. The
 * newest `keepFullRuns` keep everything; older ones lose their heavy artifacts (a Session run's
 * `runs/<runId>/` and `tool-results/<runId>/` in the session workspace, a chat reply's whole run
 * workspace); beyond `keepJournalRuns` they also lose their journal. The run record always stays,
 * marked `pruned`. Runs that are not finished are never touched, and neither the session's
 * conversation nor the chat's messages, swipes and persistent states are deleted.
 */

export const RETENTION_KEY = 'retention';
/** The last automatic pass's report (`AutoRetentionReport`). */
export const AUTO_RETENTION_KEY = 'retention.lastAuto';

/** The saved policy; a missing or damaged one reads as the defaults. */
export async function savedRetention(settings: SettingsStore): Promise<RetentionPolicy> {
  const parsed = parseRetentionPolicy(await settings.get<unknown>(RETENTION_KEY));
  return parsed.ok ? parsed.value : { ...DEFAULT_RETENTION };
}

export interface RetentionDeps {
  runs: RunStore;
  journal: Journal;
  workspaces: WorkspaceStore;
  clock: Clock;
}

const newestFirst = (a: RunRecord, b: RunRecord) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** What planning needs besides the runs: the time, and the bytes of files each run still holds. */
export interface PlanContext {
  now: number;
  /**
   * Bytes of each run's artifacts, for the runs that may keep everything (see `fullCandidates`);
   * a run missing here counts as 0. Only read when the policy has a size limit.
   */
  sizes?: ReadonlyMap<RunId, number>;
}

/**
 * Pure: which runs lose what under `policy`. Already-removed parts are not planned again, so a
 * run pruned before appears only if it now loses more. The policy is validated first.
 */
export function planRetention(
  runs: readonly RunRecord[],
  policy: RetentionPolicy,
  context: PlanContext,
): Result<RetentionPlan, HearthError> {
  const valid = parseRetentionPolicy(policy);
  if (!valid.ok) return valid;
  const { keepFullRuns, keepJournalRuns, maxAgeDays, maxFullMB } = valid.value;
  const terminal = runs.filter((r) => isTerminal(r.status)).sort(newestFirst);
  const cap = maxFullMB * 1024 * 1024;
  let used = 0;
  let fits = true;
  const items: RetentionItem[] = [];
  terminal.forEach((run, i) => {
    const old = maxAgeDays > 0 && context.now - run.updatedAt > maxAgeDays * DAY_MS;
    const counted = i < keepFullRuns;
    // The newest runs fill the size budget first; once one does not fit, the older ones lose theirs.
    if (counted && !old && fits && cap > 0 && run.pruned === undefined) {
      used += context.sizes?.get(run.id) ?? 0;
      fits = used <= cap;
    }
    if (counted && !old && fits) return;
    const because: RetentionItem['because'] = old ? 'age' : counted ? 'size' : 'count';
    const prune: PrunedLevel = i < keepJournalRuns && !old ? 'artifacts' : 'journal';
    const deleteArtifacts = run.pruned === undefined;
    const deleteJournal = prune === 'journal' && run.pruned !== 'journal';
    if (!deleteArtifacts && !deleteJournal) return;
    items.push({
      runId: run.id,
      target: run.target,
      status: run.status,
      createdAt: run.createdAt,
      position: i + 1,
      prune,
      because,
      deleteArtifacts,
      deleteJournal,
    });
  });
  return ok({
    policy: valid.value,
    terminalRuns: terminal.length,
    activeRuns: runs.length - terminal.length,
    items,
  });
}

/** Pure: the runs whose artifacts' size the plan weighs (those that may keep everything). */
export function fullCandidates(runs: readonly RunRecord[], policy: RetentionPolicy): RunRecord[] {
  if (policy.maxFullMB === 0) return [];
  return runs
    .filter((r) => isTerminal(r.status))
    .sort(newestFirst)
    .slice(0, policy.keepFullRuns)
    .filter((r) => r.pruned === undefined);
}

/**
 * Pure: a fresh plan narrowed to what a person previewed, so applying never deletes more than
 * they saw: runs not previewed are dropped, and a run previewed as losing only its artifacts
 * keeps its journal even if the fresh plan would remove it.
 */
export function restrictPlan(
  plan: RetentionPlan,
  previewed: readonly { runId: RunId; prune: PrunedLevel }[],
): RetentionPlan {
  const seen = new Map(previewed.map((p) => [p.runId, p.prune]));
  const items: RetentionItem[] = [];
  for (const item of plan.items) {
    const allowed = seen.get(item.runId);
    if (!allowed) continue;
    if (allowed === 'artifacts' && item.prune === 'journal') {
      if (item.deleteArtifacts) items.push({ ...item, prune: 'artifacts', deleteJournal: false });
    } else {
      items.push(item);
    }
  }
  return { ...plan, items };
}

const dir = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new Error(`internal: bad retention path ${raw}`);
  return parsed.value;
};

/** The two directories of a Session run's heavy artifacts in its session workspace. */
export const artifactDirs = (runId: RunId): WorkspacePath[] => [
  dir(`runs/${runId}`),
  dir(`tool-results/${runId}`),
];

/** Files and bytes under `path`, or the whole workspace (a missing directory holds nothing). */
export async function measureDir(
  workspace: Workspace,
  path?: WorkspacePath,
): Promise<{ files: number; bytes: number }> {
  const listed = await workspace.list(path);
  if (!listed.ok) {
    if (listed.error.code === 'workspace.file_not_found') return { files: 0, bytes: 0 };
    throw new HearthFailure(listed.error);
  }
  let files = 0;
  let bytes = 0;
  for (const entry of listed.value) {
    if (entry.kind === 'directory') {
      const inner = await measureDir(workspace, entry.path);
      files += inner.files;
      bytes += inner.bytes;
    } else {
      const stat = await workspace.stat(entry.path);
      if (!stat.ok) throw new HearthFailure(stat.error);
      files += 1;
      bytes += stat.value?.size ?? 0;
    }
  }
  return { files, bytes };
}

/**
 * Where a run's artifacts are: directories of the session workspace it shares, or a chat
 * reply's own workspace, deleted whole.
 */
type Artifacts =
  | { kind: 'dirs'; workspace: Workspace; dirs: WorkspacePath[] }
  | { kind: 'workspace'; key: string; workspace: Workspace };

/** Opens each workspace once. */
function artifactsOf(workspaces: WorkspaceStore) {
  const open = new Map<string, Promise<Workspace>>();
  const opened = (key: string): Promise<Workspace> => {
    let ws = open.get(key);
    if (!ws) {
      ws = workspaces.open(key).then((r) => {
        if (!r.ok) throw new HearthFailure(r.error);
        return r.value;
      });
      open.set(key, ws);
    }
    return ws;
  };
  return async (runId: RunId, target: RunTarget): Promise<Artifacts> => {
    if (target.kind === 'session') {
      const workspace = await opened(sessionWorkspaceKey(target.sessionId));
      return { kind: 'dirs', workspace, dirs: artifactDirs(runId) };
    }
    const key = chatRunWorkspaceKey(target.chatId, runId);
    return { kind: 'workspace', key, workspace: await opened(key) };
  };
}

async function measureArtifacts(artifacts: Artifacts): Promise<{ files: number; bytes: number }> {
  if (artifacts.kind === 'workspace') return measureDir(artifacts.workspace);
  let files = 0;
  let bytes = 0;
  for (const path of artifacts.dirs) {
    const m = await measureDir(artifacts.workspace, path);
    files += m.files;
    bytes += m.bytes;
  }
  return { files, bytes };
}

/** Bytes of each run's artifacts that the size limit weighs (`fullCandidates`). */
export async function artifactSizes(
  runs: readonly RunRecord[],
  policy: RetentionPolicy,
  workspaces: WorkspaceStore,
): Promise<Map<RunId, number>> {
  const artifacts = artifactsOf(workspaces);
  const sizes = new Map<RunId, number>();
  for (const run of fullCandidates(runs, policy)) {
    sizes.set(run.id, (await measureArtifacts(await artifacts(run.id, run.target))).bytes);
  }
  return sizes;
}

/** `policy` planned over every run as they are now, with the sizes its size limit needs. */
export async function currentPlan(
  policy: RetentionPolicy,
  deps: Pick<RetentionDeps, 'runs' | 'workspaces' | 'clock'>,
): Promise<RetentionPlan> {
  const runs = await allRuns(deps.runs);
  const sizes = await artifactSizes(runs, policy, deps.workspaces);
  const planned = planRetention(runs, policy, { now: deps.clock.now(), sizes });
  if (!planned.ok) throw new HearthFailure(planned.error);
  return planned.value;
}

async function measureItem(
  item: RetentionItem,
  journal: Journal,
  artifacts: ReturnType<typeof artifactsOf>,
): Promise<Footprint> {
  const measured = item.deleteArtifacts
    ? await measureArtifacts(await artifacts(item.runId, item.target))
    : { files: 0, bytes: 0 };
  const events = item.deleteJournal ? await journal.count(item.runId) : 0;
  return { ...measured, events };
}

const sum = (items: Footprint[]) =>
  items.reduce(
    (t, i) => ({ files: t.files + i.files, bytes: t.bytes + i.bytes, events: t.events + i.events }),
    {
      files: 0,
      bytes: 0,
      events: 0,
    },
  );

/** The dry run: what applying `plan` would free, run by run. Deletes nothing. */
export async function previewRetention(
  plan: RetentionPlan,
  deps: Pick<RetentionDeps, 'journal' | 'workspaces'>,
): Promise<RetentionPreview> {
  const artifacts = artifactsOf(deps.workspaces);
  const items: MeasuredItem[] = [];
  for (const item of plan.items)
    items.push({ ...item, ...(await measureItem(item, deps.journal, artifacts)) });
  return { plan, items, totals: { runs: items.length, ...sum(items) } };
}

export interface ApplyOptions {
  signal?: AbortSignal;
  /** Called after each run with how many of the plan's runs are done. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Deletes what `plan` says, run by run, and marks each record `pruned`. Waits for nothing:
 * each run's record is read again first, and a run that is gone or not finished is skipped.
 * Parts already removed (by another tab) are not counted twice. Files and events go before the
 * record is marked, so an interrupted apply is simply planned again. Stops between runs when
 * `signal` aborts.
 */
export async function applyRetention(
  plan: RetentionPlan,
  deps: RetentionDeps,
  options: ApplyOptions = {},
): Promise<RetentionResult> {
  const artifacts = artifactsOf(deps.workspaces);
  const outcomes: RetentionOutcome[] = [];
  for (const [i, planned] of plan.items.entries()) {
    if (options.signal?.aborted) break;
    outcomes.push(await pruneRun(planned, deps, artifacts));
    options.onProgress?.(i + 1, plan.items.length);
  }
  const pruned = outcomes.filter((o) => o.outcome === 'pruned');
  return {
    outcomes,
    totals: { runs: pruned.length, ...sum(pruned) },
    skipped: outcomes.filter((o) => o.outcome === 'skipped').length,
    failed: outcomes.filter((o) => o.outcome === 'failed').length,
  };
}

async function pruneRun(
  planned: RetentionItem,
  deps: RetentionDeps,
  artifactsFor: ReturnType<typeof artifactsOf>,
): Promise<RetentionOutcome> {
  const current = await deps.runs.get(planned.runId);
  if (!current) return { ...planned, outcome: 'skipped', reason: 'The run no longer exists.' };
  if (!isTerminal(current.status)) {
    return { ...planned, outcome: 'skipped', reason: 'The run is still active, so it was left alone.' };
  }
  const item: RetentionItem = {
    ...planned,
    deleteArtifacts: planned.deleteArtifacts && current.pruned === undefined,
    deleteJournal: planned.deleteJournal && current.pruned !== 'journal',
  };
  if (!item.deleteArtifacts && !item.deleteJournal) {
    return { ...item, outcome: 'skipped', reason: 'Already removed.' };
  }
  let freed: Footprint = { files: 0, bytes: 0, events: 0 };
  try {
    if (item.deleteArtifacts) {
      const artifacts = await artifactsFor(item.runId, item.target);
      if (artifacts.kind === 'workspace') {
        const m = await measureDir(artifacts.workspace);
        const removed = await deps.workspaces.delete(artifacts.key);
        if (!removed.ok) throw new HearthFailure(removed.error);
        freed = { ...freed, ...m };
      } else {
        for (const path of artifacts.dirs) {
          const m = await measureDir(artifacts.workspace, path);
          const removed = await artifacts.workspace.remove(path);
          if (!removed.ok) throw new HearthFailure(removed.error);
          freed = { ...freed, files: freed.files + m.files, bytes: freed.bytes + m.bytes };
        }
      }
    }
    if (item.deleteJournal) freed = { ...freed, events: await deps.journal.deleteEvents(item.runId) };
    const level: PrunedLevel = item.deleteJournal || current.pruned === 'journal' ? 'journal' : 'artifacts';
    await deps.runs.put({ ...current, pruned: level, prunedAt: deps.clock.now() });
    return { ...item, ...freed, outcome: 'pruned' };
  } catch (e) {
    return {
      ...item,
      ...freed,
      outcome: 'failed',
      error: e instanceof HearthFailure ? e.error : toHearthError(e, 'storage.failed'),
    };
  }
}

/** Runs of every status, for planning: finished ones are planned, the others counted as active. */
export async function allRuns(runs: RunStore): Promise<RunRecord[]> {
  const [terminal, active] = await Promise.all([runs.listTerminal(), runs.listActive()]);
  return [...terminal, ...active];
}
