import type { BackupProgress } from '$lib/domain/backup';
import { applyRestore, inspectBackup } from '$lib/adapters/backup/backup-restore';
import { systemClock } from '$lib/adapters/system/clock';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import { AsyncQueue } from '$lib/runtime/run-feed';
import type { RuntimeContext } from '../context';
import type { BackupStreams, BackupUpdate } from '../protocol';
import type { Handlers } from '../rpc';

const PROGRESS_EVERY_MS = 100;
/** Held by a restore while it works, so no other tab finishes (or undoes) it under its feet. */
export const RESTORE_LOCK = 'hearth-restore';

/**
 * Runs `work` as a stream: progress (at most every 100 ms, the last one always), then its
 * result. Leaving the stream aborts `signal`, which the work checks between entries.
 */
function streamed<T>(
  signal: AbortSignal,
  work: (onProgress: (p: BackupProgress) => void) => Promise<T>,
): AsyncIterable<BackupUpdate<T>> {
  const queue = new AsyncQueue<BackupUpdate<T>>();
  let last = 0;
  const onProgress = (progress: BackupProgress) => {
    const now = Date.now();
    if (now - last < PROGRESS_EVERY_MS && progress.doneBytes < progress.totalBytes) return;
    last = now;
    queue.push({ type: 'progress', progress });
  };
  work(onProgress)
    .then((result) => {
      queue.push({ type: 'done', result });
      queue.close();
    })
    .catch((e: unknown) => queue.fail(signal.aborted ? cancelled() : e));
  return queue;
}

const cancelled = () => new HearthFailure(hearthError('backup.invalid', 'Cancelled: nothing was changed.'));

/** Whole-app backup (export) and restore (dry run, then apply). */
export function backupHandlers(ctx: RuntimeContext): Handlers<Record<never, never>, BackupStreams> {
  const { db } = ctx;
  const root = () => ctx.opfsRoot();
  const changed = (unit: string) => ctx.options.workspaces.changedOutside?.(unit);
  /** The last dry run: restoring applies exactly what the person saw. */
  let inspected: {
    token: string;
    file: Blob;
    plan: Awaited<ReturnType<typeof inspectBackup>>['plan'];
  } | null = null;

  return {
    methods: {},
    streams: {
      'backup.export': ({ includeRuns }, signal) =>
        streamed(signal, async (onProgress) => {
          // The zip writer is loaded when a person first exports, not with every worker.
          const { exportBackup } = await import('$lib/adapters/backup/backup-export');
          return exportBackup({
            db,
            opfsRoot: await root(),
            appVersion: ctx.appVersion,
            includeRuns,
            now: systemClock.now(),
            signal,
            onProgress,
          });
        }),
      'backup.inspect': ({ file }, signal) =>
        streamed(signal, async (onProgress) => {
          const estimate = await ctx.options.storage?.estimate();
          const freeBytes = estimate?.quota ? estimate.quota - (estimate.usage ?? 0) : undefined;
          const { inspection, plan } = await inspectBackup(file, {
            db,
            opfsRoot: await root(),
            freeBytes,
            appOrigin: ctx.options.appOrigin,
            signal,
            onProgress,
          });
          inspected = { token: crypto.randomUUID(), file, plan };
          return { token: inspected.token, inspection };
        }),
      'backup.restore': ({ token, choices }, signal) =>
        streamed(signal, async (onProgress) => {
          if (!inspected || inspected.token !== token)
            throw new HearthFailure(
              hearthError(
                'backup.invalid',
                'This backup was not checked in this tab: choose the file again.',
              ),
            );
          const { file, plan } = inspected;
          inspected = null;
          const opfsRoot = await root();
          const restored = await ctx.options.locks.tryWithLock(RESTORE_LOCK, () =>
            applyRestore(file, plan, choices, {
              db,
              opfsRoot,
              appOrigin: ctx.options.appOrigin,
              signal,
              onProgress,
              changed,
            }),
          );
          if (!restored.acquired)
            throw new HearthFailure(
              hearthError('backup.busy', 'Another tab is restoring a backup: wait for it to finish.'),
            );
          const summary = restored.value;
          ctx.mcp.storedChanged();
          ctx.extensions.storedChanged();
          return summary;
        }),
    },
  };
}
