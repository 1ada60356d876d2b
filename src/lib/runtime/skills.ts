import { hearthError, HearthFailure } from '$lib/domain/errors';
import { checkPackageFiles, type PackageFile } from '$lib/domain/package-files';
import {
  effectiveSkills,
  SKILL_PACKAGE_LIMITS,
  skillFormatWarnings,
  skillHash,
  skillPackages,
  type SkillFormatWarning,
  type SkillScope,
} from '$lib/domain/skill';
import type { Clock } from '$lib/ports/clock';
import type { InstalledSkill, SkillStore } from '$lib/ports/skills';
import type { Workspace } from '$lib/ports/workspace';
import { skillsSection, withSkillsMount } from './skills-mount';

/** One skill of a package, as installing it would go (tools.md §16.3's compare step). */
export interface SkillInspection {
  name: string;
  description: string;
  files: number;
  bytes: number;
  sha256: string;
  /** New; the same as installed (merged quietly); or a different skill of the same name. */
  change: 'new' | 'same' | 'different';
  /** Where it departs from the Agent Skills format; it installs all the same. */
  warnings: SkillFormatWarning[];
}

export interface SkillsDeps {
  store: SkillStore;
  clock: Clock;
}

/**
 * The skills a person installed (tools.md §16): packages checked whole before anything is stored
 * (limits, paths, front matter, names), conflicts decided by the person (the same content merges
 * its sources quietly; a different skill of the same name is skipped or replaced, never renamed),
 * scopes, and which skills an invocation gets. Models never reach this: they only read the mount.
 */
export class Skills {
  constructor(private readonly deps: SkillsDeps) {}

  list(): Promise<InstalledSkill[]> {
    return this.deps.store.list();
  }

  /** What installing `files` would do, skill by skill. Throws with the reason for a bad package. */
  async inspect(files: readonly PackageFile[]): Promise<SkillInspection[]> {
    return (await this.#packages(files)).map(({ inspection }) => inspection);
  }

  /**
   * Installs every skill of the package into `scope`. `decisions` says, for each skill whose name
   * is taken by a different one, whether to replace it or skip it; without one it is refused.
   */
  async install(
    files: readonly PackageFile[],
    options: { scope: SkillScope; source: string; decisions?: Record<string, 'replace' | 'skip'> },
  ): Promise<InstalledSkill[]> {
    const packages = await this.#packages(files);
    const undecided = packages.filter(
      (p) => p.inspection.change === 'different' && !options.decisions?.[p.inspection.name],
    );
    if (undecided.length > 0)
      throw new HearthFailure(
        hearthError(
          'skill.conflict',
          `A different skill is already installed as ${undecided.map((p) => `"${p.inspection.name}"`).join(', ')}: choose to replace it or skip it.`,
        ),
      );
    const now = this.deps.clock.now();
    const installed: InstalledSkill[] = [];
    for (const { inspection, files: own } of packages) {
      const current = await this.deps.store.get(inspection.name);
      if (inspection.change === 'different' && options.decisions?.[inspection.name] === 'skip') continue;
      const scopes = merge(inspection.change === 'new' ? [] : (current?.scopes ?? []), [options.scope]);
      // A replacement keeps where the person put the skill, not what brought the old content.
      const sources = [
        ...new Set([...(inspection.change === 'same' ? (current?.sources ?? []) : []), options.source]),
      ];
      const skill: InstalledSkill = {
        name: inspection.name,
        description: inspection.description,
        sha256: inspection.sha256,
        files: own.map((f) => ({ path: f.path, bytes: f.bytes.byteLength })),
        scopes,
        sources,
        installedAt: current && inspection.change !== 'different' ? current.installedAt : now,
        updatedAt: now,
      };
      await this.deps.store.put(skill, inspection.change === 'same' ? undefined : own);
      installed.push(skill);
    }
    return installed;
  }

  async setScopes(name: string, scopes: SkillScope[]): Promise<InstalledSkill> {
    const skill = await this.#get(name);
    const next = { ...skill, scopes: merge([], scopes), updatedAt: this.deps.clock.now() };
    await this.deps.store.put(next);
    return next;
  }

  /**
   * What `source` brought goes with it (deleting a character): a skill only it referenced is
   * removed; one others brought too loses that source and the scope it gave.
   */
  async forgetSource(source: string, scope?: SkillScope): Promise<void> {
    for (const skill of await this.deps.store.list()) {
      if (!skill.sources.includes(source)) continue;
      const sources = skill.sources.filter((s) => s !== source);
      if (sources.length === 0) {
        await this.deps.store.delete(skill.name);
        continue;
      }
      const scopes = scope ? skill.scopes.filter((s) => scopeKey(s) !== scopeKey(scope)) : skill.scopes;
      await this.deps.store.put({ ...skill, sources, scopes, updatedAt: this.deps.clock.now() });
    }
  }

  async remove(name: string): Promise<void> {
    await this.#get(name);
    await this.deps.store.delete(name);
  }

  /** A file of an installed skill (the Skills page's viewer). */
  async read(name: string, path: string): Promise<Uint8Array> {
    const bytes = await this.deps.store.read(name, path);
    if (!bytes) throw new HearthFailure(hearthError('skill.not_found', `"${name}" has no file ${path}.`));
    return bytes;
  }

  /** A skill's own files, for an export. */
  async files(name: string): Promise<PackageFile[]> {
    await this.#get(name);
    return this.deps.store.files(name);
  }

  /** The skills an invocation of `profileId` (in a chat with `characterId`) gets (tools.md §16.5). */
  async effective(ctx: {
    profileId: string;
    characterId?: string;
    visible: readonly string[];
    deny: readonly string[];
  }): Promise<InstalledSkill[]> {
    const all = await this.deps.store.list();
    const names = new Set(effectiveSkills(all, { ...ctx, visible: [...ctx.visible], deny: [...ctx.deny] }));
    return all.filter((s) => names.has(s.name));
  }

  /**
   * An invocation's view of the skills (tools.md §16.5): its workspace with the skills of
   * `ctx` mounted read-only at `skills/`, and the section of its instructions that lists them.
   */
  async forInvocation(
    workspace: Workspace,
    ctx: { profileId: string; characterId?: string; visible: readonly string[]; deny: readonly string[] },
  ): Promise<{ workspace: Workspace; section: string | null }> {
    const skills = await this.effective(ctx);
    return skills.length
      ? { workspace: withSkillsMount(workspace, skills, this.deps.store), section: skillsSection(skills) }
      : { workspace, section: null };
  }

  async #packages(files: readonly PackageFile[]) {
    const checked = checkPackageFiles(files, SKILL_PACKAGE_LIMITS);
    if (!checked.ok) throw new HearthFailure(checked.error);
    const packages = skillPackages(checked.value);
    if (!packages.ok) throw new HearthFailure(packages.error);
    return Promise.all(
      packages.value.map(async (pkg) => {
        const sha256 = await skillHash(pkg.files);
        const current = await this.deps.store.get(pkg.name);
        const inspection: SkillInspection = {
          name: pkg.name,
          description: pkg.description,
          files: pkg.files.length,
          bytes: pkg.files.reduce((n, f) => n + f.bytes.byteLength, 0),
          sha256,
          change: !current ? 'new' : current.sha256 === sha256 ? 'same' : 'different',
          warnings: skillFormatWarnings(pkg),
        };
        return { inspection, files: pkg.files };
      }),
    );
  }

  async #get(name: string): Promise<InstalledSkill> {
    const skill = await this.deps.store.get(name);
    if (!skill) throw new HearthFailure(hearthError('skill.not_found', `There is no skill "${name}".`));
    return skill;
  }
}

const scopeKey = (s: SkillScope) =>
  s.kind === 'global'
    ? 'global'
    : s.kind === 'profile'
      ? `profile:${s.profileId}`
      : `character:${s.characterId}`;

/** Scopes without repeats, in the order given. */
function merge(a: readonly SkillScope[], b: readonly SkillScope[]): SkillScope[] {
  const seen = new Map<string, SkillScope>();
  for (const s of [...a, ...b]) if (!seen.has(scopeKey(s))) seen.set(scopeKey(s), s);
  return [...seen.values()];
}
