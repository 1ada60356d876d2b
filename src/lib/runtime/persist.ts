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
