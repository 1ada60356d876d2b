import type { PackageFile } from '$lib/domain/package-files';
import type { SkillScope } from '$lib/domain/skill';

/** An installed skill as its index keeps it (its files live in the skill library). */
export interface InstalledSkill {
  name: string;
  description: string;
  sha256: string;
  files: { path: string; bytes: number }[];
  /** Where it applies; a skill with none applies nowhere (kept until removed). */
  scopes: SkillScope[];
  /** What installed it (`file:<name>`, `character:<id>`), for removing what only a card brought. */
  sources: string[];
  installedAt: number;
  updatedAt: number;
}

/** The index of installed skills (IndexedDB) and their files (OPFS). */
export interface SkillStore {
  list(): Promise<InstalledSkill[]>;
  get(name: string): Promise<InstalledSkill | undefined>;
  /** A file of the skill by its path inside the skill, or undefined. */
  read(name: string, path: string): Promise<Uint8Array | undefined>;
  files(name: string): Promise<PackageFile[]>;
  /** Saves the index entry; with `files`, replaces the skill's files first. */
  put(skill: InstalledSkill, files?: readonly PackageFile[]): Promise<void>;
  delete(name: string): Promise<void>;
}
