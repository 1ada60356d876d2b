import type { Usage } from '$lib/domain/model';

export const formatBytes = (n: number): string => {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
};

export const formatTokens = (u: Usage): string => {
  const total = u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
  return total ? `${total.toLocaleString()} tokens` : 'no token usage reported';
};

export const formatElapsed = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
};

export const statusLabel = (status: string): string =>
  status === 'awaiting_approval' ? 'waiting for your approval' : status.replaceAll('_', ' ');

export const imagesLabel = (n: number): string => (n === 1 ? '1 image' : `${n.toLocaleString()} images`);
