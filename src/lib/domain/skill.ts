import { parseDocument } from 'yaml';
import { z } from 'zod';
import { decodeBase64 } from './base64';
import { hearthError, type HearthError } from './errors';
import { packageHash, packagePath, type PackageFile, type PackageLimits } from './package-files';
import { err, ok, type Result } from './result';

/**
 * Skills (tools.md §16): Agent Skills folders — a `SKILL.md` with YAML front matter, and the
 * references, examples, assets and scripts beside it. Everything here is data and rules; storing,
 * importing and mounting them for runs happen elsewhere.
 */

export const SKILL_PACKAGE_LIMITS: PackageLimits = {
  files: 1_000,
  fileBytes: 16 * 1024 * 1024,
  totalBytes: 256 * 1024 * 1024,
  compressionRatio: 100,
};

export const SKILL_MD = 'SKILL.md';
export const SKILL_SIDECAR = 'agents/tauritavern.json';
export const SKILL_MD_MAX_BYTES = 1024 * 1024;
const NAME_MAX = 128;
const NAME = /^[a-z0-9_-]+$/;
/** Zips made on macOS carry resource forks under this folder; they are not part of any skill. */
const MACOS_FOLDER = '__MACOSX';

/** What `SKILL.md`'s front matter says, as far as Hearth reads it. */
export interface SkillFrontMatter {
  name: string;
  description: string;
  license?: string;
  metadata?: { author?: string; version?: string; tags?: string[] };
}

/** The advisory sidecar `agents/tauritavern.json` (tools.md §16.1); it never grants permissions. */
export const skillSidecarSchema = z.strictObject({
  version: z.literal(1, { error: 'version must be 1.' }),
  displayName: z.string({ error: 'displayName must be text.' }).optional(),
  sourceKind: z.string({ error: 'sourceKind must be text.' }).optional(),
  allowImplicitInvocation: z.boolean({ error: 'allowImplicitInvocation must be true or false.' }).optional(),
  recommendedTools: z.array(z.string(), { error: 'recommendedTools must be a list of text.' }).optional(),
  recommendedContext: z
    .strictObject({
      defaultBudgetTokens: z
        .number({ error: 'defaultBudgetTokens must be a number.' })
        .int('defaultBudgetTokens must be a whole number.')
        .positive('defaultBudgetTokens must be above 0.')
        .optional(),
      preferredMode: z.string({ error: 'preferredMode must be text.' }).optional(),
    })
    .optional(),
  tags: z.array(z.string(), { error: 'tags must be a list of text.' }).optional(),
  notes: z.string({ error: 'notes must be text.' }).optional(),
});
export type SkillSidecar = z.infer<typeof skillSidecarSchema>;

/** One skill found in a package: its identity (the front matter's `name`, not its folder) and files. */
export interface SkillPackage {
  name: string;
  description: string;
  frontMatter: SkillFrontMatter;
  sidecar?: SkillSidecar;
  /** The name of the folder its SKILL.md was in; absent for a SKILL.md at the package's root. */
  folder?: string;
  /** The skill's own files, by their paths inside its folder, in path order. */
  files: PackageFile[];
}

/**
 * Where a skill departs from the Agent Skills format (agentskills.io/specification) while Hearth
 * still reads it; the person is told and may install it anyway, as real published skills do.
 */
export type SkillFormatWarning =
  | { code: 'skill.folder_mismatch'; message: string }
  | { code: 'skill.name_too_long'; message: string }
  | { code: 'skill.name_characters'; message: string }
  | { code: 'skill.description_too_long'; message: string };

const FORMAT_NAME_MAX = 64;
const FORMAT_DESCRIPTION_MAX = 1024;

/** The format's warnings for one skill, in the order the format lists its fields. */
export function skillFormatWarnings(skill: {
  name: string;
  description: string;
  folder?: string;
}): SkillFormatWarning[] {
  const warnings: SkillFormatWarning[] = [];
  const { name } = skill;
  if (name.length > FORMAT_NAME_MAX)
    warnings.push({
      code: 'skill.name_too_long',
      message: `The name is ${name.length} characters; the format allows at most ${FORMAT_NAME_MAX}.`,
    });
  if (!/^[a-z0-9-]+$/.test(name) || name.startsWith('-') || name.endsWith('-') || name.includes('--'))
    warnings.push({
      code: 'skill.name_characters',
      message:
        'The name may use only lowercase letters, digits and single hyphens between them (not at its start or end).',
    });
  if (skill.folder !== undefined && skill.folder !== name)
    warnings.push({
      code: 'skill.folder_mismatch',
      message: `The folder is named “${skill.folder}”; the format asks for the skill's name, “${name}”.`,
    });
  const descriptionLength = [...skill.description].length;
  if (descriptionLength > FORMAT_DESCRIPTION_MAX)
    warnings.push({
      code: 'skill.description_too_long',
      message: `The description is ${descriptionLength.toLocaleString('en')} characters; the format allows at most ${FORMAT_DESCRIPTION_MAX.toLocaleString('en')}.`,
    });
  return warnings;
}

const invalid = (message: string) => err(hearthError('skill.invalid', message));

const utf8 = (bytes: Uint8Array): string | null => {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
};

/** Files are Text when they are valid UTF-8, else Binary (tools.md §16.1). */
export const isTextFile = (bytes: Uint8Array): boolean => utf8(bytes) !== null;

/** Scripts are stored and exported, and flagged in previews; they are never run (tools.md §16.1). */
export const isScript = (path: string): boolean => path.startsWith('scripts/');

/** Why `raw` cannot be a skill's name, or null: trimmed, 1–128 of a-z, 0-9, `-`, `_`. */
export function skillNameProblem(raw: string): string | null {
  const name = raw.trim();
  if (name === '') return 'name is empty.';
  if (name === '.' || name === '..') return `name cannot be "${name}".`;
  if (name.length > NAME_MAX) return `name is ${name.length} characters; at most ${NAME_MAX}.`;
  if (!NAME.test(name)) return `name "${name}" may use only lowercase letters a-z, digits 0-9, "-" and "_".`;
  return null;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `SKILL.md` read: at most 1 MiB of UTF-8, opening with `---` front matter closed by a line `---`
 * (CRLF read as LF), whose YAML has a non-empty `name` and `description`. `path` names the file
 * in messages. Front matter keys Hearth does not know (other tools' `allowed-tools`,
 * `compatibility`, other `metadata.*`) are allowed, and left out of the value.
 */
export function parseSkillMd(
  bytes: Uint8Array,
  path = SKILL_MD,
): Result<SkillFrontMatter & { body: string }, HearthError> {
  const at = `\`${path}\``;
  if (bytes.byteLength > SKILL_MD_MAX_BYTES)
    return invalid(`${at} is ${bytes.byteLength.toLocaleString('en')} bytes; at most 1 MiB.`);
  const decoded = utf8(bytes);
  if (decoded === null) return invalid(`${at} is not UTF-8 text.`);
  const text = decoded.replace(/\r\n/g, '\n');
  if (!text.startsWith('---\n'))
    return invalid(`${at} must start with a line "---" opening its YAML front matter.`);
  // Searching from the opening line's own newline lets an empty front matter close at once.
  let close = text.indexOf('\n---', 3);
  while (close !== -1 && close + 4 < text.length && text[close + 4] !== '\n')
    close = text.indexOf('\n---', close + 1);
  if (close === -1) return invalid(`${at}'s front matter is not closed by a line "---".`);
  const yamlText = text.slice(4, Math.max(4, close));
  const body = text.slice(Math.min(text.length, close + 5));

  const raw = parseYaml(yamlText);
  if (!raw.ok) return invalid(`${at}'s front matter is not valid YAML: ${raw.error}`);
  const data = raw.value;
  if (!isRecord(data))
    return invalid(`${at}'s front matter must be YAML keys and values (name, description).`);

  const required = (key: 'name' | 'description'): Result<string, HearthError> => {
    const v = data[key];
    if (v === undefined || v === null) return invalid(`${at}'s front matter has no ${key}.`);
    if (typeof v !== 'string') return invalid(`${at}: ${key} must be text.`);
    if (v.trim() === '') return invalid(`${at}: ${key} is empty.`);
    return ok(v.trim());
  };
  const name = required('name');
  if (!name.ok) return name;
  const nameProblem = skillNameProblem(name.value);
  if (nameProblem) return invalid(`${at}: ${nameProblem}`);
  const description = required('description');
  if (!description.ok) return description;

  const out: SkillFrontMatter & { body: string } = {
    name: name.value,
    description: description.value,
    body,
  };
  if (data.license !== undefined && data.license !== null) {
    if (typeof data.license !== 'string') return invalid(`${at}: license must be text.`);
    out.license = data.license;
  }
  if (data.metadata !== undefined && data.metadata !== null) {
    const m = data.metadata;
    if (!isRecord(m)) return invalid(`${at}: metadata must be YAML keys and values.`);
    const metadata: NonNullable<SkillFrontMatter['metadata']> = {};
    for (const key of ['author', 'version'] as const) {
      const v = m[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string')
        return invalid(`${at}: metadata.${key} must be text (quote it: ${key}: "${String(v)}").`);
      metadata[key] = v;
    }
    if (m.tags !== undefined && m.tags !== null) {
      if (!Array.isArray(m.tags) || !m.tags.every((t) => typeof t === 'string'))
        return invalid(`${at}: metadata.tags must be a list of text.`);
      metadata.tags = [...(m.tags as string[])];
    }
    if (Object.keys(metadata).length > 0) out.metadata = metadata;
  }
  return ok(out);
}

/**
 * YAML 1.2's core schema: plain data only. Custom tags (`!foo`, `!!js/…`) are refused rather than
 * read as text, duplicate keys are errors, and aliases are capped (against "billion laughs" expansion).
 * Line numbers count from the file's first line (the front matter starts on its second).
 */
function parseYaml(source: string): Result<unknown, string> {
  const doc = parseDocument(source, { schema: 'core', prettyErrors: false, uniqueKeys: true });
  const line = (pos: number) => source.slice(0, pos).split('\n').length + 1;
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) return err(`${problem.message} (line ${line(problem.pos[0])}).`);
  try {
    return ok(doc.toJS({ maxAliasCount: 100 }));
  } catch (e) {
    return err(e instanceof Error ? e.message : String(e));
  }
}

/** `agents/tauritavern.json` checked: JSON of the sidecar's shape, with no field it does not know. */
export function parseSkillSidecar(
  bytes: Uint8Array,
  path = SKILL_SIDECAR,
): Result<SkillSidecar, HearthError> {
  const at = `\`${path}\``;
  const text = utf8(bytes);
  if (text === null) return invalid(`${at} is not UTF-8 text.`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return invalid(`${at} is not valid JSON (${e instanceof Error ? e.message : String(e)}).`);
  }
  const parsed = skillSidecarSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) =>
      i.code === 'unrecognized_keys'
        ? `unknown field ${i.keys.map((k) => `"${[...i.path, k].join('.')}"`).join(', ')}`
        : i.path.length && !i.message.startsWith(String(i.path[i.path.length - 1]))
          ? `${i.path.join('.')}: ${i.message}`
          : i.message,
    );
    return invalid(`${at} is not valid: ${problems.join('; ')}`);
  }
  return ok(parsed.data);
}

const listed = (paths: readonly string[]) => {
  const shown = paths.slice(0, 5).map((p) => `\`${p}\``);
  return paths.length > 5 ? `${shown.join(', ')} and ${paths.length - 5} more` : shown.join(', ');
};

const folderOf = (path: string) => path.split('/')[0]!;

/**
 * The skills in a package (files already checked by `checkPackageFiles`), in name order:
 * - one file whose name ends with `SKILL.md` is a skill by itself (stored as `SKILL.md`);
 * - `SKILL.md` at the root makes the whole package one skill;
 * - otherwise each top-level folder holding a `SKILL.md` is a skill, and nothing may lie outside
 *   them. A package that is one folder without `SKILL.md` (a zipped folder of skills) is read
 *   from inside it.
 * `__MACOSX` folders are ignored. Skills are named by their front matter, and a name twice is refused.
 */
export function skillPackages(files: readonly PackageFile[]): Result<SkillPackage[], HearthError> {
  const kept: PackageFile[] = [];
  for (const file of files) {
    const path = packagePath(file.path);
    if (!path.ok) return path;
    if (path.value.split('/').includes(MACOS_FOLDER)) continue;
    kept.push({ path: path.value, bytes: file.bytes });
  }
  const isSkillMd = (path: string) => path === SKILL_MD || path.endsWith(`/${SKILL_MD}`);
  const single = (s: Result<SkillPackage, HearthError>) => (s.ok ? ok([s.value]) : s);

  if (kept.length === 1 && kept[0]!.path.slice(kept[0]!.path.lastIndexOf('/') + 1).endsWith(SKILL_MD))
    return single(readSkill(kept[0]!.path, [{ path: SKILL_MD, bytes: kept[0]!.bytes }]));
  if (!kept.some((f) => isSkillMd(f.path)))
    return invalid(
      'The package has no SKILL.md. A skill is a SKILL.md, or a folder or zip with SKILL.md in it.',
    );

  // A zipped folder of skills: read from inside the folder.
  let prefix = '';
  let root = kept;
  const tops = new Set(kept.map((f) => folderOf(f.path)));
  if (tops.size === 1 && kept.every((f) => f.path.includes('/'))) {
    const top = [...tops][0]!;
    if (!kept.some((f) => f.path === `${top}/${SKILL_MD}`)) {
      prefix = `${top}/`;
      root = kept.map((f) => ({ path: f.path.slice(prefix.length), bytes: f.bytes }));
    }
  }

  if (root.some((f) => f.path === SKILL_MD)) return single(readSkill(`${prefix}${SKILL_MD}`, root));

  const folders = root
    .filter((f) => f.path.split('/').length === 2 && f.path.endsWith(`/${SKILL_MD}`))
    .map((f) => folderOf(f.path))
    .sort();
  if (folders.length === 0)
    return invalid(
      `SKILL.md must be at the package's root or in a top-level folder of it; found only ${listed(
        root.filter((f) => isSkillMd(f.path)).map((f) => prefix + f.path),
      )}.`,
    );
  const inside = new Set(folders);
  const outside = root.filter((f) => !f.path.includes('/') || !inside.has(folderOf(f.path)));
  if (outside.length > 0)
    return invalid(
      `${listed(outside.map((f) => prefix + f.path))} ${outside.length === 1 ? 'is' : 'are'} not inside a skill folder (a top-level folder with SKILL.md).`,
    );

  const skills: SkillPackage[] = [];
  const folderOfName = new Map<string, string>();
  for (const folder of folders) {
    const own = root
      .filter((f) => folderOf(f.path) === folder)
      .map((f) => ({ path: f.path.slice(folder.length + 1), bytes: f.bytes }));
    const skill = readSkill(`${prefix}${folder}/${SKILL_MD}`, own, folder);
    if (!skill.ok) return skill;
    const other = folderOfName.get(skill.value.name);
    if (other !== undefined)
      return invalid(
        `Two skills in the package are named "${skill.value.name}" (\`${prefix}${other}/\` and \`${prefix}${folder}/\`); a name is a skill's identity.`,
      );
    folderOfName.set(skill.value.name, folder);
    skills.push(skill.value);
  }
  skills.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return ok(skills);
}

/** One skill from its own files; `skillMdPath` is where its SKILL.md lies in the package, for messages. */
function readSkill(
  skillMdPath: string,
  files: PackageFile[],
  folder?: string,
): Result<SkillPackage, HearthError> {
  const md = files.find((f) => f.path === SKILL_MD)!;
  const parsed = parseSkillMd(md.bytes, skillMdPath);
  if (!parsed.ok) return parsed;
  const { body: _body, ...frontMatter } = parsed.value;
  const out: SkillPackage = {
    name: frontMatter.name,
    description: frontMatter.description,
    frontMatter,
    ...(folder === undefined ? {} : { folder }),
    files: [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
  };
  const sidecarFile = files.find((f) => f.path === SKILL_SIDECAR);
  if (sidecarFile) {
    const folder = skillMdPath.slice(0, skillMdPath.length - SKILL_MD.length);
    const sidecar = parseSkillSidecar(sidecarFile.bytes, `${folder}${SKILL_SIDECAR}`);
    if (!sidecar.ok) return sidecar;
    out.sidecar = sidecar.value;
  }
  return ok(out);
}

/** A skill's content hash (tools.md §16.1): `packageHash` over its own files, by their paths in its folder. */
export const skillHash = (files: readonly PackageFile[]): Promise<string> => packageHash(files);

/** Where an installed skill applies (tools.md §16.2). */
export type SkillScope =
  { kind: 'global' } | { kind: 'profile'; profileId: string } | { kind: 'character'; characterId: string };

export interface InstalledSkillSummary {
  name: string;
  /** Storage writes `global` when an import names no scope; an empty list applies nowhere. */
  scopes: SkillScope[];
}

export interface SkillContext {
  profileId: string;
  /** The Chat's character; absent for Sessions. */
  characterId?: string;
  /** The profile's `skills.visible`; `*` is every skill. */
  visible: readonly string[];
  /** The profile's `skills.deny`; wins over `visible` (`*` denies every skill). */
  deny: readonly string[];
}

/**
 * The names of the skills an invocation sees, in name order: those installed globally, for its
 * profile, or for its character, that the profile's `skills.visible` lists and `skills.deny` does not.
 */
export function effectiveSkills(installed: readonly InstalledSkillSummary[], ctx: SkillContext): string[] {
  const applies = (scope: SkillScope) =>
    scope.kind === 'global' ||
    (scope.kind === 'profile' && scope.profileId === ctx.profileId) ||
    (scope.kind === 'character' && ctx.characterId !== undefined && scope.characterId === ctx.characterId);
  const visible = (name: string) => ctx.visible.includes('*') || ctx.visible.includes(name);
  const denied = (name: string) => ctx.deny.includes('*') || ctx.deny.includes(name);
  const names = installed
    .filter((s) => s.scopes.some(applies) && visible(s.name) && !denied(s.name))
    .map((s) => s.name);
  return [...new Set(names)].sort();
}

/**
 * Skills a character card carries (tools.md §16.3: `data.extensions.tauritavern.skills`, as
 * TauriTavern writes them): each `inline-files-v1` item as the files of one skill package, its
 * paths relative to the skill. Text is `utf8`/`utf-8`, binary `base64`. Absent or empty: none.
 * Anything malformed is refused with where, so a card never installs half a skill.
 */
export function embeddedSkillFiles(extensions: unknown): Result<PackageFile[][], HearthError> {
  const bad = (why: string) =>
    err(hearthError('skill.invalid', `The card's embedded skills are not valid: ${why}.`));
  const skills = (extensions as { tauritavern?: { skills?: unknown } } | null)?.tauritavern?.skills;
  if (skills === undefined || skills === null) return ok([]);
  const parsed = embeddedSchema.safeParse(skills);
  if (!parsed.success)
    return bad(parsed.error.issues.map((i) => `${i.path.join('.') || 'skills'}: ${i.message}`).join('; '));
  const out: PackageFile[][] = [];
  for (const [n, item] of parsed.data.items.entries()) {
    const files: PackageFile[] = [];
    for (const f of item.files) {
      let bytes: Uint8Array | null;
      if (f.encoding === 'base64') bytes = decodeBase64(f.content);
      else bytes = new TextEncoder().encode(f.content);
      if (!bytes) return bad(`item ${n + 1}, \`${f.path}\`: the content is not base64`);
      files.push({ path: f.path, bytes });
    }
    out.push(files);
  }
  return ok(out);
}

const embeddedSchema = z.object({
  version: z.literal(1),
  items: z
    .array(
      z.object({
        bundleFormat: z.literal('inline-files-v1'),
        source: z.unknown().optional(),
        files: z.array(
          z.object({
            path: z.string(),
            encoding: z.enum(['utf8', 'utf-8', 'base64']),
            content: z.string(),
            mediaType: z.string().optional(),
            sizeBytes: z.number().optional(),
            sha256: z.string().optional(),
          }),
        ),
      }),
    )
    .default(() => []),
  recommended: z.unknown().optional(),
});
