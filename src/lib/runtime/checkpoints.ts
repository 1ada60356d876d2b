import { z } from 'zod';
import { hearthError, HearthFailure, type HearthError } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { err, ok, type Result } from '$lib/domain/result';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Clock } from '$lib/ports/clock';
import type { Workspace } from '$lib/ports/workspace';
import type { RunLog } from './run-recorder';

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

export interface CheckpointInput {
  /** The run's storage directory, e.g. `runs/<runId>`. */
  runDir: WorkspacePath;
  runId: string;
  reason: CheckpointReason;
  eventSeq: number;
  /** Workspace paths of the affected files; each must exist. */
  paths: readonly WorkspacePath[];
  /** Epoch milliseconds (from the runtime's Clock). */
  now: number;
}

/** How many ids past the counted sequence a creation tries before giving up (concurrent creations). */
const MAX_ID_ATTEMPTS = 64;
const ID_PATTERN = /^cp_\d{6,}$/;

export const checkpointId = (seq: number): string => `cp_${String(seq).padStart(6, '0')}`;

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

/**
 * Snapshots `paths` into a new checkpoint. seq = 1 + the number of existing checkpoint
 * directories; `checkpoint.json` is written first with an `absent` guard, which claims the id, so
 * two concurrent creations never share one (the loser moves on to the next seq). The copies are
 * written after the claim. Every failure is a system failure for the run.
 */
export async function createCheckpoint(
  workspace: Workspace,
  input: CheckpointInput,
): Promise<Result<{ checkpointId: string; seq: number; files: CheckpointFile[] }, HearthError>> {
  const contents: { path: WorkspacePath; data: Uint8Array }[] = [];
  const files: CheckpointFile[] = [];
  for (const path of [...new Set(input.paths)]) {
    const read = await workspace.read(path);
    if (!read.ok) {
      return err(hearthError(read.error.code, `Cannot checkpoint \`${path}\`: ${read.error.message}`));
    }
    contents.push({ path, data: read.value });
    files.push({ path, sha256: await sha256Hex(read.value), bytes: read.value.byteLength });
  }

  const existing = await workspace.list(checkpointsDir(input.runDir));
  if (!existing.ok && existing.error.code !== 'workspace.file_not_found') return existing;
  const count = existing.ok
    ? existing.value.filter((e) => e.kind === 'directory' && ID_PATTERN.test(nameOf(e.path))).length
    : 0;

  for (let seq = count + 1; seq <= count + MAX_ID_ATTEMPTS; seq++) {
    const id = checkpointId(seq);
    const record: Checkpoint = {
      id,
      seq,
      runId: input.runId,
      createdAt: new Date(input.now).toISOString(),
      reason: input.reason,
      eventSeq: input.eventSeq,
      files,
    };
    const json = new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`);
    const claimed = await workspace.write(metadataPath(input.runDir, id), json, { kind: 'absent' });
    if (!claimed.ok && claimed.error.code === 'workspace.conflict') continue;
    if (!claimed.ok) return claimed;
    for (const { path, data } of contents) {
      const copied = await workspace.write(copyPath(input.runDir, id, path), data);
      if (!copied.ok) return copied;
    }
    return ok({ checkpointId: id, seq, files });
  }
  return err(
    hearthError(
      'workspace.conflict',
      `No free checkpoint id after ${MAX_ID_ATTEMPTS} attempts in \`${input.runDir}/checkpoints\`.`,
    ),
  );
}

const nameOf = (path: WorkspacePath) => path.slice(path.lastIndexOf('/') + 1);

/** Copies files into a new checkpoint for a change the journal has just recorded (event `eventSeq`). */
export type Checkpointer = (
  reason: CheckpointReason,
  paths: readonly string[],
  eventSeq: number,
) => Promise<{ checkpointId: string }>;

/**
 * The one checkpoint path of a run: status `creating_checkpoint`, the copies, then
 * `checkpoint_created`. A failure is a system failure (it throws).
 */
export const checkpointer =
  (deps: { workspace: Workspace; runDir: WorkspacePath; log: RunLog; clock: Clock }): Checkpointer =>
  async (reason, paths, eventSeq) => {
    await deps.log.setStatus('creating_checkpoint');
    const created = await createCheckpoint(deps.workspace, {
      runDir: deps.runDir,
      runId: deps.log.run.id,
      reason,
      eventSeq,
      paths: paths as WorkspacePath[],
      now: deps.clock.now(),
    });
    if (!created.ok) throw new HearthFailure(created.error);
    await deps.log.emit({
      type: 'checkpoint_created',
      payload: { checkpointId: created.value.checkpointId, reason },
    });
    return created.value;
  };

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
