import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { InstalledSkill, SkillStore } from '$lib/ports/skills';
import type { Workspace, WorkspaceEntry, WorkspaceError } from '$lib/ports/workspace';
import { err, ok } from '$lib/domain/result';

const ROOT = 'skills';

const notFound = (path: string): { ok: false; error: WorkspaceError } =>
  err({ code: 'workspace.file_not_found', message: `\`${path}\` does not exist.` });

/** Skill names and file paths were checked as paths when they were installed. */
const asPath = (raw: string): WorkspacePath => raw as WorkspacePath;

/**
 * The workspace with an invocation's effective skills mounted read-only at `skills/<name>/`
 * (tools.md §16.5): listing, reading and the shell's copy see each skill's files as installed;
 * nothing under `skills/` can be written (the roots already refuse it, and so does this). Every
 * other path is the workspace's own.
 */
export function withSkillsMount(
  workspace: Workspace,
  skills: readonly InstalledSkill[],
  store: Pick<SkillStore, 'read'>,
): Workspace {
  const byName = new Map(skills.map((s) => [s.name, s] as const));
  /** `skills/<name>/<rest>` → the skill and its path inside it ('' for the skill's folder). */
  const locate = (path: string) => {
    const [root, name, ...rest] = path.split('/');
    if (root !== ROOT) return null;
    if (name === undefined) return { skill: null, inner: '' };
    const skill = byName.get(name);
    return skill ? { skill, inner: rest.join('/') } : { skill: undefined, inner: '' };
  };
  const isDir = (skill: InstalledSkill, inner: string) =>
    inner === '' || skill.files.some((f) => f.path.startsWith(`${inner}/`));
  const refuse = (path: string) =>
    err<WorkspaceError>({
      code: 'workspace.storage_failed',
      message: `\`${path}\` is in the read-only skills/ mount.`,
    });

  return {
    key: workspace.key,
    async stat(path) {
      const at = locate(path);
      if (!at) return workspace.stat(path);
      if (at.skill === null) return ok({ kind: 'directory', size: 0 });
      if (!at.skill) return ok(null);
      const file = at.skill.files.find((f) => f.path === at.inner);
      if (file) return ok({ kind: 'file', size: file.bytes });
      return ok(isDir(at.skill, at.inner) ? { kind: 'directory', size: 0 } : null);
    },
    async read(path) {
      const at = locate(path);
      if (!at) return workspace.read(path);
      if (!at.skill || !at.skill.files.some((f) => f.path === at.inner)) {
        return at.skill && isDir(at.skill, at.inner)
          ? err({ code: 'workspace.path_is_directory', message: `\`${path}\` is a directory.` })
          : notFound(path);
      }
      const bytes = await store.read(at.skill.name, at.inner);
      return bytes ? ok(bytes) : notFound(path);
    },
    async list(dir) {
      if (dir === undefined) {
        const listed = await workspace.list();
        if (!listed.ok) return listed;
        const own = listed.value.filter((e) => e.path !== ROOT);
        if (byName.size === 0) return ok(own);
        const entries: WorkspaceEntry[] = [...own, { path: asPath(ROOT), kind: 'directory' }];
        return ok(entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
      }
      const at = locate(dir);
      if (!at) return workspace.list(dir);
      if (at.skill === null)
        return ok(
          [...byName.keys()]
            .sort()
            .map((name) => ({ path: asPath(`${ROOT}/${name}`), kind: 'directory' as const })),
        );
      if (!at.skill) return notFound(dir);
      if (!isDir(at.skill, at.inner))
        return err({ code: 'workspace.not_a_directory', message: `\`${dir}\` is a file.` });
      const prefix = at.inner ? `${at.inner}/` : '';
      const children = new Map<string, 'file' | 'directory'>();
      for (const f of at.skill.files) {
        if (!f.path.startsWith(prefix)) continue;
        const [head, ...more] = f.path.slice(prefix.length).split('/');
        children.set(head!, more.length ? 'directory' : 'file');
      }
      return ok(
        [...children.entries()]
          .map(([name, kind]) => ({ path: asPath(`${dir}/${name}`), kind }))
          .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      );
    },
    write: (path, data, guard) =>
      locate(path) ? Promise.resolve(refuse(path)) : workspace.write(path, data, guard),
    append: (path, data) => (locate(path) ? Promise.resolve(refuse(path)) : workspace.append(path, data)),
    remove: (path) => (locate(path) ? Promise.resolve(refuse(path)) : workspace.remove(path)),
  };
}

/**
 * The skills section of an invocation's instructions (progressive disclosure): each skill's
 * name, what it is for and where its `SKILL.md` is, to be read only when a task needs it.
 */
export function skillsSection(skills: readonly InstalledSkill[]): string | null {
  if (skills.length === 0) return null;
  return [
    '## Skills',
    'Skills are read-only folders that teach a way of working. When a task matches one, read its `SKILL.md` first and follow it; its scripts run from `/skills/<name>/scripts/` in the shell.',
    ...skills.map((s) => `- \`${s.name}\` (\`skills/${s.name}/SKILL.md\`): ${s.description}`),
  ].join('\n');
}
