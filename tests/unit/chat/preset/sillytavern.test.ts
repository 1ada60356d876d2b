import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultPreset, presetFromSillyTavern, presetToSillyTavern } from '$lib/chat/preset/sillytavern';
import { customPrompt, PresetSchema } from '$lib/chat/preset/preset';

const DEFAULT_JSON = resolve(
  '../shared/content/sillytavern/SillyTavern@staging-1ac6780/default/content/presets/openai/Default.json',
);
const stDefault = (): Record<string, unknown> => JSON.parse(readFileSync(DEFAULT_JSON, 'utf8'));

const imported = (json: unknown, name = 'Default') => {
  const r = presetFromSillyTavern(json, name);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

describe("SillyTavern's Default Chat Completion preset", () => {
  it('imports what the prompt manager reads: the 100001 order, prompts, formats, samplers (openai.js:3712-3781)', () => {
    const { preset, problems } = imported(stDefault());
    expect(problems).toEqual([]);
    expect(PresetSchema.parse(preset)).toEqual(preset);
    expect(preset.order.map((e) => `${e.identifier}:${e.enabled}`)).toEqual([
      'main:true',
      'worldInfoBefore:true',
      'personaDescription:true',
      'charDescription:true',
      'charPersonality:true',
      'scenario:true',
      'enhanceDefinitions:false',
      'nsfw:true',
      'worldInfoAfter:true',
      'dialogueExamples:true',
      'chatHistory:true',
      'jailbreak:true',
    ]);
    expect(preset.prompts).toHaveLength(12);
    const main = preset.prompts.find((p) => p.identifier === 'main')!;
    expect(main).toMatchObject({
      role: 'system',
      systemPrompt: true,
      marker: false,
      injectionPosition: 'relative',
      content: "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}.",
    });
    expect(preset.prompts.find((p) => p.identifier === 'chatHistory')!.marker).toBe(true);
    expect(preset.formats).toEqual({
      worldInfo: '{0}',
      scenario: '[Circumstances and context of the dialogue: {{scenario}}]',
      personality: "[{{char}}'s personality: {{personality}}]",
    });
    expect(preset.utility.newChat).toBe('[Start a new Chat]');
    expect(preset.utility.newExampleChat).toBe('[Example Chat]');
    expect(preset.utility.groupNudge).toBe('[Write the next reply only as {{char}}.]');
    expect(preset.namesBehavior).toBe('default');
    expect(preset.maxContextTokens).toBe(4095);
    // seed -1 is "no seed" in SillyTavern (openai.js:1925-1927).
    expect(preset.sampler).toEqual({
      temperature: 1,
      topP: 1,
      topK: 0,
      minP: 0,
      frequencyPenalty: 0,
      presencePenalty: 0,
      repetitionPenalty: 1,
      maxOutputTokens: 300,
    });
  });

  it('exports again with every field kept except the secrets, which are never imported', () => {
    const original = stDefault();
    const { preset } = imported(original);
    const out = presetToSillyTavern(preset);
    const expected = { ...original };
    delete expected.proxy_password;
    delete expected.reverse_proxy;
    delete expected.custom_include_headers;
    expect(out).toEqual(expected);
    expect(Object.keys(out)).toEqual(Object.keys(expected));
    // …and the export imports to the same preset.
    expect(imported(out).preset).toEqual(preset);
  });

  it('writes only what changed, in SillyTavern form, and keeps fields Hearth does not read', () => {
    const { preset } = imported(stDefault());
    const edited = structuredClone(preset);
    edited.prompts.find((p) => p.identifier === 'main')!.content = 'Be {{char}}.';
    edited.prompts.push({
      ...customPrompt('c1', 'Tone'),
      content: 'Keep it short.',
      injectionPosition: 'depth',
      injectionDepth: 2,
      role: 'user',
    });
    edited.order.splice(1, 0, { identifier: 'c1', enabled: true });
    edited.sampler.temperature = 0.7;
    delete edited.sampler.topK;
    edited.sampler.seed = 42;
    const out = presetToSillyTavern(edited);
    const prompts = out.prompts as Record<string, unknown>[];
    expect(prompts.find((p) => p.identifier === 'main')).toEqual({
      name: 'Main Prompt',
      system_prompt: true,
      role: 'system',
      content: 'Be {{char}}.',
      identifier: 'main',
    });
    expect(prompts.at(-1)).toMatchObject({
      identifier: 'c1',
      injection_position: 1,
      injection_depth: 2,
      role: 'user',
    });
    const orders = out.prompt_order as { character_id: number; order: { identifier: string }[] }[];
    expect(orders[0]!.order).toHaveLength(11); // the 100000 order is left as it was
    expect(orders[1]!.order[1]!.identifier).toBe('c1');
    expect(out.temperature).toBe(0.7);
    expect('top_k' in out).toBe(false);
    expect(out.seed).toBe(42);
    expect(out.openai_model).toBe('gpt-4-turbo');
    expect(imported(out).preset.prompts).toEqual(edited.prompts);
  });
});

describe('preset import', () => {
  it('never imports secrets and says which were left out', () => {
    const { preset, problems } = imported({
      ...stDefault(),
      reverse_proxy: 'https://proxy.example',
      proxy_password: 'hunter2',
      custom_include_headers: 'Authorization: Bearer sk-1',
      api_key_openai: 'sk-2',
    });
    const text = JSON.stringify(presetToSillyTavern(preset)) + JSON.stringify(preset);
    for (const secret of ['proxy.example', 'hunter2', 'sk-1', 'sk-2']) expect(text).not.toContain(secret);
    expect(problems).toHaveLength(4);
    expect(problems.join(' ')).toContain('reverse_proxy');
  });

  it('a preset without a 100001 order gets the default order; 100000 alone is ignored (PromptManager.js:852-860)', () => {
    const { preset } = imported({
      prompts: [],
      prompt_order: [{ character_id: 100000, order: [{ identifier: 'main', enabled: false }] }],
    });
    expect(preset.order).toEqual(defaultPreset().order);
    // the built-in prompt definitions are re-added (PromptManager.js:889-903)
    expect(preset.prompts.map((p) => p.identifier)).toContain('chatHistory');
  });

  it('the order id may be a string (PromptManager.js:1053-1055)', () => {
    const { preset } = imported({
      prompt_order: [{ character_id: '100001', order: [{ identifier: 'main', enabled: true }] }],
    });
    expect(preset.order).toEqual([{ identifier: 'main', enabled: true }]);
  });

  it('migrates names_in_completion to names behaviour 1 (openai.js:3790-3792)', () => {
    expect(imported({ prompts: [], names_in_completion: true }).preset.namesBehavior).toBe('completion');
    expect(imported({ prompts: [], names_behavior: 2 }).preset.namesBehavior).toBe('content');
    expect(imported({ prompts: [], names_behavior: -1 }).preset.namesBehavior).toBe('none');
  });

  it('a sampler value out of range is reported, not taken, and still exported as it was', () => {
    const { preset, problems } = imported({ prompts: [], temperature: 7 });
    expect(preset.sampler.temperature).toBeUndefined();
    expect(problems).toEqual(['“temperature” = 7 is out of range and was not taken.']);
    expect(presetToSillyTavern(preset).temperature).toBe(7);
  });

  it('refuses what is not a preset with a clear error', () => {
    for (const bad of [null, [], 'x', { name: 'Seraphina', first_mes: 'hi' }]) {
      const r = presetFromSillyTavern(bad, 'x');
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe('preset.invalid');
    }
  });

  it("the built-in Default equals SillyTavern's Default in what it means", () => {
    const ours = defaultPreset();
    const theirs = imported(stDefault()).preset;
    const meaning = (p: typeof ours) => ({ ...p, source: undefined });
    expect(meaning(ours)).toEqual(meaning(theirs));
  });
});
