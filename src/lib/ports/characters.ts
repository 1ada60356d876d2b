import type { CharacterRecord, LorebookRecord, PersonaRecord } from '$lib/chat/records';

/** A stored row that could not be read: lists leave it out and report it. */
export interface StoredIssue {
  id: string;
  message: string;
}

export interface StoredList<T> {
  records: T[];
  issues: StoredIssue[];
}

/**
 * Characters (with their avatars). Every read decodes through the record schema: `list` reports
 * unreadable rows as issues, `get` rejects with `storage.corrupt_record`. Database failures reject
 * with `storage.failed`.
 */
export interface CharacterStore {
  list(): Promise<StoredList<CharacterRecord>>;
  get(id: string): Promise<CharacterRecord | undefined>;
  /** Saves the character; `lorebooks` are saved in the same transaction (an import's embedded book). */
  put(character: CharacterRecord, options?: { lorebooks?: LorebookRecord[] }): Promise<void>;
  /** Deletes the character with its chats and their messages (its lorebooks stay). */
  delete(id: string): Promise<void>;
}

/** Personas and the default persona (a setting). */
export interface PersonaStore {
  list(): Promise<StoredList<PersonaRecord>>;
  get(id: string): Promise<PersonaRecord | undefined>;
  put(persona: PersonaRecord): Promise<void>;
  /** Deletes the persona; chats that chose it fall back to the default, which is cleared if it was this one. */
  delete(id: string): Promise<void>;
  defaultId(): Promise<string | null>;
  setDefaultId(id: string | null): Promise<void>;
}

/** Lorebooks and the globally attached ones (a setting). */
export interface LorebookStore {
  list(): Promise<StoredList<LorebookRecord>>;
  get(id: string): Promise<LorebookRecord | undefined>;
  put(lorebook: LorebookRecord): Promise<void>;
  /** Deletes the lorebook and detaches it everywhere (global, characters, chats) in one transaction. */
  delete(id: string): Promise<void>;
  globalIds(): Promise<string[]>;
  setGlobalIds(ids: string[]): Promise<void>;
}
