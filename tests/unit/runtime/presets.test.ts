import 'fake-indexeddb/auto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexiePresetStore } from '$lib/adapters/db/preset-store';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import { setBudget } from '$lib/chat/preset/edit';
import { DEFAULT_PRESET_ID, defaultPreset } from '$lib/chat/preset/sillytavern';
import { PresetService } from '$lib/runtime/presets';
import { budgetLine } from '$lib/ui/chat/prompt-preview';

const DEFAULT =
  '../shared/content/sillytavern/SillyTavern@staging-1ac6780/default/content/presets/openai/Default.json';

let n = 0;
const service = () =>
  new PresetService({
    presets: new DexiePresetStore(openHearthDatabase(`hearth-presets-${++n}-${Math.random()}`)),
    clock: systemClock,
    ids: randomIds,
  });

describe('PresetService', () => {
  it("imports SillyTavern's Default without its secrets and exports it with every other field", async () => {
    const presets = service();
    const file = JSON.parse(await readFile(DEFAULT, 'utf8'));
    const bytes = new TextEncoder().encode(
      JSON.stringify({ ...file, reverse_proxy: 'https://evil.example' }),
    );
    const { preset, problems } = await presets.import('Mine.json', bytes);
    expect(preset).toMatchObject({ name: 'Mine', builtIn: false, maxContextTokens: file.openai_max_context });
    expect(problems.join(' ')).toMatch(/reverse_proxy/);
    const exported = JSON.parse(new TextDecoder().decode((await presets.export(preset.id)).bytes));
    expect(exported.reverse_proxy).toBeUndefined();
    const { reverse_proxy: _r, proxy_password: _p, custom_include_headers: _h, ...kept } = file;
    expect(exported).toEqual(kept);
  });

  it('lists the built-in Default first, selects a preset for chats, and refuses to delete the Default', async () => {
    const presets = service();
    const file = await readFile(DEFAULT);
    const { preset } = await presets.import('B.json', file);
    expect((await presets.list()).presets.map((p) => [p.name, p.builtIn])).toEqual([
      ['Default', true],
      ['B', false],
    ]);
    expect((await presets.list()).selectedId).toBe(DEFAULT_PRESET_ID);
    await presets.select(preset.id);
    expect((await presets.list()).selectedId).toBe(preset.id);
    await expect(presets.delete(DEFAULT_PRESET_ID)).rejects.toMatchObject({
      error: { code: 'preset.built_in' },
    });
    await presets.delete(preset.id);
    expect((await presets.list()).selectedId).toBe(DEFAULT_PRESET_ID);
    await expect(presets.import('x.json', new TextEncoder().encode('{oops'))).rejects.toMatchObject({
      error: { code: 'preset.invalid' },
    });
  });
});

describe('PresetService editing', () => {
  it('gets a whole preset, saves an edit with updatedAt bumped, and exports the edit', async () => {
    let now = 1_000;
    const presets = new PresetService({
      presets: new DexiePresetStore(openHearthDatabase(`hearth-presets-${++n}-${Math.random()}`)),
      clock: { now: () => now },
      ids: randomIds,
    });
    const { preset: imported } = await presets.import('Mine.json', await readFile(DEFAULT));
    const got = await presets.get(imported.id);
    expect(got).toMatchObject({ id: imported.id, builtIn: false, createdAt: 1_000, updatedAt: 1_000 });
    now = 2_000;
    const edit = setBudget(got.preset, { maxContextTokens: 8_000, maxReplyTokens: 500 });
    if (!edit.ok) throw new Error(edit.error.message);
    const saved = await presets.save(imported.id, edit.value);
    expect(saved).toMatchObject({ createdAt: 1_000, updatedAt: 2_000 });
    expect((await presets.get(imported.id)).preset.maxContextTokens).toBe(8_000);
    expect((await presets.list()).presets.find((p) => p.id === imported.id)!.maxContextTokens).toBe(8_000);
    const file = JSON.parse(new TextDecoder().decode((await presets.export(imported.id)).bytes));
    expect([file.openai_max_context, file.openai_max_tokens]).toEqual([8_000, 500]);
  });

  it('refuses an invalid preset, a missing one and the built-in Default, storing nothing', async () => {
    const presets = service();
    const { preset: imported } = await presets.import('Mine.json', await readFile(DEFAULT));
    const before = await presets.get(imported.id);
    await expect(presets.save(imported.id, { ...before.preset, maxContextTokens: -5 })).rejects.toMatchObject(
      { error: { code: 'preset.invalid', message: /maxContextTokens/ } },
    );
    await expect(presets.save(imported.id, { name: 'x' })).rejects.toMatchObject({
      error: { code: 'preset.invalid' },
    });
    expect(await presets.get(imported.id)).toEqual(before);
    await expect(presets.save('preset_gone', before.preset)).rejects.toMatchObject({
      error: { code: 'preset.not_found' },
    });
    await expect(presets.get('preset_gone')).rejects.toMatchObject({ error: { code: 'preset.not_found' } });
    await expect(presets.save(DEFAULT_PRESET_ID, before.preset)).rejects.toMatchObject({
      error: { code: 'preset.built_in', message: /duplicate/ },
    });
  });

  it('shows the Default read-only and duplicates it (or any preset) into an editable copy', async () => {
    const presets = service();
    const builtIn = await presets.get(DEFAULT_PRESET_ID);
    expect(builtIn).toMatchObject({ builtIn: true, preset: defaultPreset() });
    const copy = await presets.duplicate(DEFAULT_PRESET_ID);
    expect(copy).toMatchObject({ name: 'Default (copy)', builtIn: false });
    const detail = await presets.get(copy.id);
    expect({ ...detail.preset, name: 'Default' }).toEqual(defaultPreset());
    const again = await presets.duplicate(copy.id);
    expect(again.name).toBe('Default (copy) (copy)');
    expect((await presets.list()).presets.map((p) => p.name)).toEqual([
      'Default',
      'Default (copy)',
      'Default (copy) (copy)',
    ]);
  });
});

describe('budgetLine', () => {
  const budget = {
    maxContextTokens: 4_095,
    maxReplyTokens: 300,
    limit: 3_792,
    used: 3_650,
    tokenizer: 'o200k',
    agentTokens: 900,
    history: { total: 10_001, sent: 1_842, oldestSent: 8_159 },
    examples: { total: 0, sent: 0 },
    overflow: null,
  };
  it('says how much of the chat fits', () => {
    expect(budgetLine({ budget, model: 'gpt-4o' })).toBe(
      '3,650 of 3,792 tokens (4,095 context − 300 for the reply), counted for gpt-4o · 1,842 of 10,001 messages fit; 8,159 older left out',
    );
    expect(
      budgetLine({ budget: { ...budget, history: { total: 3, sent: 3, oldestSent: 0 } }, model: 'm' }),
    ).toMatch(/all 3 messages of the chat$/);
  });
});
