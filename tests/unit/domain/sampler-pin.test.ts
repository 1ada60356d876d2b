import { describe, expect, it } from 'vitest';
import { connectionSchema, draftFromPreset } from '$lib/domain/connection';
import { activeSampler } from '$lib/domain/sampler-mapping';
import { pinSampler } from '$lib/domain/sampler-pin';

describe('pinSampler', () => {
  it('puts each pinned setting over the run’s and keeps the rest', () => {
    expect(
      pinSampler({ temperature: 1, topP: 0.9, stop: ['a'] }, { temperature: 0.3, stop: ['b'], seed: 3 }),
    ).toEqual({ temperature: 0.3, topP: 0.9, stop: ['b'], seed: 3 });
    expect(pinSampler({ topK: 40 }, undefined)).toEqual({ topK: 40 });
    expect(pinSampler(undefined, { topK: 40 })).toEqual({ topK: 40 });
    expect(pinSampler(undefined, {})).toBeUndefined();
  });
});

describe('activeSampler', () => {
  it('leaves out the values that mean off', () => {
    expect(
      activeSampler({
        topK: 0,
        minP: 0,
        repetitionPenalty: 1,
        frequencyPenalty: 0,
        presencePenalty: 0,
        seed: -1,
        stop: [],
        temperature: 0,
      }),
    ).toEqual({ temperature: 0 });
  });
});

describe('a connection’s pinned sampler', () => {
  const remote = { ...draftFromPreset('openrouter'), kind: 'remote', id: 'or-1', model: 'x/y', apiKey: '' };
  it('is validated with the sampler schema', () => {
    expect(connectionSchema.safeParse({ ...remote, sampler: { temperature: 0.5, topK: 20 } }).success).toBe(
      true,
    );
    const bad = connectionSchema.safeParse({ ...remote, sampler: { temperature: 3 } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['sampler', 'temperature']);
    expect(connectionSchema.safeParse({ ...remote, sampler: { temprature: 1 } }).success).toBe(false);
  });
});
