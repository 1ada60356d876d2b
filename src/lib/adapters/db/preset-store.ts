import { PresetRecordSchema, type PresetRecord } from '$lib/chat/preset/preset';
import type { PresetStore } from '$lib/ports/presets';
import { decodeAll, decodeOne } from './character-stores';
import type { HearthDatabase, PresetRow } from './database';
import { guarded } from './stores';

export const SELECTED_PRESET_KEY = 'selectedPresetId';

const presetRow = (p: PresetRecord): PresetRow => ({ ...p, name: p.preset.name });

/** Presets in the Dexie `presets` table (version 9); the selected one is a setting. */
export class DexiePresetStore implements PresetStore {
  constructor(private readonly db: HearthDatabase) {}

  list = () =>
    guarded('list presets', async () =>
      decodeAll(PresetRecordSchema, 'preset', await this.db.presets.orderBy('name').toArray()),
    );

  get = (id: string) =>
    guarded('read the preset', async () =>
      decodeOne(PresetRecordSchema, 'preset', await this.db.presets.get(id)),
    );

  put = (preset: PresetRecord) =>
    guarded('save the preset', async () => void (await this.db.presets.put(presetRow(preset))));

  delete = (id: string) =>
    guarded('delete the preset', () =>
      this.db.transaction('rw', [this.db.presets, this.db.chats, this.db.settings], async () => {
        await this.db.chats
          .filter((c) => c.presetId === id)
          .modify((c) => {
            delete c.presetId;
          });
        if ((await this.db.settings.get(SELECTED_PRESET_KEY))?.value === id)
          await this.db.settings.delete(SELECTED_PRESET_KEY);
        await this.db.presets.delete(id);
      }),
    );

  selectedId = () =>
    guarded('read the selected preset', async () => {
      const value = (await this.db.settings.get(SELECTED_PRESET_KEY))?.value;
      return typeof value === 'string' ? value : null;
    });

  setSelectedId = (id: string | null) =>
    guarded('select the preset', async () => {
      if (id === null) await this.db.settings.delete(SELECTED_PRESET_KEY);
      else await this.db.settings.put({ key: SELECTED_PRESET_KEY, value: id });
    });
}
