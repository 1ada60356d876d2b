import type { Clock, Ids } from '$lib/ports/clock';

export const systemClock: Clock = { now: () => Date.now() };

const hex32 = () => crypto.randomUUID().replaceAll('-', '');

export const randomIds: Ids = {
  runId: () => `run_${hex32()}`,
  sessionId: () => `ses_${hex32()}`,
  contentId: (prefix) => `${prefix}_${hex32()}`,
};
