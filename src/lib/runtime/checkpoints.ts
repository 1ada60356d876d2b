import { z } from 'zod';
import { hearthError, HearthFailure, type HearthError } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { err, ok, type Result } from '$lib/domain/result';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Clock } from '$lib/ports/clock';
import type { Workspace } from '$lib/ports/workspace';
import type { RunStep, StepEvent } from './run-recorder';

/**
 * Checkpoints (tools.md §12.7, runtime.md §1.17.5): after every successful write or patch, a
 * direct-output capture, and before each chat commit, the runtime copies exactly the affected
 * files into `<runDir>/checkpoints/cp_NNNNNN/files/<path>` beside a `checkpoint.json` that
 * records them. Hidden runtime storage: model tools never see it. No restore yet (D16).
 */

export const CHECKPOINT_REASONS = [
  'tool_workspace_write',
  'tool_workspace_patch',
  'tool_workspace_shell',
  'direct_output_capture',
  'chat_commit',
] as const;
export type CheckpointReason = (typeof CHECKPOINT_REASONS)[number];

export interface CheckpointFile {
  path: WorkspacePath;
  sha256: string;
  bytes: number;
}

/** The content of `checkpoint.json`. */
export interface Checkpoint {
  id: string;
  seq: number;
  runId: string;
  /** ISO 8601. */
  createdAt: string;
  reason: CheckpointReason;
  /** The journal seq of the event that triggered the checkpoint. */
  eventSeq: number;
  files: CheckpointFile[];
}

/** How many digits a checkpoint id has at least: `cp_000001`. */
export const checkpointId = (seq: number): string => `cp_${String(seq).padStart(6, '0')}`;

const ID_PATTERN = /^cp_\d{6,}$/;

const join = (...parts: string[]): WorkspacePath => {
  const parsed = parseWorkspacePath(parts.join('/'));
  if (!parsed.ok) throw new Error(`internal: bad checkpoint path ${parts.join('/')}`);
  return parsed.value;
};

const checkpointsDir = (runDir: WorkspacePath) => join(runDir, 'checkpoints');
const metadataPath = (runDir: WorkspacePath, id: string) =>
  join(runDir, 'checkpoints', id, 'checkpoint.json');
const copyPath = (runDir: WorkspacePath, id: string, path: WorkspacePath) =>
  join(runDir, 'checkpoints', id, 'files', path);

const nameOf = (path: WorkspacePath) => path.slice(path.lastIndexOf('/') + 1);

/** A checkpoint whose files are read and whose id is taken, not yet recorded. */
export interface PendingCheckpoint {
  checkpointId: string;
  seq: number;
  files: CheckpointFile[];
  /**
   * Adds it to the step that journals the change it keeps (`change`, an event of that step):
   * status `creating_checkpoint`, `checkpoint.json`, the copies, `checkpoint_created`.
   */
  record(step: RunStep, change: StepEvent): void;
}

/**
 * Copies files into a new checkpoint for a change the caller journals in the same step. `known`:
 * contents the caller just wrote (a tool's file effect), kept without reading the files back.
 */
export type Checkpointer = (
  reason: CheckpointReason,
  paths: readonly string[],
  known?: ReadonlyMap<string, Uint8Array>,
) => Promise<PendingCheckpoint>;

/**
 * The one checkpoint path of a run. A checkpoint is read when it is taken (the affected files as
 * they are now) and recorded by the caller's step, so its copies, its `checkpoint.json` and its
 * `checkpoint_created` event are durable together. Ids count on from the highest existing one;
 * the run's one checkpointer hands them out, so concurrent checkpoints never share one. A file
 * that cannot be read is a system failure (it throws).
 */
export function checkpointer(deps: {
  workspace: Workspace;
  runDir: WorkspacePath;
  runId: string;
  clock: Clock;
}): Checkpointer {
  let last: Promise<number> | null = null;
  const highest = async (): Promise<number> => {
    const listed = await deps.workspace.list(checkpointsDir(deps.runDir));
    if (!listed.ok && listed.error.code !== 'workspace.file_not_found') throw new HearthFailure(listed.error);
    const seqs = (listed.ok ? listed.value : [])
      .filter((e) => e.kind === 'directory' && ID_PATTERN.test(nameOf(e.path)))
      .map((e) => Number(nameOf(e.path).slice(3)));
    return Math.max(0, ...seqs);
  };
  return async (reason, paths, known) => {
    const contents: { path: WorkspacePath; data: Uint8Array }[] = [];
    const files: CheckpointFile[] = [];
    for (const path of [...new Set(paths as WorkspacePath[])]) {
      const given = known?.get(path);
      const read = given ? ok(given) : await deps.workspace.read(path);
      if (!read.ok) {
        throw new HearthFailure(
          hearthError(read.error.code, `Cannot checkpoint \`${path}\`: ${read.error.message}`),
        );
      }
      contents.push({ path, data: read.value });
      files.push({ path, sha256: await sha256Hex(read.value), bytes: read.value.byteLength });
    }
    const taken = (last ?? highest()).then((n) => n + 1);
    last = taken;
    const seq = await taken;
    const id = checkpointId(seq);
    const createdAt = new Date(deps.clock.now()).toISOString();
    return {
      checkpointId: id,
      seq,
      files,
      record(step, change) {
        step.status('creating_checkpoint');
        step.keep(metadataPath(deps.runDir, id), (seqOf: (event: StepEvent) => number) => {
          const record: Checkpoint = {
            id,
            seq,
            runId: deps.runId,
            createdAt,
            reason,
            eventSeq: seqOf(change),
            files,
          };
          return new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`);
        });
        for (const { path, data } of contents) step.keep(copyPath(deps.runDir, id, path), data);
        step.emit({ type: 'checkpoint_created', payload: { checkpointId: id, reason } });
      },
    };
  };
}

const checkpointSchema = z.object({
  id: z.string().regex(ID_PATTERN),
  seq: z.int().positive(),
  runId: z.string(),
  createdAt: z.string(),
  reason: z.enum(CHECKPOINT_REASONS),
  eventSeq: z.int().nonnegative(),
  files: z.array(z.object({ path: z.string(), sha256: z.string(), bytes: z.int().nonnegative() })),
});

/** Reads and checks one `checkpoint.json`; `null` when the checkpoint does not exist. */
async function readCheckpoint(
  workspace: Workspace,
  runDir: WorkspacePath,
  id: string,
): Promise<Result<Checkpoint | null, HearthError>> {
  const path = metadataPath(runDir, id);
  const read = await workspace.read(path);
  if (!read.ok) {
    const missing =
      read.error.code === 'workspace.file_not_found' || read.error.code === 'workspace.not_a_directory';
    return missing ? ok(null) : read;
  }
  const corrupt = (why: string) =>
    err(hearthError('checkpoint.corrupt', `\`${path}\` is not a valid checkpoint: ${why}`));
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(read.value));
  } catch (e) {
    return corrupt(e instanceof Error ? e.message : String(e));
  }
  const parsed = checkpointSchema.safeParse(json);
  if (!parsed.success)
    return corrupt(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  if (parsed.data.id !== id) return corrupt(`it names itself ${parsed.data.id}`);
  const files: CheckpointFile[] = [];
  for (const f of parsed.data.files) {
    const p = parseWorkspacePath(f.path);
    if (!p.ok || p.value !== f.path) return corrupt(`invalid file path ${JSON.stringify(f.path)}`);
    files.push({ path: p.value, sha256: f.sha256, bytes: f.bytes });
  }
  return ok({ ...parsed.data, files });
}

/** Every checkpoint of a run, by seq (for the run view). A run without checkpoints has none. */
export async function listCheckpoints(
  workspace: Workspace,
  runDir: WorkspacePath,
): Promise<Result<Checkpoint[], HearthError>> {
  const listed = await workspace.list(checkpointsDir(runDir));
  if (!listed.ok) return listed.error.code === 'workspace.file_not_found' ? ok([]) : listed;
  const checkpoints: Checkpoint[] = [];
  for (const entry of listed.value) {
    const id = nameOf(entry.path);
    if (entry.kind !== 'directory' || !ID_PATTERN.test(id)) continue;
    const read = await readCheckpoint(workspace, runDir, id);
    if (!read.ok) return read;
    if (read.value) checkpoints.push(read.value);
  }
  return ok(checkpoints.sort((a, b) => a.seq - b.seq));
}

/** The copy of one file kept by a checkpoint, checked against the hash recorded for it. */
export async function readCheckpointFile(
  workspace: Workspace,
  runDir: WorkspacePath,
  id: string,
  path: WorkspacePath,
): Promise<Result<{ path: WorkspacePath; sha256: string; data: Uint8Array }, HearthError>> {
  const notFound = (why: string) => err(hearthError('checkpoint.not_found', why));
  if (!ID_PATTERN.test(id)) return notFound(`\`${id}\` is not a checkpoint id.`);
  const checkpoint = await readCheckpoint(workspace, runDir, id);
  if (!checkpoint.ok) return checkpoint;
  if (!checkpoint.value) return notFound(`No checkpoint ${id} in \`${runDir}\`.`);
  const file = checkpoint.value.files.find((f) => f.path === path);
  if (!file) return notFound(`Checkpoint ${id} holds no copy of \`${path}\`.`);
  const copy = await workspace.read(copyPath(runDir, id, path));
  if (!copy.ok) {
    return err(
      hearthError(
        'checkpoint.corrupt',
        `Checkpoint ${id} lost its copy of \`${path}\`: ${copy.error.message}`,
      ),
    );
  }
  const sha256 = await sha256Hex(copy.value);
  if (sha256 !== file.sha256) {
    return err(
      hearthError(
        'checkpoint.corrupt',
        `Checkpoint ${id}'s copy of \`${path}\` does not match its recorded hash.`,
      ),
    );
  }
  return ok({ path, sha256, data: copy.value });
}
