import type { SamplerSettings } from './sampler';

/**
 * The settings a request is sampled with (D23): each setting a connection pins replaces the
 * run's (which come from the chat's preset); what the connection leaves unset stays the run's.
 * Undefined when neither sets anything.
 */
export function pinSampler(
  run: SamplerSettings | undefined,
  pinned: SamplerSettings | undefined,
): SamplerSettings | undefined {
  const merged: SamplerSettings = { ...run };
  for (const [key, value] of Object.entries(pinned ?? {}))
    if (value !== undefined) Object.assign(merged, { [key]: value });
  return Object.keys(merged).length > 0 ? merged : undefined;
}
