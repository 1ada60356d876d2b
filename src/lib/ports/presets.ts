import type { PresetRecord } from '$lib/chat/preset/preset';
import type { StoredList } from './characters';

/**
 * Stored presets (D23) and the one new chats use. The built-in Default is not stored: it is always
 * there (`DEFAULT_PRESET_ID`), and `get` of it answers undefined.
 */
export interface PresetStore {
  list(): Promise<StoredList<PresetRecord>>;
  get(id: string): Promise<PresetRecord | undefined>;
  put(preset: PresetRecord): Promise<void>;
  /** Deletes the preset; chats that chose it go back to the selected one. */
  delete(id: string): Promise<void>;
  /** The preset chats without their own choice use (SillyTavern's selected preset); null: Default. */
  selectedId(): Promise<string | null>;
  setSelectedId(id: string | null): Promise<void>;
}
