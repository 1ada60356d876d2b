import { z } from 'zod';
import type { PackageFile } from '$lib/domain/package-files';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { HearthFailure } from '$lib/domain/errors';
import type { InstalledSkill, SkillStore } from '$lib/ports/skills';
import type { Workspace } from '$lib/ports/workspace';
import type { HearthDatabase } from './database';
import { guarded } from './stores';

const scopeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('global') }),
  z.object({ kind: z.literal('profile'), profileId: z.string() }),
  z.object({ kind: z.literal('character'), characterId: z.string() }),
]);

/** An index row: the skill, and the library folder its files are in (one per installed version). */
const rowSchema = z.object({
  name: z.string(),
  description: z.string(),
  sha256: z.string(),
  files: z.array(z.object({ path: z.string(), bytes: z.number() })),
  scopes: z.array(scopeSchema),
  sources: z.array(z.string()),
  installedAt: z.number(),
  updatedAt: z.number(),
  dir: z.string(),
});
export type SkillRow = z.infer<typeof rowSchema>;

const PARALLEL_WRITES = 8;

const path = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new HearthFailure(parsed.error);
  return parsed.value;
};

/**
 * Installed skills: the index in IndexedDB, the files in the skill library (an OPFS workspace)
 * under `installed/<name>@<hash>/`. A skill's files are written to their own folder before the
 * index points at it, and the folder it replaced is removed after, so a failure midway leaves
 * the installed version as it was.
 */
export class DexieSkillStore implements SkillStore {
  constructor(
    private readonly db: HearthDatabase,
    private readonly library: () => Promise<Workspace>,
  ) {}

  list = () =>
    guarded('list skills', async () =>
      (await this.db.skills.toArray())
        .flatMap((row) => {
          const parsed = rowSchema.safeParse(row);
          return parsed.success ? [skillOf(parsed.data)] : [];
        })
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    );

  get = async (name: string) => {
    const row = await this.#row(name);
    return row ? skillOf(row) : undefined;
  };

  read = async (name: string, file: string) => {
    const row = await this.#row(name);
    if (!row || !row.files.some((f) => f.path === file)) return undefined;
    const read = await (await this.library()).read(path(`${row.dir}/${file}`));
    return read.ok ? read.value : undefined;
  };

  files = async (name: string): Promise<PackageFile[]> => {
    const row = await this.#row(name);
    if (!row) return [];
    const library = await this.library();
    return Promise.all(
      row.files.map(async (f) => {
        const read = await library.read(path(`${row.dir}/${f.path}`));
        if (!read.ok) throw new HearthFailure(read.error);
        return { path: f.path, bytes: read.value };
      }),
    );
  };

  put = async (skill: InstalledSkill, files?: readonly PackageFile[]) => {
    const before = await this.#row(skill.name);
    const dir = files ? `installed/${skill.name}@${skill.sha256.slice(0, 16)}` : (before?.dir ?? '');
    const library = await this.library();
    if (files && dir !== before?.dir) {
      // A few at a time: OPFS writes of separate files overlap well.
      for (let i = 0; i < files.length; i += PARALLEL_WRITES) {
        await Promise.all(
          files.slice(i, i + PARALLEL_WRITES).map(async (file) => {
            const written = await library.write(path(`${dir}/${file.path}`), file.bytes);
            if (!written.ok) throw new HearthFailure(written.error);
          }),
        );
      }
    }
    await guarded('save the skill', async () => void (await this.db.skills.put({ ...skill, dir })));
    if (before && before.dir !== dir) await library.remove(path(before.dir));
  };

  delete = async (name: string) => {
    const row = await this.#row(name);
    await guarded('remove the skill', () => this.db.skills.delete(name));
    if (row) await (await this.library()).remove(path(row.dir));
  };

  async #row(name: string): Promise<SkillRow | undefined> {
    const parsed = rowSchema.safeParse(await guarded('read the skill', () => this.db.skills.get(name)));
    return parsed.success ? parsed.data : undefined;
  }
}

const skillOf = ({ dir: _, ...skill }: SkillRow): InstalledSkill => skill;
