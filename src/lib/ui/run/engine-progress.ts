import type { EngineProgress } from '$lib/domain/run-update';
import { formatBytes } from '../format';

/**
 * The progress bar of a shell engine's first load: the download while bytes arrive, then an
 * indeterminate bar while the sandbox starts it (Python: about a second or two).
 */
export const engineProgressBar = (p: EngineProgress) =>
  p.totalBytes > 0 && p.loadedBytes < p.totalBytes
    ? {
        label: `Loading Python for the shell: ${formatBytes(p.loadedBytes)} of ${formatBytes(p.totalBytes)}`,
        value: p.loadedBytes,
        max: p.totalBytes,
      }
    : { label: 'Starting Python for the shell…' };
