import { BUILTIN_TOOL_NAMES } from '$lib/domain/builtin-tools';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import {
  builtinProfile,
  checkProfileId,
  copyProfile,
  DEFAULT_WRITER_ID,
  exportProfilesJson,
  isBuiltinProfileId,
  migrateProfileDocument,
  newChatProfile,
  PROFILE_ID_MAX_LENGTH,
  problem,
  problemsToError,
  profileScope,
  readImportDocuments,
  resolveProfile,
  SESSION_PROFILE_ID,
  validateProfile,
  type ProfileProblem,
  type ProfileV5,
  type ProfileValidationContext,
} from '$lib/domain/profile';
import { builtinToolId } from '$lib/domain/tool-id';
import { runtimeTools } from '$lib/tools/runtime-tools';
import type { RuntimeContext } from '../context';
import type { ExternalToolRow, ProfileImportResult, ProfileMethods, ProfileSummary } from '../protocol';
import type { Handlers } from '../rpc';

const BUILTIN_TOOL_IDS: ReadonlySet<string> = new Set(BUILTIN_TOOL_NAMES.map((n) => builtinToolId(n)));
/** Parameters of the implemented builtins; the spec table covers the rest. */
const IMPLEMENTED_PARAMETERS: ReadonlyMap<string, readonly string[]> = new Map(
  runtimeTools.chat.map((t) => [t.id as string, Object.keys(t.parameters.shape)]),
);

const readOnlyError = () =>
  new HearthFailure(
    hearthError(
      'agent.profile_builtin_read_only',
      'Default Writer is built in and cannot be changed: copy it and edit the copy.',
    ),
  );

const notFound = (id: string) =>
  new HearthFailure(hearthError('agent.profile_not_found', `There is no profile "${id}".`));

/** Agent profiles: built-ins and the Dexie `profiles` table (runtime.md §3). */
export function profileHandlers(ctx: RuntimeContext): Handlers<ProfileMethods, Record<never, never>> {
  const store = ctx.stores.profiles;

  /** MCP and extension tools as their pages offer them now (from memory, never the network). */
  const externalTools = async (): Promise<ExternalToolRow[]> => {
    const providers = ctx.externalTools;
    await Promise.all(providers.map((p) => p.ready?.()));
    return providers.flatMap((p) =>
      p.list().map((t) => ({
        toolId: t.toolId,
        name: t.nativeName,
        source: t.source as 'mcp' | 'extension',
        origin: t.origin,
        scopes: [...t.facts.scopes],
        ...(t.withheld ? { withheld: t.withheld.message } : {}),
      })),
    );
  };

  /** Tools known now: the builtins and the MCP and extension tools their pages offer. */
  const validationContext = async (previous?: ProfileV5): Promise<ProfileValidationContext> => ({
    knownToolIds: new Set([...BUILTIN_TOOL_IDS, ...(await externalTools()).map((t) => t.toolId)]),
    previouslySelected: new Set(previous?.tools.allow ?? []),
    toolParameters: IMPLEMENTED_PARAMETERS,
  });

  const resolve = async (id: string) => {
    const stored = id === DEFAULT_WRITER_ID ? undefined : await store.get(id);
    return resolveProfile(id, stored);
  };

  const summarize = (profile: ProfileV5, source: 'builtIn' | 'stored'): ProfileSummary => ({
    id: profile.id,
    displayName: profile.displayName,
    ...(profile.description !== undefined ? { description: profile.description } : {}),
    scope: profileScope(profile.id),
    directRunnable: profile.run.directRunnable,
    modelMode: profile.model.mode,
    builtIn: isBuiltinProfileId(profile.id),
    readOnly: source === 'builtIn',
    customized: source === 'stored' && isBuiltinProfileId(profile.id),
  });

  /** Ids in use: the built-ins and every stored row (readable or not). */
  const takenIds = async (): Promise<Set<string>> =>
    new Set<string>([DEFAULT_WRITER_ID, SESSION_PROFILE_ID, ...(await store.ids())]);

  async function save(document: unknown, replaces?: string): Promise<ProfileV5> {
    const decoded = migrateProfileDocument(document);
    if (!decoded.ok) throw new HearthFailure(problemsToError(decoded.error));
    const profile = decoded.value;
    if (profile.id === DEFAULT_WRITER_ID || replaces === DEFAULT_WRITER_ID) throw readOnlyError();
    const renaming = replaces !== undefined && replaces !== profile.id;
    if (renaming && isBuiltinProfileId(replaces))
      throw new HearthFailure(
        hearthError('agent.profile_builtin_read_only', 'The Session profile keeps its id "session".'),
      );
    if (renaming && (await takenIds()).has(profile.id))
      throw new HearthFailure(
        hearthError('agent.profile_exists', `A profile with the id "${profile.id}" already exists.`),
      );
    // An unreadable saved version selected nothing that could be kept.
    const previous = await resolve(replaces ?? profile.id).catch(() => undefined);
    const problems = validateProfile(profile, await validationContext(previous?.profile));
    if (problems.length > 0) throw new HearthFailure(problemsToError(problems));
    await store.put(profile, { replaces: renaming ? replaces : undefined });
    return profile;
  }

  async function importProfiles(text: string): Promise<ProfileImportResult[]> {
    const documents = readImportDocuments(text);
    if (!documents.ok) throw new HearthFailure(documents.error);
    const taken = await takenIds();
    let sessionCustomized = (await store.get(SESSION_PROFILE_ID)) !== undefined;
    const results: ProfileImportResult[] = [];
    for (const [index, document] of documents.value.entries()) {
      const decoded = migrateProfileDocument(document);
      if (!decoded.ok) {
        const id = (document as { id?: unknown } | null)?.id;
        results.push({
          index,
          ok: false,
          ...(typeof id === 'string' ? { id } : {}),
          problems: decoded.error,
        });
        continue;
      }
      const original = decoded.value;
      let id = original.id;
      if (id === SESSION_PROFILE_ID) {
        // An imported Session profile customizes the shared one, but never replaces a customization.
        if (sessionCustomized) {
          const message =
            'The Session profile is already customized: reset it to the built-in before importing another.';
          results.push({
            index,
            ok: false,
            id,
            displayName: original.displayName,
            problems: [problem('agent.profile_exists', 'id', message)],
          });
          continue;
        }
      } else if (taken.has(id) && !checkProfileId(id)) {
        id = uniqueId(id, taken);
      }
      const profile = { ...original, id };
      const problems = validateProfile(profile, await validationContext());
      if (problems.length > 0) {
        results.push({ index, ok: false, id, displayName: profile.displayName, problems });
        continue;
      }
      await store.put(profile);
      taken.add(id);
      if (id === SESSION_PROFILE_ID) sessionCustomized = true;
      results.push({
        index,
        ok: true,
        id,
        displayName: profile.displayName,
        ...(id !== original.id ? { renamedFrom: original.id } : {}),
      });
    }
    return results;
  }

  return {
    methods: {
      async 'profiles.list'() {
        const { profiles, issues } = await store.list();
        const stored = new Map(profiles.map((p) => [p.id, p]));
        const builtIns = [DEFAULT_WRITER_ID, SESSION_PROFILE_ID].map((id) => {
          const r = resolveProfile(id, stored.get(id))!;
          return summarize(r.profile, r.source);
        });
        const others = profiles
          .filter((p) => !isBuiltinProfileId(p.id))
          .sort((a, b) => a.displayName.localeCompare(b.displayName) || (a.id < b.id ? -1 : 1))
          .map((p) => summarize(p, 'stored'));
        return { profiles: [...builtIns, ...others], issues };
      },

      async 'profiles.get'({ id }) {
        const r = await resolve(id);
        if (!r) throw notFound(id);
        return {
          profile: r.profile,
          summary: summarize(r.profile, r.source),
          problems: validateProfile(r.profile, await validationContext(r.profile)),
          externalTools: await externalTools(),
        };
      },

      async 'profiles.create'({ displayName }) {
        const name = displayName.trim() || 'New profile';
        const profile = newChatProfile(uniqueId(slug(name), await takenIds()), name);
        await store.put(profile);
        return profile;
      },

      'profiles.save': ({ profile, replaces }) => save(profile, replaces),

      async 'profiles.copy'({ id }) {
        if (id === SESSION_PROFILE_ID)
          throw new HearthFailure(
            hearthError(
              'agent.profile_copy_unsupported',
              'Every session shares the Session profile: customize it instead of copying it.',
            ),
          );
        const r = await resolve(id);
        if (!r) throw notFound(id);
        const copy = copyProfile(
          r.profile,
          uniqueId(`${id}-copy`, await takenIds()),
          `${r.profile.displayName} (copy)`,
        );
        await store.put(copy);
        return copy;
      },

      async 'profiles.delete'({ id }) {
        if (id === DEFAULT_WRITER_ID) throw readOnlyError();
        await store.delete(id);
      },

      async 'profiles.import'({ text }) {
        return { items: await importProfiles(text) };
      },

      async 'profiles.export'({ ids }) {
        const profiles: ProfileV5[] = [];
        for (const id of ids) {
          const r = await resolve(id);
          if (!r) throw notFound(id);
          profiles.push(r.profile);
        }
        const fileName = profiles.length === 1 ? `${profiles[0]!.id}.json` : 'hearth-profiles.json';
        return { fileName, text: exportProfilesJson(profiles) };
      },

      async 'profiles.validate'({ text, original }) {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch (e) {
          const message = `This is not valid JSON: ${e instanceof Error ? e.message : String(e)}`;
          return { problems: [problem('agent.profile_invalid_json', '', message)] };
        }
        const decoded = migrateProfileDocument(json);
        if (!decoded.ok) return { problems: decoded.error };
        const profile = decoded.value;
        const previous = original === undefined ? undefined : await resolve(original);
        const problems: ProfileProblem[] = [];
        if (original !== undefined && profile.id !== original) {
          if (isBuiltinProfileId(original))
            problems.push(
              problem('agent.profile_builtin_read_only', 'id', `This profile keeps its id "${original}".`),
            );
          else if ((await takenIds()).has(profile.id))
            problems.push(
              problem('agent.profile_exists', 'id', `A profile with the id "${profile.id}" already exists.`),
            );
        }
        problems.push(...validateProfile(profile, await validationContext(previous?.profile)));
        return { problems, profile };
      },
    },
    streams: {},
  };
}

/** A readable id from a name: `My Writer!` → `my-writer`. */
export const slug = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 64) || 'profile';

/** `base`, else `base-2`, `base-3`, … : the first id not taken, within the length limit. */
export function uniqueId(base: string, taken: ReadonlySet<string>): string {
  const root = base.slice(0, PROFILE_ID_MAX_LENGTH);
  if (!taken.has(root) && builtinProfile(root) === undefined) return root;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${root.slice(0, PROFILE_ID_MAX_LENGTH - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
