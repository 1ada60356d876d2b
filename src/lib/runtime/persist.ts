import { HearthFailure, type HearthError } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import type { Result } from '$lib/domain/result';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';

/** One file of a persistent state, as `input/persist_snapshot.json` and manifests record it. */
export interface PersistFile {
  path: string;
  sha256: string;
  bytes: number;
}

const unwrap = <T>(r: Result<T, HearthError>): T => {
  if (!r.ok) throw new HearthFailure(r.error);
  return r.value;
};
const p = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new HearthFailure(parsed.error);
  return parsed.value;
};

/** Every file below `dir` (relative paths), or none when it does not exist. */
async function filesUnder(ws: Workspace, dir: WorkspacePath): Promise<string[]> {
  if (unwrap(await ws.stat(dir)) === null) return [];
  const out: string[] = [];
  const walk = async (at: WorkspacePath) => {
    for (const e of unwrap(await ws.list(at))) {
      if (e.kind === 'directory') await walk(e.path);
      else out.push(e.path.slice(dir.length + 1));
    }
  };
  await walk(dir);
  return out.sort();
}

const stateDir = (stateId: string) => p(`persistent-states/${stateId}`);

/**
 * `persist/` (tools.md §12.4): the run starts from the immutable state of the message it
 * answers, copied into its own `persist/`; the base is recorded so finishing can tell what
 * changed. Returns the base files.
 */
export async function projectPersist(
  chatWs: Workspace,
  runWs: Workspace,
  baseStateId: string | null,
): Promise<PersistFile[]> {
  const base: PersistFile[] = [];
  if (baseStateId) {
    const dir = stateDir(baseStateId);
    for (const rel of await filesUnder(chatWs, p(`${dir}/files`))) {
      const bytes = unwrap(await chatWs.read(p(`${dir}/files/${rel}`)));
      unwrap(await runWs.write(p(`persist/${rel}`), bytes));
      base.push({ path: rel, sha256: await sha256Hex(bytes), bytes: bytes.byteLength });
    }
  }
  unwrap(
    await runWs.write(
      p('run/input/persist_snapshot.json'),
      new TextEncoder().encode(JSON.stringify({ baseStateId, files: base }, null, 2)),
    ),
  );
  return base;
}

/**
 * Publishes the run's `persist/` as a new immutable state when it differs from the base
 * (additions, changes and deletions count); otherwise the base state is reused. Only a run that
 * finished successfully calls this.
 */
export async function promotePersist(
  chatWs: Workspace,
  runWs: Workspace,
  input: { runId: string; baseStateId: string | null; base: readonly PersistFile[] },
): Promise<{ stateId: string | null; changed: PersistFile[]; removed: string[] }> {
  const now: PersistFile[] = [];
  const contents = new Map<string, Uint8Array>();
  for (const rel of await filesUnder(runWs, p('persist'))) {
    const bytes = unwrap(await runWs.read(p(`persist/${rel}`)));
    contents.set(rel, bytes);
    now.push({ path: rel, sha256: await sha256Hex(bytes), bytes: bytes.byteLength });
  }
  const before = new Map(input.base.map((f) => [f.path, f.sha256] as const));
  const changed = now.filter((f) => before.get(f.path) !== f.sha256);
  const removed = input.base.filter((f) => !contents.has(f.path)).map((f) => f.path);
  if (changed.length === 0 && removed.length === 0) return { stateId: input.baseStateId, changed, removed };
  const dir = stateDir(input.runId);
  for (const [rel, bytes] of contents)
    unwrap(await chatWs.write(p(`${dir}/files/${rel}`), bytes, { kind: 'absent' }));
  const manifest = { stateId: input.runId, baseStateId: input.baseStateId, files: now };
  unwrap(
    await chatWs.write(
      p(`${dir}/manifest.json`),
      new TextEncoder().encode(JSON.stringify(manifest, null, 2)),
      {
        kind: 'absent',
      },
    ),
  );
  return { stateId: input.runId, changed, removed };
}

/** The state a message's extra (or a swipe's) records, if any. */
export function stateIdOf(extra: Readonly<Record<string, unknown>> | undefined): string | null {
  const hearth = extra?.hearth;
  const id =
    typeof hearth === 'object' && hearth !== null && !Array.isArray(hearth)
      ? (hearth as Record<string, unknown>).persistStateId
      : undefined;
  return typeof id === 'string' ? id : null;
}

/** What unreferenced states hold, or held once removed. */
export interface StateSweep {
  states: number;
  files: number;
  bytes: number;
}

/**
 * The chat's stored states no message or swipe names (left by deleted messages and swipes):
 * measured, and deleted when `remove`. `referenced` is read only when the chat has states. The
 * caller holds the chat's run lock, so no reply publishes a state meanwhile.
 */
export async function sweepStates(
  chatWs: Workspace,
  referenced: () => Promise<ReadonlySet<string>>,
  remove: boolean,
): Promise<StateSweep> {
  const root = p('persistent-states');
  const sweep: StateSweep = { states: 0, files: 0, bytes: 0 };
  if (unwrap(await chatWs.stat(root)) === null) return sweep;
  const named = await referenced();
  for (const entry of unwrap(await chatWs.list(root))) {
    const id = entry.path.slice(root.length + 1);
    if (entry.kind !== 'directory' || named.has(id)) continue;
    const files = await filesUnder(chatWs, entry.path);
    for (const rel of files) sweep.bytes += unwrap(await chatWs.stat(p(`${entry.path}/${rel}`)))?.size ?? 0;
    sweep.states += 1;
    sweep.files += files.length;
    if (remove) unwrap(await chatWs.remove(entry.path));
  }
  return sweep;
}
