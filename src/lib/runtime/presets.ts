import {
  DEFAULT_PRESET_ID,
  defaultPreset,
  presetFromSillyTavern,
  presetToSillyTavern,
} from '$lib/chat/preset/sillytavern';
import { PresetSchema, type Preset, type PresetRecord } from '$lib/chat/preset/preset';
import { exportFileName } from '$lib/chat/records';
import { HearthFailure, hearthError } from '$lib/domain/errors';
import type { StoredIssue } from '$lib/ports/characters';
import type { Clock, Ids } from '$lib/ports/clock';
import type { PresetStore } from '$lib/ports/presets';

/** A preset as the Presets page and the chat's picker list it. */
export interface PresetSummary {
  id: string;
  name: string;
  prompts: number;
  maxContextTokens: number;
  /** The built-in Default: always there, never deleted. */
  builtIn: boolean;
}

/** A whole preset for the editor; the built-in Default is read-only (duplicate it to edit). */
export interface PresetDetail extends PresetRecord {
  builtIn: boolean;
}

const summary = (id: string, preset: Preset, builtIn = false): PresetSummary => ({
  id,
  name: preset.name,
  prompts: preset.prompts.length,
  maxContextTokens: preset.maxContextTokens,
  builtIn,
});

/** Chat Completion presets (D23): SillyTavern's files in and out, and the one chats use. */
export class PresetService {
  constructor(private readonly deps: { presets: PresetStore; clock: Clock; ids: Ids }) {}

  async list(): Promise<{ presets: PresetSummary[]; selectedId: string; issues: StoredIssue[] }> {
    const { records, issues } = await this.deps.presets.list();
    const stored = records
      .map((r) => summary(r.id, r.preset))
      .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }));
    const selected = await this.deps.presets.selectedId();
    const selectedId = selected && stored.some((p) => p.id === selected) ? selected : DEFAULT_PRESET_ID;
    return { presets: [summary(DEFAULT_PRESET_ID, defaultPreset(), true), ...stored], selectedId, issues };
  }

  /** A SillyTavern preset file; what was not taken (secrets, bad values) is in `problems`. */
  async import(fileName: string, bytes: Uint8Array): Promise<{ preset: PresetSummary; problems: string[] }> {
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw new HearthFailure(
        hearthError('preset.invalid', `“${fileName}” is not valid JSON (${(e as Error).message}).`),
      );
    }
    const read = presetFromSillyTavern(json, fileName.replace(/\.json$/i, ''));
    if (!read.ok) throw new HearthFailure(read.error);
    const now = this.deps.clock.now();
    const id = this.deps.ids.contentId('preset');
    await this.deps.presets.put({ id, preset: read.value.preset, createdAt: now, updatedAt: now });
    return { preset: summary(id, read.value.preset), problems: read.value.problems };
  }

  async get(id: string): Promise<PresetDetail> {
    if (id === DEFAULT_PRESET_ID)
      return { id, preset: defaultPreset(), createdAt: 0, updatedAt: 0, builtIn: true };
    return { ...(await this.#record(id)), builtIn: false };
  }

  /** Saves the whole preset as the editor made it; nothing is stored when it is not valid. */
  async save(id: string, preset: unknown): Promise<PresetDetail> {
    if (id === DEFAULT_PRESET_ID)
      throw new HearthFailure(
        hearthError(
          'preset.built_in',
          'The Default preset is built in: duplicate it to make an editable copy.',
        ),
      );
    const record = await this.#record(id);
    const parsed = PresetSchema.safeParse(preset);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new HearthFailure(
        hearthError(
          'preset.invalid',
          `The preset was not saved: ${issue?.path.join('.') || 'it'}: ${issue?.message ?? 'is not valid'}.`,
        ),
      );
    }
    const saved: PresetRecord = { ...record, preset: parsed.data, updatedAt: this.deps.clock.now() };
    await this.deps.presets.put(saved);
    return { ...saved, builtIn: false };
  }

  /** An editable copy named “… (copy)”, the built-in Default too. */
  async duplicate(id: string): Promise<PresetSummary> {
    const { preset } = await this.get(id);
    const now = this.deps.clock.now();
    const copy: Preset = { ...structuredClone(preset), name: `${preset.name} (copy)` };
    const newId = this.deps.ids.contentId('preset');
    await this.deps.presets.put({ id: newId, preset: copy, createdAt: now, updatedAt: now });
    return summary(newId, copy);
  }

  /** The preset as a SillyTavern file (fields Hearth does not read go back out unchanged). */
  async export(id: string): Promise<{ fileName: string; mimeType: string; bytes: Uint8Array }> {
    const { preset } = await this.get(id);
    const text = JSON.stringify(presetToSillyTavern(preset), null, 4);
    return {
      fileName: exportFileName(preset.name, 'json', 'preset'),
      mimeType: 'application/json',
      bytes: new TextEncoder().encode(text),
    };
  }

  async delete(id: string): Promise<void> {
    if (id === DEFAULT_PRESET_ID)
      throw new HearthFailure(hearthError('preset.built_in', 'The Default preset is built in and stays.'));
    await this.#record(id);
    await this.deps.presets.delete(id);
  }

  /** The preset chats without their own choice use. */
  async select(id: string): Promise<void> {
    if (id !== DEFAULT_PRESET_ID) await this.#record(id);
    await this.deps.presets.setSelectedId(id === DEFAULT_PRESET_ID ? null : id);
  }

  async #record(id: string) {
    const record = await this.deps.presets.get(id);
    if (!record) throw new HearthFailure(hearthError('preset.not_found', 'That preset no longer exists.'));
    return record;
  }
}
