import { describe, expect, it } from 'vitest';
import {
  connectionSchema,
  draftFromPreset,
  redactConnection,
  upgradeConnection,
  upgradeImages,
} from '$lib/domain/connection';
import { PRESET_IDS, PROVIDER_PRESETS } from '$lib/domain/provider-presets';

describe('connections', () => {
  it('upgrades a version-1 OpenAI-compatible row to a valid remote connection, keeping its key', () => {
    const v1 = {
      kind: 'openai-compatible',
      id: 'mine-abc',
      displayName: 'Mine',
      baseUrl: 'http://localhost:11434/v1',
      apiKey: 'sk-1',
      model: 'qwen3',
    };
    const upgraded = connectionSchema.parse(upgradeConnection(v1));
    expect(upgraded).toMatchObject({
      kind: 'remote',
      preset: 'custom',
      wire: 'openai-chat',
      apiKey: 'sk-1',
      relayUrl: '',
    });
    expect(upgradeConnection(upgraded)).toBe(upgraded);
  });

  it.each(PRESET_IDS.filter((id) => id !== 'custom'))(
    'preset %s yields a valid connection once a model is set',
    (id) => {
      const draft = draftFromPreset(id);
      const parsed = connectionSchema.safeParse({
        ...draft,
        kind: 'remote',
        id: 'x',
        apiKey: '',
        model: 'm',
      });
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      expect(draft.wire).toBe(PROVIDER_PRESETS[id].wire);
    },
  );

  it('rejects a relay that is not an http(s) URL, with a readable message', () => {
    const parsed = connectionSchema.safeParse({
      ...draftFromPreset('openai'),
      kind: 'remote',
      id: 'x',
      apiKey: '',
      model: 'm',
      relayUrl: 'ftp://relay',
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/relay/);
  });

  it('masks the key for display', () => {
    const c = connectionSchema.parse({
      ...draftFromPreset('openai'),
      kind: 'remote',
      id: 'x',
      apiKey: 'sk-secret-1234',
      model: 'm',
    });
    const shown = redactConnection(c);
    expect(shown.kind === 'remote' && shown.apiKey).toBe('••••1234');
    expect(JSON.stringify(shown)).not.toContain('secret');
  });

  it('an old yes/no for images becomes auto when it was the preset’s default, else the person’s word', () => {
    const old = (preset: string, images: boolean) => ({
      ...draftFromPreset('openai'),
      preset,
      kind: 'remote',
      id: 'x',
      apiKey: 'sk-1',
      model: 'm',
      capabilities: { tools: true, images, reasoning: false },
    });
    const images = (row: unknown) => {
      const c = connectionSchema.parse(upgradeConnection(row));
      if (c.kind !== 'remote') throw new Error('expected a remote connection');
      return c.capabilities;
    };
    expect(images(old('openai', true))).toEqual({ tools: true, images: 'auto', reasoning: false });
    expect(images(old('openai', false)).images).toBe('off');
    expect(images(old('ollama', false)).images).toBe('auto');
    expect(images(old('ollama', true)).images).toBe('on');
    expect(upgradeImages('custom', false)).toBe('auto');
    expect(upgradeImages('xai', true)).toBe('auto');
    expect(connectionSchema.safeParse(old('openai', true)).success).toBe(false);
  });
});
