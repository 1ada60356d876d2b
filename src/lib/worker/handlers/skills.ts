import { zipSync } from 'fflate';
import { looksLikeZip, readArchive } from '$lib/adapters/packages/archive';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { PackageFile } from '$lib/domain/package-files';
import { embeddedSkillFiles, SKILL_PACKAGE_LIMITS } from '$lib/domain/skill';
import { findProfile } from '$lib/runtime/agent-directory';
import type { RuntimeContext } from '../context';
import type { PackageUpload, SkillMethods } from '../protocol';
import { Transfer, type Handlers } from '../rpc';

/** The Skills page. */
export function skillHandlers(ctx: RuntimeContext): Handlers<SkillMethods, Record<never, never>> {
  const { skills } = ctx;
  /** The skill packages a character's card carries. */
  const embedded = async (characterId: string) => {
    const character = await ctx.stores.characters.get(characterId);
    if (!character)
      throw new HearthFailure(hearthError('character.not_found', 'This character no longer exists.'));
    const files = embeddedSkillFiles(character.card.extensions);
    if (!files.ok) throw new HearthFailure(files.error);
    return files.value;
  };
  return {
    methods: {
      'skills.list': () => skills.list(),
      'skills.inspect': async ({ files }) => skills.inspect(unpacked(files)),
      'skills.install': async ({ files, scope, source, decisions }) =>
        skills.install(unpacked(files), { scope, source, ...(decisions ? { decisions } : {}) }),
      'skills.setScopes': ({ name, scopes }) => skills.setScopes(name, scopes),
      'skills.read': async ({ name, path }) => {
        const bytes = await skills.read(name, path);
        return new Transfer({ path, bytes }, [bytes.buffer as ArrayBuffer]);
      },
      'skills.export': async ({ name }) => {
        const files = await skills.files(name);
        const zip = zipSync(Object.fromEntries(files.map((f) => [`${name}/${f.path}`, f.bytes])), {
          level: 6,
        });
        return new Transfer({ fileName: `${name}.zip`, bytes: zip }, [zip.buffer as ArrayBuffer]);
      },
      'skills.remove': ({ name }) => skills.remove(name),
      'skills.embedded': async ({ characterId }) => {
        const inspections = [];
        for (const files of await embedded(characterId)) inspections.push(...(await skills.inspect(files)));
        return inspections;
      },
      'skills.installEmbedded': async ({ characterId, decisions }) => {
        const installed = [];
        for (const files of await embedded(characterId)) {
          installed.push(
            ...(await skills.install(files, {
              scope: { kind: 'character', characterId },
              source: `character:${characterId}`,
              ...(decisions ? { decisions } : {}),
            })),
          );
        }
        return installed;
      },
      'skills.effective': async ({ profileId, characterId }) => {
        const profile = await findProfile(ctx.stores.profiles, profileId);
        if (!profile) return [];
        const effective = await skills.effective({
          profileId,
          ...(characterId ? { characterId } : {}),
          visible: profile.skills.visible,
          deny: profile.skills.deny,
        });
        return effective.map((s) => s.name);
      },
    },
    streams: {},
  };
}

/** One zip (`.zip`, `.skill`) is its files, checked before inflating; anything else is already files. */
function unpacked(files: PackageUpload): PackageFile[] {
  if (files.length !== 1 || !looksLikeZip(files[0]!.bytes)) return files;
  const read = readArchive(files[0]!.bytes, SKILL_PACKAGE_LIMITS);
  if (!read.ok) throw new HearthFailure(read.error);
  return read.value;
}
