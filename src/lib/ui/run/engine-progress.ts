import type { EngineProgress } from '$lib/domain/run-update';
import { formatBytes } from '../format';

/** The progress bar of a shell engine's first download. */
export const engineProgressBar = (p: EngineProgress) => ({
  label: `Loading Python for the shell: ${formatBytes(p.loadedBytes)} of ${formatBytes(p.totalBytes)}`,
  value: p.loadedBytes,
  max: p.totalBytes,
});
