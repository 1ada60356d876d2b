import { describe, expect, it } from 'vitest';
import { addCustomPrompt, updatePrompt } from '$lib/chat/preset/edit';
import type { Preset } from '$lib/chat/preset/preset';
import { defaultPreset } from '$lib/chat/preset/sillytavern';
import { promptFacts, promptRows, promptsOutsideOrder } from '$lib/ui/presets/prompt-rows';

const done = (r: { ok: true; value: Preset } | { ok: false; error: { message: string } }): Preset => {
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

describe('the preset editor’s prompt rows', () => {
  it('list the order with its prompts, first and last marked, keys unique even for a repeated entry', () => {
    const preset = defaultPreset();
    preset.order.push({ identifier: 'main', enabled: false }, { identifier: 'gone', enabled: true });
    const rows = promptRows(preset);
    expect(rows.map((r) => r.key).slice(-3)).toEqual(['jailbreak', 'main#1', 'gone']);
    expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
    expect([rows[0]!.first, rows[0]!.last, rows.at(-1)!.last]).toEqual([true, false, true]);
    expect(rows.at(-1)!.prompt).toBeUndefined();
    expect(rows[0]!.prompt!.name).toBe('Main Prompt');
  });

  it('list the prompts the order leaves out', () => {
    const preset = defaultPreset();
    preset.order = preset.order.filter((e) => e.identifier !== 'scenario');
    expect(promptsOutsideOrder(preset).map((p) => p.identifier)).toEqual(['scenario']);
  });

  it('say what a prompt is and where it goes', () => {
    const preset = done(addCustomPrompt(defaultPreset(), 'Tone'));
    const at = done(
      updatePrompt(preset, 'custom_1', { injectionPosition: 'depth', injectionDepth: 2, role: 'user' }),
    );
    const facts = (p: Preset, id: string) => promptFacts(p.prompts.find((x) => x.identifier === id)!);
    expect(facts(at, 'custom_1')).toBe('custom · user · in the chat at depth 2');
    expect(facts(at, 'main')).toBe('built in · system · at its place');
    expect(facts(at, 'chatHistory')).toBe('marker: the chat’s messages');
  });
});
