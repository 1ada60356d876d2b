/// <reference lib="webworker" />
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace, WriteGuard } from '$lib/ports/workspace';

/**
 * Test helper: prepares one workspace modification from a worker, answers `ready`, then runs it
 * on `go` (so that all racers start together) and reports the outcome.
 */
export type WriterRequest =
  | { op: 'write'; key: string; path: string; data: Uint8Array; guard: WriteGuard }
  | { op: 'append'; key: string; path: string; data: Uint8Array };

let run: (() => Promise<{ ok: boolean; code?: string }>) | undefined;

const outcome = (r: { ok: true } | { ok: false; error: { code: string } }) =>
  r.ok ? { ok: true } : { ok: false, code: r.error.code };

self.onmessage = async (event: MessageEvent<WriterRequest | 'go'>) => {
  if (event.data === 'go') return self.postMessage(await run!());
  const req = event.data;
  const path = parseWorkspacePath(req.path);
  const opened = await new OpfsWorkspaceStore().open(req.key);
  if (!path.ok || !opened.ok) throw new Error('worker setup failed');
  const ws: Workspace = opened.value;
  run = async () =>
    outcome(
      req.op === 'write'
        ? await ws.write(path.value, req.data, req.guard)
        : await ws.append(path.value, req.data),
    );
  self.postMessage('ready');
};
