import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addCustomPrompt,
  deletePrompt,
  movePrompt,
  renamePreset,
  setBudget,
  setPromptEnabled,
  setSampler,
  updatePrompt,
  type PresetEdit,
} from '$lib/chat/preset/edit';
import { PresetSchema, type Preset } from '$lib/chat/preset/preset';
import { defaultPreset, presetFromSillyTavern, presetToSillyTavern } from '$lib/chat/preset/sillytavern';

const done = (r: PresetEdit): Preset => {
  if (!r.ok) throw new Error(r.error.message);
  expect(PresetSchema.parse(r.value)).toEqual(r.value);
  return r.value;
};
const refusal = (r: PresetEdit): string => {
  if (r.ok) throw new Error('the edit was made');
  return `${r.error.code}: ${r.error.message}`;
};
const ids = (p: Preset) => p.order.map((e) => e.identifier);

describe('preset edits', () => {
  it('move a prompt one place up or down the order, and never past an end', () => {
    const before = defaultPreset();
    const down = done(movePrompt(before, 'main', 'down'));
    expect(ids(down).slice(0, 3)).toEqual(['worldInfoBefore', 'main', 'personaDescription']);
    expect(ids(before)[0]).toBe('main'); // the given preset is untouched
    const up = done(movePrompt(down, 'main', 'up'));
    expect(up.order).toEqual(before.order);
    expect(done(movePrompt(before, 'main', 'up')).order).toEqual(before.order);
    expect(done(movePrompt(before, 'jailbreak', 'down')).order).toEqual(before.order);
    expect(refusal(movePrompt(before, 'nope', 'up'))).toMatch(/not in the prompt order/);
  });

  it('switch a prompt off and on; one not in the order joins it at the end', () => {
    const off = done(setPromptEnabled(defaultPreset(), 'nsfw', false));
    expect(off.order.find((e) => e.identifier === 'nsfw')).toEqual({ identifier: 'nsfw', enabled: false });
    expect(done(setPromptEnabled(off, 'nsfw', true)).order).toEqual(defaultPreset().order);
    const outside = defaultPreset();
    outside.order = outside.order.filter((e) => e.identifier !== 'scenario');
    expect(done(setPromptEnabled(outside, 'scenario', true)).order.at(-1)).toEqual({
      identifier: 'scenario',
      enabled: true,
    });
    expect(refusal(setPromptEnabled(outside, 'nope', true))).toMatch(/no prompt “nope”/);
  });

  it('add a custom prompt with a new identifier, on, at the end; edit it to inject at a depth', () => {
    const one = done(addCustomPrompt(defaultPreset(), 'Tone'));
    const two = done(addCustomPrompt(one));
    expect(two.prompts.slice(-2).map((p) => [p.identifier, p.name])).toEqual([
      ['custom_1', 'Tone'],
      ['custom_2', 'New prompt'],
    ]);
    expect(two.order.slice(-2)).toEqual([
      { identifier: 'custom_1', enabled: true },
      { identifier: 'custom_2', enabled: true },
    ]);
    const edited = done(
      updatePrompt(two, 'custom_1', {
        name: ' Short ',
        role: 'user',
        content: 'Keep it short.',
        injectionPosition: 'depth',
        injectionDepth: 2,
      }),
    );
    expect(edited.prompts.find((p) => p.identifier === 'custom_1')).toMatchObject({
      name: 'Short',
      role: 'user',
      content: 'Keep it short.',
      injectionPosition: 'depth',
      injectionDepth: 2,
      systemPrompt: false,
      marker: false,
    });
    expect(refusal(updatePrompt(edited, 'custom_1', { injectionDepth: -1 }))).toMatch(
      /^preset.invalid: .*injectionDepth/,
    );
    expect(refusal(updatePrompt(edited, 'custom_1', { name: '  ' }))).toMatch(/needs a name/);
    // after deleting custom_1, a new prompt does not take an identifier still in use
    expect(done(addCustomPrompt(done(deletePrompt(edited, 'custom_1')))).prompts.at(-1)!.identifier).toBe(
      'custom_1',
    );
  });

  it("edit a system prompt's text; a marker only gets a new name, and main is never injected", () => {
    const main = done(
      updatePrompt(defaultPreset(), 'main', { content: 'Be {{char}}.', role: 'user', forbidOverrides: true }),
    );
    expect(main.prompts.find((p) => p.identifier === 'main')).toMatchObject({
      content: 'Be {{char}}.',
      role: 'user',
      forbidOverrides: true,
    });
    expect(refusal(updatePrompt(defaultPreset(), 'chatHistory', { content: 'x' }))).toMatch(/only its name/);
    expect(refusal(updatePrompt(defaultPreset(), 'main', { injectionPosition: 'depth' }))).toMatch(
      /main prompt/,
    );
    const renamed = done(updatePrompt(defaultPreset(), 'chatHistory', { name: 'The chat' }));
    expect(renamed.prompts.find((p) => p.identifier === 'chatHistory')!.name).toBe('The chat');
  });

  it("delete a custom prompt from prompts and order; SillyTavern's own prompts stay", () => {
    const added = done(addCustomPrompt(defaultPreset(), 'Tone'));
    const gone = done(deletePrompt(added, 'custom_1'));
    expect(gone.prompts).toEqual(defaultPreset().prompts);
    expect(gone.order).toEqual(defaultPreset().order);
    for (const id of ['main', 'jailbreak', 'chatHistory', 'worldInfoBefore'])
      expect(refusal(deletePrompt(added, id))).toMatch(/^preset.built_in: .*switch it off/);
  });

  it('rename the preset and set its budget; the reply must leave room for the prompt', () => {
    expect(done(renamePreset(defaultPreset(), '  Mine ')).name).toBe('Mine');
    expect(refusal(renamePreset(defaultPreset(), ''))).toMatch(/needs a name/);
    const big = done(setBudget(defaultPreset(), { maxContextTokens: 16_384, maxReplyTokens: 1_000 }));
    expect([big.maxContextTokens, big.sampler.maxOutputTokens]).toEqual([16_384, 1_000]);
    expect(refusal(setBudget(big, { maxContextTokens: 1_000, maxReplyTokens: 1_000 }))).toMatch(/fewer than/);
    expect(refusal(setBudget(big, { maxContextTokens: 0, maxReplyTokens: 10 }))).toMatch(/above 0/);
    expect(refusal(setBudget(big, { maxContextTokens: 4_000, maxReplyTokens: 2.5 }))).toMatch(/whole number/);
  });

  it('set the sampler settings without touching the max reply tokens of the budget', () => {
    const set = done(
      setSampler(defaultPreset(), { temperature: 0.7, stop: ['\nUser:'], maxOutputTokens: 9 }),
    );
    expect(set.sampler).toEqual({ temperature: 0.7, stop: ['\nUser:'], maxOutputTokens: 300 });
    expect(done(setSampler(set, undefined)).sampler).toEqual({ maxOutputTokens: 300 });
    expect(refusal(setSampler(set, { temperature: 5 }))).toMatch(/^preset.invalid: .*sampler.temperature/);
  });
});

describe("an edited preset exported to SillyTavern's file", () => {
  const DEFAULT_JSON = resolve(
    '../shared/content/sillytavern/SillyTavern@staging-1ac6780/default/content/presets/openai/Default.json',
  );
  const read = (json: unknown): Preset => {
    const r = presetFromSillyTavern(json, 'Default');
    if (!r.ok) throw new Error(r.error.message);
    return r.value.preset;
  };

  it("writes the edits into SillyTavern's fields, keeps the rest, and imports to the same preset", () => {
    const original = JSON.parse(readFileSync(DEFAULT_JSON, 'utf8')) as Record<string, unknown>;
    let preset = read(original);
    preset = done(movePrompt(preset, 'charPersonality', 'up'));
    preset = done(setPromptEnabled(preset, 'nsfw', false));
    preset = done(addCustomPrompt(preset, 'Tone'));
    preset = done(
      updatePrompt(preset, 'custom_1', {
        role: 'user',
        content: 'Keep it short.',
        injectionPosition: 'depth',
        injectionDepth: 2,
      }),
    );
    preset = done(updatePrompt(preset, 'main', { content: 'Be {{char}}.' }));
    preset = done(setBudget(preset, { maxContextTokens: 16_000, maxReplyTokens: 700 }));
    preset = done(
      setSampler(preset, { temperature: 0.8, topK: 40, stop: ['\nUser:'], reasoningEffort: 'low' }),
    );

    const file = presetToSillyTavern(preset);
    const order = (
      file.prompt_order as { character_id: number; order: { identifier: string; enabled: boolean }[] }[]
    ).find((o) => o.character_id === 100001)!.order;
    expect(order.map((e) => e.identifier).slice(3, 6)).toEqual([
      'charPersonality',
      'charDescription',
      'scenario',
    ]);
    expect(order.find((e) => e.identifier === 'nsfw')!.enabled).toBe(false);
    expect(order.at(-1)).toEqual({ identifier: 'custom_1', enabled: true });
    const prompts = file.prompts as Record<string, unknown>[];
    expect(prompts.find((p) => p.identifier === 'custom_1')).toMatchObject({
      name: 'Tone',
      role: 'user',
      content: 'Keep it short.',
      system_prompt: false,
      marker: false,
      injection_position: 1,
      injection_depth: 2,
    });
    expect(prompts.find((p) => p.identifier === 'main')!.content).toBe('Be {{char}}.');
    expect(file).toMatchObject({
      openai_max_context: 16_000,
      openai_max_tokens: 700,
      temperature: 0.8,
      top_k: 40,
      hearth_stop: ['\nUser:'],
      hearth_reasoning_effort: 'low',
    });
    // What SillyTavern's sampler fields Hearth does not set, and everything Hearth does not read, stay.
    for (const key of ['top_p', 'min_p', 'frequency_penalty', 'presence_penalty', 'repetition_penalty'])
      expect(key in file).toBe(false);
    for (const key of ['openai_model', 'claude_model', 'top_a', 'stream_openai', 'assistant_prefill', 'n'])
      expect(file[key]).toEqual(original[key]);
    const otherOrder = (file.prompt_order as { character_id: number }[]).find(
      (o) => o.character_id === 100000,
    );
    expect(otherOrder).toEqual((original.prompt_order as { character_id: number }[])[0]);

    const again = read(JSON.parse(JSON.stringify(file)));
    expect({ ...again, source: undefined }).toEqual({ ...preset, source: undefined });
  });
});
